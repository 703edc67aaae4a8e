"""What an admin sets in project settings is what runs (issue 31 item 6): every writable
settings field is PATCHed through the HTTP API, then runs that leave the setting unset are
run by a real RQ worker on the fake provider, and each field is proved by what the engine
did (the cap that stopped the run, the alert it raised, the calls in flight, the timeout
and retries of each call, whether the code sandbox scored), each against a control at
another value. Shown-only fields (name, description) and those proved by the arena's own
tests say so with their reason.

A writable settings field without a row here fails the coverage test."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from typing import Any

import pytest
from sqlalchemy import select

from assay.api.projects.settings import SettingsFields
from assay.core.projects.models import Project
from assay.extensions import db
from assay.providers.fake import FakeProviderThread
from assay.settings import Settings
from tests.engine.test_providers_engine import configure, fake
from tests.engine.test_run_fields import Lab, make_lab
from tests.factories import Factory

__all__ = ["fake"]  # the fixture, imported for these tests

CODE = "```python\ndef add(a, b):\n    return a + b\n```"


@pytest.fixture
def lab(factory: Factory, settings: Settings, fake: FakeProviderThread,
        worker: subprocess.Popen[bytes]) -> Lab:
    return make_lab(factory, settings, fake, cases=4, price=10_000_000)


def patch(lab: Lab, **changes: Any) -> dict[str, Any]:
    url = lab.url("/settings")
    current = lab.browser.get(url)
    reply = lab.browser.patch(url, json=changes,
                              headers={"If-Match": current.headers.get("ETag", "")})
    assert reply.status_code == 200, reply.json
    stored = dict(reply.json or {})
    assert {k: stored[k] for k in changes} == changes
    return stored


def _budget(lab: Lab, fake: FakeProviderThread) -> None:
    configure(fake, latency_ms=1)
    patch(lab, budget_micros=500)
    capped = lab.run(cache=False, concurrency=1)
    assert capped.run.status == "budget_exceeded" and capped.run.budget_micros is None
    assert len(capped.requests) < 4
    with db.factory() as session:
        project = session.get(Project, lab.project_id)
        assert project is not None and project.spent_micros <= 500
    patch(lab, budget_micros=None)
    assert lab.run(cache=False).run.status == "completed"


def _alert(lab: Lab, fake: FakeProviderThread) -> None:
    configure(fake, latency_ms=1)
    patch(lab, budget_micros=10_000, alert_threshold=1.0)
    quiet = lab.run(cache=False)
    assert quiet.run.status == "completed" and quiet.run.alerted_at is None
    spent = quiet.run.spent_micros
    # the project's spend now crosses 5% of its cap: the next run that adds to it alerts
    assert 0.05 * 10_000 < spent * 2 < 10_000
    patch(lab, alert_threshold=0.05)
    alerted = lab.run(cache=False)
    assert alerted.run.alerted_at is not None and alerted.run.budget_micros is None


def _concurrency(lab: Lab, fake: FakeProviderThread) -> None:
    configure(fake, latency_ms=300)
    patch(lab, default_concurrency=1)
    one = lab.run(cache=False, repeats=2)
    assert one.run.settings["concurrency"] == 1 and one.stats["peak_concurrency"] == 1
    patch(lab, default_concurrency=None)
    assert lab.run(cache=False, repeats=2).stats["peak_concurrency"] > 1


def _timeout(lab: Lab, fake: FakeProviderThread) -> None:
    configure(fake, latency_ms=2500)
    patch(lab, default_timeout_s=1, default_max_retries=0)
    slow = lab.run(cache=False)
    assert {(o.status, o.error_class) for o in slow.outputs} == {("failed", "timeout")}
    patch(lab, default_timeout_s=10)
    assert {o.status for o in lab.run(cache=False).outputs} == {"succeeded"}


def _retries(lab: Lab, fake: FakeProviderThread) -> None:
    configure(fake, fault_rate=1.0, faults=["500"], latency_ms=1)
    patch(lab, default_max_retries=0)
    none = lab.run(cache=False)
    assert len(none.requests) == 4 and {o.attempts for o in none.outputs} == {1}
    patch(lab, default_max_retries=1)
    one = lab.run(cache=False)
    assert len(one.requests) == 8 and {o.attempts for o in one.outputs} == {2}


def _code_execution(lab: Lab, fake: FakeProviderThread) -> None:
    configure(fake, latency_ms=1, scripts=[{"model": "fake-fast", "pattern": "",
                                            "reply": CODE}])
    scorer = lab.post("/scorers", {"name": "Runs code", "kind": "code_execution",
                                   "params": {"tests": [{"call": "add(1, 2)",
                                                         "expected": 3}]}})
    # not opted in: the scorer may be written, but the sandbox runs nothing
    kept_out = lab.run(cache=False, scorer_ids=[scorer["id"]])
    assert kept_out.scores and all(s.value is None and s.error and "settings" in s.error
                                   for s in kept_out.scores), [s.error for s in kept_out.scores]
    patch(lab, code_execution=True)
    allowed = lab.run(cache=False, scorer_ids=[scorer["id"]])
    assert allowed.scores and all(s.passed and s.error is None for s in allowed.scores)


ROWS: dict[str, Callable[[Lab, FakeProviderThread], None]] = {
    "budget_micros": _budget,
    "alert_threshold": _alert,
    "default_concurrency": _concurrency,
    "default_timeout_s": _timeout,
    "default_max_retries": _retries,
    "code_execution": _code_execution,
}
SHOWN_ONLY = {
    "name": "the project's title in lists and the header; no call depends on it",
    "description": "shown on the project page; no call depends on it",
}
ELSEWHERE = {
    "arena_allowance_micros": "EvalArena judge attempts of members below editor: "
                              "tests/api/test_arena_allowance.py and test_arena_judge.py",
}


@pytest.mark.parametrize("path", list(ROWS))
def test_each_setting_changes_what_the_engine_does(
        lab: Lab, fake: FakeProviderThread, path: str) -> None:
    ROWS[path](lab, fake)


def test_every_settings_field_has_a_row() -> None:
    assert set(SettingsFields().fields) == set(ROWS) | set(SHOWN_ONLY) | set(ELSEWHERE)


def test_the_settings_runs_read_are_the_ones_stored(lab: Lab) -> None:
    """The row the engine reads (projects.settings) holds what the PATCH answered."""
    patch(lab, default_concurrency=3, default_timeout_s=7, default_max_retries=4)
    with db.factory() as session:
        stored = session.scalar(select(Project.settings).where(Project.id == lab.project_id))
    assert stored is not None and (stored["default_concurrency"], stored["default_timeout_s"],
                                   stored["default_max_retries"]) == (3, 7, 4)
