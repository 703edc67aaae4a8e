"""The project's own alert threshold decides when spend against the project cap raises a
run's budget alert (not the run's threshold, which is for the run's own cap)."""

from __future__ import annotations

import json

from sqlalchemy import update

from assay.core.projects.models import Project
from assay.core.runs.models import Run, RunStatus
from assay.extensions import db
from assay.jobs.runs import execute_run
from assay.providers.fake import FakeProviderThread
from assay.runtime import current
from assay.settings import Settings
from tests.engine.test_budget import run
from tests.engine.test_providers_engine import configure, fake, setup
from tests.factories import Factory

__all__ = ["fake"]  # the fixture, imported for these tests


def _alerts(run_id: int) -> int:
    events = current().redis.xrange(current().events_key(run_id))
    return [json.loads(f[b"data"])["type"] for _, f in events].count("run.budget_alert")


def test_the_project_threshold_raises_the_alert_on_the_project_cap(
        factory: Factory, settings: Settings, fake: FakeProviderThread) -> None:
    configure(fake, latency_ms=0)
    s = setup(factory, settings, fake, cases=6)
    for threshold, alerts in ((0.0001, 1), (1.0, 0)):
        with db.factory() as session:
            session.execute(update(Project).where(Project.id == s.project.id).values(
                budget_micros=100_000, spent_micros=0, alert_threshold=threshold))
            session.commit()
        run_id = run(s, execute=False, cache=False)  # no run cap; its threshold stays 0.8
        execute_run(run_id)
        with db.factory() as session:
            found = session.get(Run, run_id)
            assert found is not None and found.status == RunStatus.completed
            assert found.alert_threshold == 0.8 and found.spent_micros > 0
            assert (found.alerted_at is not None) == bool(alerts)
        assert _alerts(run_id) == alerts
