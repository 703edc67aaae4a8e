"""Numbers that are true (issue 14, C9/C10): a cancelled or stopped run never looks
complete, and scoring failures are failures. Cells are written directly (Factory.planned_run)
so each test states exactly which cells ended how."""

from __future__ import annotations

from typing import Any

import pytest

from assay.core.projects.models import Project
from assay.core.runs.models import RunStatus
from tests.api.test_run_results import base, get_json, ok, set_run, set_target, skipped
from tests.factories import Factory, Session


@pytest.fixture
def owner(factory: Factory) -> Any:
    return factory.user()


@pytest.fixture
def project(factory: Factory, owner: Any) -> Project:
    return factory.project(owner, "Truth")


@pytest.fixture
def browser(factory: Factory, owner: Any) -> Session:
    return factory.login(owner)


def _cancelled_at_a_fifth(factory: Factory, owner: Any, project: Project) -> Any:
    """5 cases x 2 targets: 2 cells succeeded, then the run was cancelled (8 skipped)."""
    planned = factory.planned_run(owner, project, cases=5, targets=2)
    ok(planned, 0, 0)
    ok(planned, 0, 1)
    for case in range(1, 5):
        for target in range(2):
            skipped(planned, case, target, "cancelled")
    for target_id in planned.target_ids:
        set_target(target_id, succeeded=1, skipped=4)
    set_run(planned.run_id, status=RunStatus.cancelled, succeeded=2, skipped=8,
            error="Cancelled by someone")
    return planned


def test_progress_of_a_cancelled_run_counts_done_without_skipped_cells(
        factory: Factory, owner: Any, project: Project, browser: Session) -> None:
    planned = _cancelled_at_a_fifth(factory, owner, project)
    progress = get_json(browser, base(project, planned.run_id) + "/progress")
    assert (progress["status"], progress["total"], progress["done"]) == ("cancelled", 10, 2)
    assert (progress["succeeded"], progress["failed"], progress["skipped"]) == (2, 0, 8)


def test_summary_success_rate_counts_skipped_cells_as_not_succeeded(
        factory: Factory, owner: Any, project: Project, browser: Session) -> None:
    planned = _cancelled_at_a_fifth(factory, owner, project)
    summary = get_json(browser, base(project, planned.run_id) + "/summary")
    assert summary["success_rate"] == pytest.approx(0.2)
    assert [t["success_rate"] for t in summary["targets"]] == [pytest.approx(0.2)] * 2
    assert [(t["succeeded"], t["skipped"]) for t in summary["targets"]] == [(1, 4)] * 2
