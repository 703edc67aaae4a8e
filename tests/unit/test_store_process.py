"""The shard's database process: answers in order, errors come back as errors, and it never
outlives the shard that forked it."""

from __future__ import annotations

import gc
import multiprocessing
import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from assay.db import Database
from assay.jobs.collections_policy import SHARD_THRESHOLDS, fewer_collections
from assay.jobs.store_process import InProcessStore, StoreProcess, open_store
from assay.settings import Settings


class Unpicklable(Exception):
    def __init__(self) -> None:
        super().__init__("held a lock")
        self.lock = threading.Lock()


def _fail_plainly(_: Any) -> None:
    raise ValueError("no such run")


def _fail_unpicklably() -> None:
    raise Unpicklable()


def _database(tmp_path: Path) -> Database:
    database = Database()
    database.configure(Settings.from_env({"DATABASE_URL": f"sqlite:///{tmp_path}/s.db",
                                          "ASSAY_INSTANCE_PATH": str(tmp_path)}))
    return database


def _gone(pid: int, within_s: float = 10.0) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.05)
    return False


def test_requests_run_in_another_process_in_order(tmp_path: Path) -> None:
    seen: list[int] = []

    def note(n: int) -> tuple[int, list[int]]:
        seen.append(n)  # the child's copy of the list
        return os.getpid(), list(seen)

    store = StoreProcess(_database(tmp_path), {"note": note})
    try:
        answers = [store.call("note", n) for n in range(5)]
    finally:
        store.close()
    assert {pid for pid, _ in answers} != {os.getpid()}
    assert answers[-1][1] == [0, 1, 2, 3, 4]
    assert seen == []  # nothing ran here


def test_a_failure_comes_back_as_the_error_raised(tmp_path: Path) -> None:
    store = StoreProcess(_database(tmp_path), {"fail": _fail_plainly,
                                               "odd": _fail_unpicklably, "ok": lambda: 1})
    try:
        with pytest.raises(ValueError, match="no such run"):
            store.call("fail", 3)
        with pytest.raises(RuntimeError, match="Unpicklable: held a lock"):
            store.call("odd")
        assert store.call("ok") == 1  # still serving after both
    finally:
        store.close()


def test_a_dead_database_process_fails_the_call_waiting(tmp_path: Path) -> None:
    store = StoreProcess(_database(tmp_path), {"pid": os.getpid})
    pid = store.call("pid")
    os.kill(pid, signal.SIGKILL)
    with pytest.raises(RuntimeError, match="database process ended"):
        store.call("pid")
    store.close()


def _shard_that_dies(tmp_path: str, pids: Any) -> None:
    store = StoreProcess(_database(Path(tmp_path)), {"pid": os.getpid})
    pids.put(store.call("pid"))
    time.sleep(60)


def test_the_database_process_ends_with_its_shard(tmp_path: Path) -> None:
    forks = multiprocessing.get_context("fork")
    pids = forks.Queue()
    shard = forks.Process(target=_shard_that_dies, args=(str(tmp_path), pids))
    shard.start()
    store_pid = pids.get(timeout=30)
    os.kill(shard.pid or 0, signal.SIGKILL)  # the shard alone, not its group
    shard.join()
    assert _gone(store_pid)


def _which_store(tmp_path: str, answers: Any) -> None:
    store = open_store(_database(Path(tmp_path)), {"pid": os.getpid})
    answers.put((type(store).__name__, store.call("pid") != os.getpid()))
    store.close()


def test_a_single_threaded_shard_forks_one_with_threads_stays_in_process(
        tmp_path: Path) -> None:
    forks = multiprocessing.get_context("fork")
    answers = forks.Queue()
    alone = forks.Process(target=_which_store, args=(str(tmp_path), answers))
    alone.start()
    assert answers.get(timeout=30) == ("StoreProcess", True)  # a work horse's case
    alone.join()
    stop = threading.Event()
    helper = threading.Thread(target=stop.wait)
    helper.start()
    try:
        store = open_store(_database(tmp_path), {"pid": os.getpid})
        assert isinstance(store, InProcessStore)
        assert store.call("pid") == os.getpid()
    finally:
        stop.set()
        helper.join()


def test_shards_collect_rarely_and_give_the_thresholds_back() -> None:
    before = gc.get_threshold()
    with fewer_collections():
        assert gc.get_threshold() == SHARD_THRESHOLDS
        with fewer_collections():  # a second shard of the same process
            assert gc.get_threshold() == SHARD_THRESHOLDS
        assert gc.get_threshold() == SHARD_THRESHOLDS  # the first still runs
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0
