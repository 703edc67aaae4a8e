"""A run's max_retries reaches the client of its calls: on a provider that answers 500 to
everything, max_retries=0 makes exactly one attempt per cell and max_retries=2 three; a run
that sets none takes its project's default."""

from __future__ import annotations

from sqlalchemy import select

from assay.core.projects.models import Project
from assay.core.runs.models import Run
from assay.extensions import db
from assay.providers.fake import FakeProviderThread
from assay.settings import Settings
from tests.engine.test_providers_engine import configure, fake, outputs, run, setup, stats
from tests.factories import Factory

__all__ = ["fake"]  # the fixture, imported for these tests


def _all_500(fake: FakeProviderThread) -> None:
    configure(fake, fault_rate=1.0, faults=["500"], latency_ms=1)


def test_max_retries_zero_makes_one_attempt_and_two_make_three(
        factory: Factory, settings: Settings, fake: FakeProviderThread) -> None:
    s = setup(factory, settings, fake, cases=1)
    for retries, attempts in ((0, 1), (2, 3)):
        _all_500(fake)
        run_id = run(s, max_retries=retries, cache=False)
        [cell] = outputs(run_id)
        assert cell.status == "failed" and cell.error_class == "server_error"
        assert cell.attempts == attempts
        assert stats(fake)["total"] == attempts  # what the provider actually received


def test_a_run_without_max_retries_takes_the_project_default(
        factory: Factory, settings: Settings, fake: FakeProviderThread) -> None:
    s = setup(factory, settings, fake, cases=1)
    with db.factory() as session:
        project = session.get(Project, s.project.id)
        assert project is not None
        project.settings = {**(project.settings or {}), "default_max_retries": 1}
        session.commit()
        session.refresh(project)
        s.project = project  # run() merges this copy back: it must carry the default
    _all_500(fake)
    run_id = run(s, cache=False)
    with db.factory() as session:
        settings_row = session.scalar(select(Run.settings).where(Run.id == run_id))
    assert settings_row is not None and settings_row["max_retries"] == 1
    [cell] = outputs(run_id)
    assert cell.attempts == 2 and stats(fake)["total"] == 2
