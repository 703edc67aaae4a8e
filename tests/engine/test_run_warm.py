"""What a stopped run's readers keep (core/runs/cache.py) is filled by a job before anyone
reads it (core/runs/warm.py): when the run ends in a real worker, and again when a
rescoring job or a reviewer's score changes its scores. The entries carry the run's
current stamp, are the ones the readers ask for (same keys), and the reads give exactly
what they give with nothing kept. A warm job that fails, or that cannot be enqueued, leaves
the run as it ended and the reads right."""

from __future__ import annotations

import logging
import subprocess
import time
from typing import Any

import pytest
from flask import Flask
from rq import Queue
from sqlalchemy import delete, select

from assay.api.kept_reads import READS
from assay.core import stats
from assay.core.base import utcnow
from assay.core.reports import uncertainty
from assay.core.runs import cache
from assay.core.runs import warm as warm_core
from assay.core.runs.cache import RunCache
from assay.core.runs.models import Output, RunStatus
from assay.core.scoring.models import ScorerVersion
from assay.core.ttl_cache import TTLCache
from assay.extensions import db
from assay.jobs import queues
from assay.jobs import runs as run_jobs
from assay.jobs.scoring import score_run
from assay.jobs.warm import warm_run
from assay.providers.fake import FakeProviderThread
from assay.runtime import current
from assay.settings import Settings
from tests.api.stats_data import make_scorer, new_version, pin
from tests.engine.test_providers_engine import Setup, configure, fake, run, setup, the_run  # noqa: F401
from tests.factories import Factory, Session

CASES = 6


@pytest.fixture(autouse=True)
def no_kept_bodies(app: Flask, monkeypatch: pytest.MonkeyPatch) -> None:
    """The entries under study are the database's (run_caches): the API process's memory
    of its answers (api/kept_reads.py) would answer before them."""
    monkeypatch.setitem(app.extensions, READS, TTLCache[Any](0))


def _scorer_of(version_id: int) -> int:
    with db.factory() as session:
        version = session.get(ScorerVersion, version_id)
        assert version is not None
        return version.scorer_id


def _kept(run_id: int) -> dict[str, str]:
    with db.factory() as session:
        return dict(session.execute(select(RunCache.key, RunCache.stamp)
                                    .where(RunCache.run_id == run_id)).all())


def _written(run_id: int) -> dict[str, Any]:
    with db.factory() as session:
        return dict(session.execute(select(RunCache.key, RunCache.created_at)
                                    .where(RunCache.run_id == run_id)).all())


def _forget(run_id: int) -> None:
    with db.factory() as session:
        session.execute(delete(RunCache).where(RunCache.run_id == run_id))
        session.commit()


def _stamp(run_id: int) -> str:
    found = cache.stamp(the_run(run_id))
    assert found is not None
    return found


def _valid(run_id: int) -> dict[str, str]:
    """The run's entries with its current stamp (a key no reader asks any more, such as
    the statistics of fewer scorers, stays with its old stamp)."""
    stamp = cache.stamp(the_run(run_id))  # None: still running
    return {key: found for key, found in _kept(run_id).items() if found == stamp}


def _warmed(run_id: int, wanted: set[str], timeout_s: float = 60) -> dict[str, str]:
    """The run's valid entries once the worker has filled `wanted`."""
    deadline = time.monotonic() + timeout_s
    while True:
        kept = _valid(run_id)
        if wanted <= set(kept):
            return kept
        stamp = cache.stamp(the_run(run_id))
        assert time.monotonic() < deadline, f"{stamp} {sorted(kept.items())} {sorted(wanted)}"
        time.sleep(0.1)


def _get(browser: Session, url: str, **query: Any) -> dict[str, Any]:
    reply = browser.get(url, query_string=query)
    assert reply.status_code == 200, reply.json
    body: dict[str, Any] = reply.json
    return body


def _reads(browser: Session, s: Setup, run_id: int, scorer_ids: list[int]
           ) -> dict[str, Any]:
    """What the run page and the reports read first, for each scorer."""
    base = f"/api/projects/{s.project.id}"
    today = utcnow().date().isoformat()
    reads: dict[str, Any] = {
        "statistics": _get(browser, f"{base}/runs/{run_id}/statistics"),
        "summary": _get(browser, f"{base}/runs/{run_id}/summary"),
        "grid": _get(browser, f"{base}/runs/{run_id}/grid", sort="latency")["total"]}
    for scorer_id in scorer_ids:
        for versions in ("all", "latest"):
            reads[f"trend {scorer_id} {versions}"] = _get(
                browser, f"{base}/reports/trend", scorer_id=scorer_id, versions=versions)
            reads[f"leaderboard {scorer_id} {versions}"] = _get(
                browser, f"{base}/reports/leaderboard", scorer_id=scorer_id,
                versions=versions)
            reads[f"week {scorer_id} {versions}"] = _get(
                browser, f"{base}/reports/leaderboard", scorer_id=scorer_id,
                versions=versions, date_from=today)
    return reads


def _same_as_computed(browser: Session, s: Setup, run_id: int, scorer_ids: list[int],
                      warmed: dict[str, str]) -> dict[str, Any]:
    """The reads from the warmed entries equal the reads with nothing kept, and those
    reads keep exactly the entries the warm job filled."""
    written = _written(run_id)
    kept = _reads(browser, s, run_id, scorer_ids)
    assert _written(run_id) == written  # read, nothing computed again
    _forget(run_id)
    assert _reads(browser, s, run_id, scorer_ids) == kept
    assert _kept(run_id) == warmed  # the readers' keys are the warm job's
    return kept


def _two_version_run(factory: Factory, settings: Settings, provider: FakeProviderThread,
                     owner: Any) -> tuple[Setup, int, int, int, int]:
    """A completed run scored by version 2 of a reference check (version 1 is older)."""
    configure(provider, latency_ms=0, fault_rate=0.0)
    s = setup(factory, settings, provider, cases=CASES, owner=owner)
    v1 = make_scorer(s.project.id, "icontains", name="Mentions number 1")
    v2 = new_version(s.project.id, v1)
    scorer_id = _scorer_of(v2)
    run_id = run(s, execute=False, scorer_ids=(scorer_id,))
    return s, run_id, scorer_id, v1, v2


def test_a_run_that_ends_is_warmed_by_the_worker_and_reads_as_computed(
        factory: Factory, settings: Settings, fake: FakeProviderThread,  # noqa: F811
        worker: subprocess.Popen[bytes]) -> None:
    owner = factory.user()
    browser = factory.login(owner)
    s, run_id, scorer_id, v1, v2 = _two_version_run(factory, settings, fake, owner)
    queues.enqueue_run(current(), run_id)  # the worker runs it, then warms it
    wanted = {f"statistics:{v2}", "grid-rows:", "summary:sent", f"trend:{v1},{v2}", f"trend:{v2}",
              f"range-sums:{v1},{v2}", f"range-sums:{v2}"}
    warmed = _warmed(run_id, wanted)
    assert set(warmed) == wanted
    assert the_run(run_id).status == RunStatus.completed
    reads = _same_as_computed(browser, s, run_id, [scorer_id], warmed)
    [point] = reads[f"trend {scorer_id} all"]["runs"]
    assert point["score"]["n_values"] == CASES and reads["grid"] == CASES

    # a rescoring job: another scorer scores the run, the stamp moves, the job refills
    check = make_scorer(s.project.id, "icontains", name="Says question")
    pin(run_id, check)
    before = _stamp(run_id)
    queues.enqueue_scoring(current(), run_id)
    check_id = _scorer_of(check)
    wanted = {f"statistics:{v2},{check}", "grid-rows:", "summary:sent", f"trend:{v1},{v2}",
              f"trend:{v2}",
              f"range-sums:{v1},{v2}", f"range-sums:{v2}", f"trend:{check}",
              f"range-sums:{check}"}
    warmed = _warmed(run_id, wanted)
    assert set(warmed) == wanted and _stamp(run_id) != before
    _same_as_computed(browser, s, run_id, [scorer_id, check_id], warmed)

    # a reviewer's score: the same
    manual = make_scorer(s.project.id, "manual", name="Reviewer")
    before = _stamp(run_id)
    first = min(o.id for o in _outputs(run_id))
    url = f"/api/projects/{s.project.id}/runs/{run_id}/outputs/{first}/scores/{manual}"
    assert browser.request("PUT", url, json={"rating": 4}).status_code == 200
    wanted = {*(wanted - {f"statistics:{v2},{check}"}), f"statistics:{v2},{check},{manual}",
              f"trend:{manual}", f"range-sums:{manual}"}
    warmed = _warmed(run_id, wanted)
    assert set(warmed) == wanted and _stamp(run_id) != before
    reads = _same_as_computed(browser, s, run_id, [scorer_id, check_id, _scorer_of(manual)],
                              warmed)
    [point] = reads[f"trend {_scorer_of(manual)} all"]["runs"]
    assert point["score"]["mean"] == pytest.approx(0.75)  # a 4 of 1-5


def _outputs(run_id: int) -> list[Output]:
    with db.factory() as session:
        return list(session.scalars(select(Output).where(Output.run_id == run_id)))


def test_warm_jobs_enqueued_in_a_burst_coalesce(
        factory: Factory, monkeypatch: pytest.MonkeyPatch) -> None:
    enqueued: list[tuple[Any, ...]] = []
    monkeypatch.setattr(Queue, "enqueue",
                        lambda _queue, *args, **_: enqueued.append(args))
    rt = current()
    assert queues.enqueue_warm(rt, 7) and queues.enqueue_warm(rt, 8)
    assert not queues.enqueue_warm(rt, 7)  # one waiting reads the newest state anyway
    assert enqueued == [("assay.jobs.warm.warm_run", 7), ("assay.jobs.warm.warm_run", 8)]
    warm_run(7)  # started (no run 7: nothing to keep): the next change enqueues again
    assert queues.enqueue_warm(rt, 7) and len(enqueued) == 3


def test_a_warm_job_that_fails_leaves_the_run_ended_and_the_reads_right(
        factory: Factory, settings: Settings, fake: FakeProviderThread,  # noqa: F811
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    owner = factory.user()
    browser = factory.login(owner)
    s, run_id, scorer_id, v1, v2 = _two_version_run(factory, settings, fake, owner)
    enqueued: list[int] = []  # a live worker would take the job: this test runs it
    monkeypatch.setattr(run_jobs, "enqueue_warm", lambda _rt, found: enqueued.append(found))
    run_jobs.execute_run(run_id)
    assert enqueued == [run_id]

    def broken(*_: Any) -> None:
        raise RuntimeError("the trend broke")  # or the leaderboard, below

    monkeypatch.setattr(warm_core.trend, "warm_point", broken)
    with caplog.at_level(logging.ERROR, logger="assay.jobs.warm"):
        assert warm_run(run_id) is False
    assert "not kept ahead" in caplog.text and "the trend broke" in caplog.text
    assert _kept(run_id) == {}  # nothing half-filled
    assert the_run(run_id).status == RunStatus.completed
    monkeypatch.undo()
    reads = _reads(browser, s, run_id, [scorer_id])  # computed on the miss
    _forget(run_id)
    assert _reads(browser, s, run_id, [scorer_id]) == reads
    _forget(run_id)
    monkeypatch.setattr(warm_core, "leaderboard", broken)  # its intervals only: apart
    with caplog.at_level(logging.ERROR, logger="assay.jobs.warm"):
        assert warm_run(run_id) is True  # and the next job fills what they keep
    assert "the leaderboard's intervals were not drawn ahead" in caplog.text
    assert set(_valid(run_id)) == {f"statistics:{v2}", "grid-rows:", "summary:sent",
                                   f"trend:{v1},{v2}", f"trend:{v2}", f"range-sums:{v1},{v2}",
                                   f"range-sums:{v2}"}


def test_a_warm_job_that_cannot_be_enqueued_leaves_the_run_ended(
        factory: Factory, settings: Settings, fake: FakeProviderThread,  # noqa: F811
        monkeypatch: pytest.MonkeyPatch) -> None:
    owner = factory.user()
    _, run_id, _, _, _ = _two_version_run(factory, settings, fake, owner)

    def refused(*_: Any, **__: Any) -> None:
        raise ConnectionError("Redis is away")

    monkeypatch.setattr(Queue, "enqueue", refused)
    run_jobs.execute_run(run_id)
    assert the_run(run_id).status == RunStatus.completed
    assert score_run(run_id) == 0  # a scoring job ends as it did too
    assert not current().redis.exists(queues.warm_key(current(), run_id))  # no mark left


def test_the_leaderboards_intervals_drawn_by_the_warm_job_serve_its_first_read(
        factory: Factory, settings: Settings, fake: FakeProviderThread,  # noqa: F811
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The leaderboard without a range reads the report rollups, not the run's entries; its
    first read drew every model's interval in the API's process. The warm job reads it,
    and its intervals reach the API through the shared store."""
    monkeypatch.setattr(uncertainty, "SHARED_MIN_CASES", 1)  # a few cases count as many
    owner = factory.user()
    browser = factory.login(owner)
    s, run_id, scorer_id, _, _ = _two_version_run(factory, settings, fake, owner)
    monkeypatch.setattr(run_jobs, "enqueue_warm", lambda _rt, _run_id: None)
    run_jobs.execute_run(run_id)
    assert warm_run(run_id) is True
    uncertainty.forget()  # drawn in the worker's process, not in the API's
    drawn: list[Any] = []
    draw = stats.mean_ci
    monkeypatch.setattr(stats, "mean_ci", lambda *a, **k: drawn.append(a) or draw(*a, **k))
    url = f"/api/projects/{s.project.id}/reports/leaderboard"
    boards = [_get(browser, url, scorer_id=scorer_id, versions=versions)
              for versions in ("all", "latest")]
    assert drawn == [], drawn
    assert all(board["items"][0]["score"]["n_cases"] for board in boards)
    rt = current()
    shared = list(rt.redis.scan_iter(f"{settings.redis_prefix}:interval:*"))
    assert shared
    rt.redis.delete(*shared)
    uncertainty.forget()  # nothing kept anywhere: the same numbers, drawn again
    assert [_get(browser, url, scorer_id=scorer_id, versions=versions)
            for versions in ("all", "latest")] == boards
    assert drawn
