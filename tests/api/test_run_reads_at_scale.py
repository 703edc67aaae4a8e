"""What keeps the run page's reads fast at a million outputs, checked for its answers: the
outputs page's totals from the run's counters or a capped count (an estimate, said so, past
the cap on PostgreSQL), the deferred-join page, the unfiltered grid read from the version's
cases, and case numbers from the per-process cache of immutable versions."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import update

from assay.core import pagination
from assay.core.projects.models import Project
from assay.core.runs import case_numbers as numbering
from assay.core.runs.models import CellStatus, Output, Run, RunTarget
from assay.extensions import db
from tests.factories import Factory, PlannedRun, Session


@pytest.fixture
def owner(factory: Factory) -> Any:
    return factory.user()


@pytest.fixture
def project(factory: Factory, owner: Any) -> Project:
    return factory.project(owner, "Scale")


@pytest.fixture
def browser(factory: Factory, owner: Any) -> Session:
    return factory.login(owner)


def _outputs(browser: Session, project: Project, run_id: int, **query: Any) -> Any:
    reply = browser.get(f"/api/projects/{project.id}/runs/{run_id}/outputs", query_string=query)
    assert reply.status_code == 200, reply.json
    return reply.json


def _finish(planned: PlannedRun, failed_cases: int) -> None:
    """The first `failed_cases` cases fail with a timeout, the rest succeed; the run's and
    targets' counters say so, as the engine keeps them."""
    with db.factory() as session:
        failing = planned.case_ids[:failed_cases]
        session.execute(update(Output).where(Output.run_id == planned.run_id)
                        .values(status=CellStatus.succeeded, text="ok"))
        session.execute(update(Output).where(Output.run_id == planned.run_id,
                                             Output.case_id.in_(failing))
                        .values(status=CellStatus.failed, error_class="timeout", text=None))
        per_target_failed = failed_cases
        per_target_ok = len(planned.case_ids) - failed_cases
        session.execute(update(RunTarget).where(RunTarget.run_id == planned.run_id).values(
            succeeded=per_target_ok, failed=per_target_failed))
        targets = len(planned.target_ids)
        session.execute(update(Run).where(Run.id == planned.run_id).values(
            succeeded=per_target_ok * targets, failed=per_target_failed * targets))
        session.commit()


def test_totals_come_from_counters_or_a_count_and_match_the_rows(
        factory: Factory, owner: Any, project: Project, browser: Session) -> None:
    planned = factory.planned_run(owner, project, cases=6, targets=2)
    _finish(planned, failed_cases=2)
    first = planned.target_ids[0]
    for query, expected in (({}, 12), ({"status": "succeeded"}, 8), ({"status": "failed"}, 4),
                            ({"status": "pending"}, 0), ({"error_class": "timeout"}, 4),
                            ({"error_class": "rate_limited"}, 0),
                            ({"target_id": first, "status": "failed"}, 2),
                            ({"target_id": first}, 6)):
        body = _outputs(browser, project, planned.run_id, page_size=100, **query)
        assert body["total"] == len(body["items"]) == expected, query
        assert body["total_exact"] is True, query
    timeouts = _outputs(browser, project, planned.run_id, error_class="timeout")["items"]
    assert {o["case_id"] for o in timeouts} == set(planned.case_ids[:2])
    assert {o["status"] for o in timeouts} == {"failed"}


def test_past_the_cap_a_count_is_postgresqls_estimate_and_says_so(
        factory: Factory, owner: Any, project: Project, browser: Session,
        monkeypatch: pytest.MonkeyPatch) -> None:
    planned = factory.planned_run(owner, project, cases=5, targets=2)  # 10 pending cells
    monkeypatch.setattr(pagination, "COUNT_CAP", 3)
    body = _outputs(browser, project, planned.run_id, status="pending", page_size=4)
    assert len(body["items"]) == 4
    if db.engine.dialect.name == "postgresql":
        assert body["total_exact"] is False and body["total"] >= 4  # the planner's guess
    else:  # SQLite has no estimate: it counts
        assert body["total_exact"] is True and body["total"] == 10
    assert _outputs(browser, project, planned.run_id, status="pending",
                    page=3, page_size=4)["items"][-1]["case_id"] == planned.case_ids[-1]


def test_pages_follow_the_index_order_to_the_last_row(
        factory: Factory, owner: Any, project: Project, browser: Session) -> None:
    planned = factory.planned_run(owner, project, cases=7, targets=3, repeats=2)
    every = _outputs(browser, project, planned.run_id, page_size=100)["items"]
    keys = [(o["case_id"], o["target_id"], o["repeat"]) for o in every]
    assert keys == sorted(keys) and len(keys) == 42
    pages = [_outputs(browser, project, planned.run_id, page=n, page_size=10)["items"]
             for n in range(1, 6)]
    assert [o["id"] for page in pages for o in page] == [o["id"] for o in every]
    assert _outputs(browser, project, planned.run_id, page=9, page_size=10)["items"] == []


def test_the_unfiltered_grid_is_the_versions_cases_in_order_either_way(
        factory: Factory, owner: Any, project: Project, browser: Session) -> None:
    planned = factory.planned_run(owner, project, cases=5, targets=2)
    grid = f"/api/projects/{project.id}/runs/{planned.run_id}/grid"
    body = browser.get(grid, query_string={"limit": 2, "offset": 1}).json
    assert body["total"] == 5
    assert [r["case_id"] for r in body["rows"]] == planned.case_ids[1:3]
    assert [r["number"] for r in body["rows"]] == [2, 3]
    backwards = browser.get(grid, query_string={"order": "desc"}).json["rows"]
    assert [r["case_id"] for r in backwards] == planned.case_ids[::-1]
    reply = browser.get(grid, query_string={"offset": 5})
    assert reply.status_code == 422 and "offset" in reply.json["errors"]["query"]


def test_case_numbers_are_kept_per_version_and_match_a_fresh_ranking(
        factory: Factory, owner: Any, project: Project) -> None:
    planned = factory.planned_run(owner, project, cases=4, targets=1)
    with db.factory() as session:
        version_id = session.get(Run, planned.run_id).dataset_version_id  # type: ignore[union-attr]
        numbering._kept.clear()
        first = numbering.case_numbers(session, version_id, planned.case_ids)
        assert any(key[0] == version_id for key in numbering._kept)
        again = numbering.case_numbers(session, version_id, planned.case_ids[2:])
    assert first == {case_id: n for n, case_id in enumerate(planned.case_ids, 1)}
    assert again == {planned.case_ids[2]: 3, planned.case_ids[3]: 4}
