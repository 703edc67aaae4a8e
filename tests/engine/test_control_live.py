"""Pause, resume, cancel and retry-failed over HTTP while a real worker runs the run: counts
stay consistent, every cell is called at most once, reservations all come back."""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Callable

import httpx
from sqlalchemy import event, func, select

from assay.core.projects.models import Membership, Project, Role
from assay.core.runs import control, service
from assay.core.runs.models import Output, Run, RunTarget
from assay.extensions import db
from assay.jobs.queues import enqueue_run
from assay.jobs.runs import execute_run
from assay.providers.fake import FakeProviderThread
from assay.runtime import current
from assay.settings import Settings
from tests.engine.test_providers_engine import configure, fake, run, setup, stats, the_run  # noqa: F401
from tests.factories import Factory

CASES = 30


class Live:
    def __init__(self, factory: Factory, settings: Settings,
                 fake: FakeProviderThread,  # noqa: F811
                 live_url: str, concurrency: int = 3):
        s = setup(factory, settings, fake, cases=CASES)
        owner = factory.user()
        with db.factory() as session:
            session.add(Membership(project_id=s.project.id, user_id=owner.id,
                                   role=Role.editor))
            session.commit()
        self.token = factory.api_token(owner)
        self.project_id = s.project.id
        self.run_id = run(s, execute=False)
        with db.factory() as session:
            found = session.get(Run, self.run_id)
            assert found is not None
            found.settings = {**(found.settings or {}), "concurrency": concurrency,
                              "shards": 1}
            session.commit()
        self.base = f"{live_url}/api/projects/{self.project_id}/runs/{self.run_id}"
        self.calls_before = stats(fake)["total"]
        self.answered_before = stats(fake)["answered"]
        self.fake = fake

    def start(self) -> None:
        enqueue_run(current(), self.run_id)

    def post(self, action: str) -> httpx.Response:
        return httpx.post(f"{self.base}/{action}", timeout=30,
                          headers={"Authorization": f"Bearer {self.token}"})

    def calls(self) -> int:
        return int(stats(self.fake)["total"]) - self.calls_before

    def answered(self) -> int:
        """Calls the provider answered (what it bills): a stop closes the others."""
        return int(stats(self.fake)["answered"]) - self.answered_before

    def cells(self) -> dict[str, int]:
        with db.factory() as session:
            return dict(session.execute(select(Output.status, func.count()).where(
                Output.run_id == self.run_id).group_by(Output.status)).all())

    def run(self) -> Run:
        with db.factory() as session:
            found = session.get(Run, self.run_id)
            assert found is not None
            return found

    def wait(self, what: Callable[[], bool], timeout_s: float = 60) -> None:
        deadline = time.monotonic() + timeout_s
        while not what():
            assert time.monotonic() < deadline, f"timed out: {self.run().status} {self.cells()}"
            time.sleep(0.05)

    def books_balance(self) -> None:
        """Counters equal the cells; nothing is left reserved; the targets add up."""
        cells, found = self.cells(), self.run()
        assert (found.succeeded, found.failed, found.skipped) == (
            cells.get("succeeded", 0), cells.get("failed", 0), cells.get("skipped", 0))
        assert found.total == CASES == sum(cells.values())
        with db.factory() as session:
            targets = list(session.scalars(select(RunTarget).where(
                RunTarget.run_id == self.run_id)))
            project = session.get(Project, self.project_id)
            held = session.scalar(select(func.coalesce(func.sum(Output.reserved_micros), 0))
                                  .where(Output.run_id == self.run_id))
            spent = session.scalar(select(func.coalesce(func.sum(Output.cost_micros), 0))
                                   .where(Output.run_id == self.run_id))
        assert sum(t.succeeded for t in targets) == found.succeeded
        assert sum(t.failed for t in targets) == found.failed
        assert sum(t.skipped for t in targets) == found.skipped
        assert found.reserved_micros == held == 0
        assert project is not None and project.reserved_micros == 0
        assert found.spent_micros == spent


def _idle(live: Live) -> bool:
    return live.cells().get("running", 0) == 0


def test_pause_stops_claiming_and_resume_finishes_every_cell_once(
        factory: Factory, settings: Settings, fake: FakeProviderThread,  # noqa: F811
        live_url: str, worker: subprocess.Popen[bytes]) -> None:
    configure(fake, latency_ms=400)  # slow enough that a busy machine still cancels mid-run
    live = Live(factory, settings, fake, live_url)
    live.start()
    live.wait(lambda: live.cells().get("succeeded", 0) >= 6)
    paused = live.post("pause")
    assert paused.status_code == 200, paused.text
    assert paused.json()["status"] == "paused"
    live.wait(lambda: _idle(live), 10)  # what was in flight is aborted, back to pending
    done = live.cells()
    time.sleep(0.6)
    assert live.cells() == done, "a paused run claimed more cells"
    assert live.run().status == "paused" and done.get("pending", 0) > 0

    resumed = live.post("resume")
    assert resumed.status_code == 200 and resumed.json()["status"] == "running"
    live.wait(lambda: live.run().status == "completed")
    assert live.cells() == {"succeeded": CASES}
    # a reply arriving as the pause comes is recorded, not asked again: each cell once
    assert live.answered() == CASES, "a cell was answered twice, or a reply was dropped"
    live.books_balance()


def test_cancel_keeps_what_is_done_and_calls_nothing_more(
        factory: Factory, settings: Settings, fake: FakeProviderThread,  # noqa: F811
        live_url: str, worker: subprocess.Popen[bytes]) -> None:
    configure(fake, latency_ms=400)  # slow enough that a busy machine still cancels mid-run
    live = Live(factory, settings, fake, live_url)
    live.start()
    live.wait(lambda: live.cells().get("succeeded", 0) >= 6)
    cancelled = live.post("cancel")
    assert cancelled.status_code == 200, cancelled.text
    assert cancelled.json()["status"] == "cancelled"
    live.wait(lambda: _idle(live), 10)
    time.sleep(0.3)
    cells = live.cells()
    assert set(cells) <= {"succeeded", "skipped"} and cells["skipped"] > 0, cells
    assert live.answered() == cells["succeeded"], "a skipped cell was answered"
    assert live.run().status == "cancelled"
    live.books_balance()
    assert live.post("resume").status_code == 409


def test_retry_failed_completes_a_failed_run(
        factory: Factory, settings: Settings, fake: FakeProviderThread,  # noqa: F811
        live_url: str, worker: subprocess.Popen[bytes]) -> None:
    configure(fake, latency_ms=5, fault_rate=1.0, faults=["malformed"])  # not retried
    live = Live(factory, settings, fake, live_url, concurrency=10)
    live.start()
    live.wait(lambda: live.run().status == "failed")
    assert live.cells() == {"failed": CASES}
    live.books_balance()
    configure(fake, latency_ms=5, fault_rate=0.0)  # resets the fake's counts too
    live.calls_before = stats(fake)["total"]
    retried = live.post("retry-failed")
    assert retried.status_code == 200, retried.text
    assert retried.json()["status"] == "running" and retried.json()["failed"] == 0
    live.wait(lambda: live.run().status == "completed")
    assert live.cells() == {"succeeded": CASES}
    assert live.calls() == CASES
    live.books_balance()
    assert live.post("retry-failed").status_code == 409



def test_a_run_several_shards_share_finishes_once(
        factory: Factory, settings: Settings, fake: FakeProviderThread) -> None:  # noqa: F811
    """Only the shard that closes the run says run.finished: one that ends later (a worker
    that was busy starts its shard job after the run is done) must not say it again."""
    configure(fake, latency_ms=5)
    s = setup(factory, settings, fake, cases=30)
    run_id = run(s, execute=False, cache=False, concurrency=4)
    shards = [threading.Thread(target=execute_run, args=(run_id,)) for _ in range(3)]
    for shard in shards:
        shard.start()
    for shard in shards:
        shard.join(timeout=60)
    execute_run(run_id)  # the late one
    rt = current()
    types = [fields[b"type"] for _, fields in rt.redis.xrange(rt.events_key(run_id))]
    assert types.count(b"run.finished") == 1 and types[-1] == b"run.finished"


def test_a_late_shard_does_not_close_a_run_retried_under_it(
        factory: Factory, settings: Settings, fake: FakeProviderThread) -> None:  # noqa: F811
    """A shard of the first pass checks whether the run is done just as a user retries its
    failed cells: the retry lands right after the shard's first read. The shard must leave
    the retried run running, not close it as completed with its cells still pending."""
    configure(fake, latency_ms=5, fault_rate=1.0, faults=["malformed"])  # not retried
    s = setup(factory, settings, fake, cases=6)
    run_id = run(s, cache=False)
    assert the_run(run_id).status == "failed"
    retried: list[bool] = []

    def retry_once(_conn: object, _cursor: object, statement: str, *_: object) -> None:
        if retried or not statement.lstrip().upper().startswith("SELECT"):
            return
        retried.append(True)
        with db.factory() as other:
            found = other.get(Run, run_id)
            assert found is not None
            control.retry_failed(other, None, found)
            other.commit()

    engine = db.engine
    with db.factory() as session:
        event.listen(engine, "after_cursor_execute", retry_once)
        try:
            closed = service.finish_if_done(session, run_id)
        finally:
            event.remove(engine, "after_cursor_execute", retry_once)
    assert retried and closed is None
    found = the_run(run_id)
    assert found.status == "running" and found.failed == 0
    with db.factory() as session:
        pending = session.scalar(select(func.count()).where(
            Output.run_id == run_id, Output.status == "pending"))
    assert pending == 6
    configure(fake, latency_ms=5, fault_rate=0.0)
    execute_run(run_id)
    assert the_run(run_id).status == "completed"
