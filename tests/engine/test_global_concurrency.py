"""A run's `concurrency` bounds its calls in flight over all its shards and workers, and a
credential's ceiling bounds the calls of every run on it together (issue 19 item 4): three
real RQ worker processes, several shards, and the fake provider counting what it sees in
flight. A dead holder's slots come back after its lease."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator

import httpx
import pytest
import redis
from flask import Flask
from rq import Queue, Worker

from assay.core.llm.models import Credential, ModelConfig
from assay.core.runs.models import Run, RunStatus
from assay.extensions import db
from assay.jobs.queues import enqueue_run
from assay.jobs.slots import Holder, Pool, Slots, credential_pool, run_pool
from assay.providers.fake import FakeProviderThread
from assay.runtime import current
from assay.settings import Settings
from tests.engine.test_providers_engine import Setup, configure, run, setup, stats
from tests.factories import Factory

LEASE_S = 2  # the workers' leases (cells and slots): a dead holder's come back after it


@pytest.fixture
def fake(fake_provider: FakeProviderThread) -> Iterator[FakeProviderThread]:
    before = httpx.get(f"{fake_provider.url}/_fake/config").json()
    configure(fake_provider, latency_ms=40)  # long enough for calls to overlap
    yield fake_provider
    httpx.post(f"{fake_provider.url}/_fake/config", json=before).raise_for_status()
    httpx.post(f"{fake_provider.url}/_fake/reset")


def start_worker(test_env: dict[str, str]) -> subprocess.Popen[bytes]:
    env = {**os.environ, **test_env, "ASSAY_LEASE_S": str(LEASE_S),
           "ASSAY_REAPER_INTERVAL_S": "0.5"}
    # a process group of its own: SIGKILL reaches the work horse running the shard too
    return subprocess.Popen([sys.executable, "-m", "assay", "worker"], env=env,
                            start_new_session=True)


@pytest.fixture(scope="module")
def workers(app: Flask, test_env: dict[str, str],
            settings: Settings) -> Iterator[list[subprocess.Popen[bytes]]]:
    procs = [start_worker(test_env) for _ in range(3)]
    queue = Queue(settings.runs_queue, connection=redis.Redis.from_url(test_env["REDIS_URL"]))
    deadline = time.monotonic() + 90  # a busy machine starts Python slowly
    try:
        while {p.pid for p in procs} - {w.pid for w in Worker.all(queue=queue)}:
            assert all(p.poll() is None for p in procs), "a worker exited at start"
            assert time.monotonic() < deadline, "the workers did not register"
            time.sleep(0.2)
        yield procs
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.terminate()
        for proc in procs:
            proc.wait(timeout=30)


def go(run_id: int) -> None:
    enqueue_run(current(), run_id)


def wait_done(*run_ids: int, timeout_s: float = 180,
              holders: set[bytes] | None = None) -> list[Run]:
    """The runs once none is pending or running; `holders` collects the shards seen asking
    for slots of the first run meanwhile."""
    deadline = time.monotonic() + timeout_s
    rt = current()
    while True:
        if holders is not None:
            holders.update(rt.redis.hkeys(
                f"{rt.settings.redis_prefix}:slots:{run_pool(run_ids[0])}:want"))
        with db.factory() as session:
            runs = [session.get(Run, run_id) for run_id in run_ids]
            assert all(r is not None for r in runs)
            if all(r.status not in (RunStatus.pending, RunStatus.running)  # type: ignore
                   for r in runs) or time.monotonic() > deadline:
                return runs  # type: ignore[return-value]
        time.sleep(0.05)


def with_ceiling(s: Setup, ceiling: int | None) -> int:
    """Set the ceiling of the setup's credential; returns the credential's id."""
    with db.factory() as session:
        model = session.get(ModelConfig, s.model_ids[0])
        assert model is not None
        credential = session.get(Credential, model.credential_id)
        assert credential is not None
        credential.concurrency_ceiling = ceiling
        session.commit()
        return credential.id


# --- the semaphore alone ----------------------------------------------------------------------


def test_a_pool_never_gives_more_than_its_limit_and_shares_it_fairly(
        settings: Settings, redis_conn: redis.Redis) -> None:
    a, b = (Slots(redis_conn, settings.redis_prefix, name, 10) for name in ("a", "b"))
    pool = Pool("run:test-fair", 10)
    assert a.sync([pool], [10]) == [(10, 10, False)]
    assert b.sync([pool], [10]) == [(0, 5, False)], "all ten are taken"
    assert a.sync([pool], [10]) == [(10, 5, True)], "a learns that b starves"
    assert a.sync([pool], [5]) == [(5, 5, True)]  # a gives back above its share
    assert b.sync([pool], [10]) == [(5, 5, False)]
    assert a.sync([pool], [10])[0][0] == 5, "no room above the limit"
    assert b.sync([pool], [0])[0][0] == 0
    assert a.sync([pool], [10]) == [(10, 10, False)], "b left: a may take them all"


def test_a_dead_holders_slots_come_back_after_its_lease(
        settings: Settings, redis_conn: redis.Redis) -> None:
    dead = Slots(redis_conn, settings.redis_prefix, "dead", 0.3)
    alive = Slots(redis_conn, settings.redis_prefix, "alive", 10)
    pool = Pool("credential:test-dead", 4)
    assert dead.sync([pool], [4])[0][0] == 4
    assert alive.sync([pool], [4])[0][0] == 0
    time.sleep(0.4)  # the dead holder never renews
    assert alive.sync([pool], [4])[0][0] == 4


def test_slots_given_back_stop_counting_before_redis_answers(
        settings: Settings, redis_conn: redis.Redis) -> None:
    """Between asking to give slots back and the answer, Redis may hand them to another
    shard: the holder must not start a cell on them meanwhile."""
    holder = Holder(Slots(redis_conn, settings.redis_prefix, "giver", 10), "run:test-give", 8)
    holder.run.waiting = 8
    holder.apply(*holder.request(), [(8, 8, False)], time.monotonic())
    holder.run.waiting, holder.run.used = 0, 3  # 3 in flight, nothing else to do
    pools, wants = holder.request()
    assert wants == [3] and holder.run.free() == 0, "spare slots still usable while asked back"
    holder.apply(pools, wants, holder.slots.sync(pools, wants), time.monotonic())
    assert (holder.run.held, holder.run.free()) == (3, 0)
    holder.run.used = 0
    holder.release_all()
    assert not redis_conn.hkeys(f"{settings.redis_prefix}:slots:run:test-give:held")


# --- three workers ----------------------------------------------------------------------------


def test_a_runs_concurrency_holds_over_all_its_shards_on_three_workers(
        factory: Factory, settings: Settings, fake: FakeProviderThread,
        workers: list[subprocess.Popen[bytes]]) -> None:
    # 4 s of calls at the bound: every worker starts a shard meanwhile, even a slow one
    s = setup(factory, settings, fake, cases=200, params={"temperature": 0.5,
                                                          "max_tokens": 8})
    run_id = run(s, execute=False, concurrency=5, shards=6)
    configure(fake, latency_ms=100)
    go(run_id)
    holders: set[bytes] = set()
    (done,) = wait_done(run_id, holders=holders)
    assert done.status == "completed" and done.succeeded == 200
    seen = stats(fake)
    assert seen["total"] == 200
    assert seen["peak_concurrency"] <= 5, f"{seen['peak_concurrency']} calls in flight"
    assert len(holders) > 1, "one shard did it all: the bound was not shared"


def test_runs_on_one_credential_share_its_ceiling(
        factory: Factory, settings: Settings, fake: FakeProviderThread,
        workers: list[subprocess.Popen[bytes]]) -> None:
    s = setup(factory, settings, fake, cases=60, params={"temperature": 0.5, "max_tokens": 8})
    with_ceiling(s, 3)
    first = run(s, execute=False, concurrency=10, shards=2)
    second = run(s, execute=False, concurrency=10, shards=2)
    configure(fake, latency_ms=40)
    go(first)
    go(second)
    runs = wait_done(first, second)
    assert [r.status for r in runs] == ["completed", "completed"]
    seen = stats(fake)
    assert seen["total"] == 120
    assert seen["peak_concurrency"] <= 3, f"{seen['peak_concurrency']} calls in flight"


def test_slots_a_dead_holder_kept_come_back_and_the_run_ends(
        factory: Factory, settings: Settings, fake: FakeProviderThread,
        redis_conn: redis.Redis, workers: list[subprocess.Popen[bytes]]) -> None:
    s = setup(factory, settings, fake, cases=30, params={"temperature": 0.5, "max_tokens": 8})
    credential_id = with_ceiling(s, 2)
    run_id = run(s, execute=False, concurrency=5, shards=3)
    # what a SIGKILLed worker leaves: the run's slots and the credential's, held, never renewed
    dead = Slots(redis_conn, settings.redis_prefix, "sigkilled", LEASE_S)
    assert [held for held, _, _ in dead.sync(
        [Pool(run_pool(run_id), 5), Pool(credential_pool(credential_id), 2)], [5, 2])] == [5, 2]
    configure(fake, latency_ms=40)
    started = time.monotonic()
    go(run_id)
    (done,) = wait_done(run_id)
    assert done.status == "completed" and done.succeeded == 30
    assert time.monotonic() - started >= LEASE_S * 0.9, "ran on slots the dead holder had"
    assert stats(fake)["peak_concurrency"] <= 2


def test_a_sigkilled_worker_leaves_no_slot_taken(
        factory: Factory, settings: Settings, fake: FakeProviderThread,
        workers: list[subprocess.Popen[bytes]], test_env: dict[str, str]) -> None:
    """Last in the module: it kills one of the three workers mid-run."""
    s = setup(factory, settings, fake, cases=90, params={"temperature": 0.5, "max_tokens": 8})
    run_id = run(s, execute=False, concurrency=3, shards=3)
    configure(fake, latency_ms=60)
    go(run_id)
    deadline = time.monotonic() + 60
    while stats(fake)["total"] < 10:  # every worker is in the run by now, or soon
        assert time.monotonic() < deadline, "the run did not start"
        time.sleep(0.05)
    victim = workers[0]
    os.killpg(victim.pid, signal.SIGKILL)  # its slots stay in Redis until its lease ends
    victim.wait(timeout=10)
    (done,) = wait_done(run_id)
    assert done.status == "completed" and done.succeeded == 90
    assert stats(fake)["peak_concurrency"] <= 3
