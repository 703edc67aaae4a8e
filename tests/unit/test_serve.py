"""`assay serve`'s gunicorn shape: one gthread process per core unless told, a database
connection per thread, and at most twice its threads in client connections per process,
taken in turn with its siblings, so keep-alive clients spread evenly over the processes
(README, Deploying: the API's worker model)."""

from __future__ import annotations

import os
from typing import Any

import pytest

from assay import serve
from assay.balanced_worker import FREE, BalancedThreadWorker, Shares


def _options(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The options `assay serve` hands gunicorn (threads 16, 2 workers), and its admit."""
    seen: dict[str, Any] = {}

    class Recorder:
        def __init__(self, options: dict[str, Any], admit: int):
            seen.update(options, admit=admit)

        def run(self) -> None:
            pass

    monkeypatch.setattr(serve, "_Gunicorn", Recorder)
    monkeypatch.setenv("DATABASE_URL", "postgresql://nobody@127.0.0.1:1/none")
    monkeypatch.setenv("REDIS_URL", "redis://127.0.0.1:1/0")
    monkeypatch.delenv("ASSAY_DB_POOL_SIZE", raising=False)
    monkeypatch.delenv("ASSAY_DB_PING_IDLE_S", raising=False)
    monkeypatch.setenv("ASSAY_WEB_SLOW", "8")
    serve.run_gunicorn("127.0.0.1", 8000, threads=16, workers=2)
    return seen


def test_each_process_takes_at_most_twice_its_threads_in_connections(
        monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _options(monkeypatch)
    # 16 for reads and 8 for slow work (api/slow_lane.py), which never takes the reads'
    assert (seen["worker_class"], seen["workers"], seen["threads"]) == (
        BalancedThreadWorker, 2, 24)
    assert seen["pre_fork"] is serve.pre_fork  # the arbiter hands each its slot
    assert seen["worker_connections"] == 2 * 16 + 8
    assert seen["admit"] == 4  # admission.py: the others wait in order
    assert seen["post_worker_init"] is serve._post_worker_init  # collections_policy
    assert os.environ["ASSAY_DB_POOL_SIZE"] == "24"
    assert os.environ["ASSAY_DB_PING_IDLE_S"] == "1"  # its processes ping idle connections


class _Worker:
    """What BalancedThreadWorker's accept limit reads: its slot, its shares, its limit."""
    worker_connections = BalancedThreadWorker.worker_connections

    def __init__(self, shares: Shares, limit: int):
        self.shares, self.slot = shares, shares.claim()
        self.worker_connections = limit
        self.nr_conns = 0

    def open(self) -> None:
        self.nr_conns += 1
        self.shares.counts[self.slot] = self.nr_conns  # as notify() publishes it

    def accepts(self) -> bool:  # gthread's loop: accept while below the limit
        return self.nr_conns < self.worker_connections


def test_processes_take_keep_alive_connections_in_turn() -> None:
    shares = Shares(4)
    first, second = _Worker(shares, 32), _Worker(shares, 32)
    for _ in range(25):  # 50 clients connecting at once: whoever is ready accepts
        for worker in (first, first, second):  # the first one is always quicker
            if worker.accepts():
                worker.open()
    assert (first.nr_conns, second.nr_conns) == (25, 25)


def test_a_lone_process_and_one_at_its_limit_hold_no_one_back() -> None:
    shares = Shares(4)
    alone = _Worker(shares, 3)
    for _ in range(5):
        if alone.accepts():
            alone.open()
    assert alone.nr_conns == 3  # its own limit: no sibling to wait for
    later = _Worker(shares, 3)
    for _ in range(5):
        for worker in (alone, later):
            if worker.accepts():
                worker.open()
    assert (alone.nr_conns, later.nr_conns) == (3, 3)


def test_a_dead_workers_slot_is_freed_and_handed_on() -> None:
    shares = Shares(2)
    a, b = shares.claim(), shares.claim()
    with pytest.raises(RuntimeError):
        shares.claim()
    shares.counts[a] = 7
    shares.release(a)
    assert shares.counts[a] == FREE and shares.fewest_besides(b) is None
    assert shares.claim() == a and shares.counts[a] == 0


def test_requests_are_parsed_by_gunicorns_c_parser(monkeypatch: pytest.MonkeyPatch) -> None:
    """gunicorn_h1c is a dependency and nothing in serve's options turns it off: gunicorn's
    pure-Python parser cost about 0.1 ms of CPU per request more (README, Scaling)."""
    from gunicorn.config import Config
    from gunicorn.http import message

    config = Config()
    for key, value in _options(monkeypatch).items():
        if key != "admit":  # Assay's own, not gunicorn's
            config.set(key, value)
    assert message._check_fast_parser(config) is True
