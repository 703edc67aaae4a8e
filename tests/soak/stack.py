"""The processes `assay up` starts (supervise.py), started the same way but each on its own
port, instance folder, database and Redis prefix, with their logs in files the soak reads
afterwards: `assay db upgrade`, `assay seed --no-tour`, then `assay fake-provider`,
`assay serve` (gunicorn, as in production) and `assay worker`. The SPA's preview server is
left out: the simulated users call the API it proxies to.

The API logs as JSON with an access line per request (ASSAY_LOG_FORMAT=json,
ASSAY_ACCESS_LOG=1), so every 5xx and every unhandled error can be counted; /metrics is on
(ASSAY_METRICS_TOKEN) for the pool gauge.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import httpx
import psycopg
from sqlalchemy.engine import make_url

API_APP = "assay-soak-api"  # PostgreSQL application_name of the API's connections
WORKER_APP = "assay-soak-worker"
POOL_METRIC = "assay_db_pool_checked_out"  # the gauge /metrics exports (issue 31, item 1)
METRICS_TOKEN = "soak-metrics-token"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _with_app_name(url: str, name: str) -> str:
    """PostgreSQL URLs: the connections say whose they are in pg_stat_activity."""
    if not url.startswith("postgres"):
        return url
    return make_url(url).update_query_dict({"application_name": name}).render_as_string(
        hide_password=False)


def _conninfo(url: str, database: str | None = None) -> str:
    found = make_url(url).set(drivername="postgresql")
    if database is not None:
        found = found.set(database=database)
    return found.render_as_string(hide_password=False)


@dataclass
class PoolReading:
    """Connections the API holds checked out, from each place that shows them: the /metrics
    gauge (None: not exported) and, on PostgreSQL, the API's connections that are in a
    transaction or a statement (None: SQLite)."""

    metrics: int | None
    postgres: int | None
    held: list[tuple[Any, ...]] = field(default_factory=list)  # pg_stat_activity rows
    # the gauge's non-zero samples by process file and pool ("vm-123-horse main": 2):
    # which process holds them (the API's, the worker's, its work horses', the reaper's)
    by_process: dict[str, int] = field(default_factory=dict)

    @property
    def checked_out(self) -> int | None:
        values = [v for v in (self.metrics, self.postgres) if v is not None]
        return max(values) if values else None

    @property
    def source(self) -> str:
        parts = []
        if self.metrics is not None:
            parts.append(f"/metrics {POOL_METRIC} = {self.metrics}")
        if self.by_process:
            parts.append("held by " + ", ".join(f"{k}: {v}" for k, v in self.by_process.items()))
        if self.postgres is not None:
            parts.append(f"pg_stat_activity: {self.postgres} API connections in a transaction")
        return "; ".join(parts) or f"not observable (no {POOL_METRIC} in /metrics, SQLite)"


@dataclass
class LogFindings:
    """What the API's log says went wrong: access lines with a 5xx, and error records."""

    statuses: dict[int, int] = field(default_factory=dict)  # status -> access lines
    server_errors: list[str] = field(default_factory=list)  # "GET /route 500 request_id=..."
    errors: list[str] = field(default_factory=list)  # ERROR records, first lines
    lines: int = 0

    @property
    def count_5xx(self) -> int:
        return sum(n for status, n in self.statuses.items() if status >= 500)

    @property
    def count_500(self) -> int:
        return self.statuses.get(500, 0)


def read_log(path: Path) -> LogFindings:
    found = LogFindings()
    with path.open(errors="replace") as handle:
        for line in handle:
            found.lines += 1
            _read_line(line.rstrip("\n"), found)
    return found


def _read_line(line: str, found: LogFindings) -> None:
    try:
        record = json.loads(line) if line.startswith("{") else None
    except ValueError:
        record = None
    if not isinstance(record, dict):  # gunicorn's own lines, a traceback printed raw
        if "[ERROR]" in line or "[CRITICAL]" in line or line.startswith("Traceback"):
            found.errors.append(line[:500])
        return
    message = str(record.get("message", ""))
    if record.get("logger") == "assay.access":
        method, _, rest = message.partition(" ")
        route, _, status = rest.rpartition(" ")
        if status.isdigit():
            code = int(status)
            found.statuses[code] = found.statuses.get(code, 0) + 1
            if code >= 500:
                found.server_errors.append(
                    f"{method} {route} {code} request_id={record.get('request_id')}")
        return
    if record.get("level") in ("ERROR", "CRITICAL"):
        trace = str(record.get("exc_info") or "").strip().splitlines()
        found.errors.append(f"{record.get('logger')}: {message} request_id="
                            f"{record.get('request_id')}" + (f" | {trace[-1]}" if trace else ""))


@dataclass
class SoakStack:
    workdir: Path
    database_url: str  # sqlite:///FILE, or a PostgreSQL server's URL (a database is made)
    redis_url: str
    api_port: int = field(default_factory=free_port)
    fake_port: int = field(default_factory=free_port)
    fake_latency_ms: float = 200.0  # `make run` has 400 +- 300: a run lasts a few seconds
    fake_jitter_ms: float = 100.0
    procs: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)  # the processes' (set by start)
    _logs: list[IO[bytes]] = field(default_factory=list)
    _pg_database: str | None = None

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self.api_port}"

    @property
    def fake_url(self) -> str:
        return f"http://127.0.0.1:{self.fake_port}"

    @property
    def is_postgres(self) -> bool:
        return self.database_url.startswith("postgres")

    @property
    def label(self) -> str:
        return "PostgreSQL" if self.is_postgres else "SQLite"

    def log_path(self, name: str) -> Path:
        return self.workdir / f"{name}.log"

    def _env(self, database_url: str) -> dict[str, str]:
        return {**os.environ,
                "ASSAY_INSTANCE_PATH": str(self.workdir / "instance"),
                "DATABASE_URL": database_url, "REDIS_URL": self.redis_url,
                "ASSAY_REDIS_PREFIX": f"assay-soak-{uuid.uuid4().hex[:8]}",
                "ASSAY_FAKE_PROVIDER_URL": self.fake_url, "ASSAY_FAKE_PORT": str(self.fake_port),
                "ASSAY_FAKE_LATENCY_MS": str(self.fake_latency_ms),
                "ASSAY_FAKE_JITTER_MS": str(self.fake_jitter_ms),
                "ASSAY_BCRYPT_ROUNDS": "4", "ASSAY_METRICS_TOKEN": METRICS_TOKEN,
                "ASSAY_LOG_FORMAT": "json", "ASSAY_ACCESS_LOG": "1",
                # every simulated user and the fuzzer sign up and in from 127.0.0.1
                "ASSAY_REGISTER_IP_LIMIT": "100000", "ASSAY_LOGIN_IP_FAILURES": "100000"}

    def start(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        url = self._database()
        env = self.env = self._env(url)
        assay = [sys.executable, "-m", "assay"]
        for step in (["db", "upgrade"], ["seed", "--no-tour"]):
            done = subprocess.run([*assay, *step], env=env, capture_output=True, text=True)
            if done.returncode:
                raise RuntimeError(f"assay {' '.join(step)} failed:\n{done.stderr[-3000:]}")
        self._spawn("fake", [*assay, "fake-provider", "--port", str(self.fake_port)], env)
        self._spawn("api", [*assay, "serve", "--port", str(self.api_port)],
                    {**env, "DATABASE_URL": _with_app_name(url, API_APP)})
        self._spawn("worker", [*assay, "worker"],
                    {**env, "DATABASE_URL": _with_app_name(url, WORKER_APP)})
        self._wait(f"{self.fake_url}/_fake/health", "the fake provider")
        self._wait(f"{self.api_url}/api/health", "the API")
        self._wait(f"{self.api_url}/api/ready", "a worker (/api/ready)")

    def _database(self) -> str:
        if not self.is_postgres:
            return self.database_url
        self._pg_database = f"assay_soak_{os.getpid()}_{uuid.uuid4().hex[:6]}"
        with psycopg.connect(_conninfo(self.database_url), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{self._pg_database}"')
        return make_url(self.database_url).set(
            drivername="postgresql+psycopg", database=self._pg_database).render_as_string(
            hide_password=False)

    def _spawn(self, name: str, command: list[str], env: dict[str, str]) -> None:
        log = self.log_path(name).open("wb")
        self._logs.append(log)
        self.procs[name] = subprocess.Popen(command, env=env, stdout=log,
                                            stderr=subprocess.STDOUT, start_new_session=True)

    def _wait(self, url: str, what: str, timeout_s: float = 90.0) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            dead = [n for n, p in self.procs.items() if p.poll() is not None]
            if dead:
                raise RuntimeError(f"{dead} exited at start:\n{self.tail(dead[0])}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(url, timeout=2).status_code == 200:
                    return
            time.sleep(0.2)
        raise RuntimeError(f"{what} did not answer {url} within {timeout_s} s:\n"
                           + "\n".join(self.tail(n) for n in self.procs))

    def tail(self, name: str, lines: int = 30) -> str:
        text = self.log_path(name).read_text(errors="replace").splitlines()
        return f"--- {name} ---\n" + "\n".join(text[-lines:])

    def alive(self) -> list[str]:
        return [name for name, proc in self.procs.items() if proc.poll() is None]

    def metrics(self) -> str | None:
        try:
            reply = httpx.get(f"{self.api_url}/metrics", timeout=10,
                              headers={"Authorization": f"Bearer {METRICS_TOKEN}"})
        except httpx.HTTPError:
            return None
        return reply.text if reply.status_code == 200 else None

    def pool_by_process(self) -> dict[str, int]:
        """The checked-out gauge's non-zero values in each process's sample file
        (multiprocess mode: a file per process, `/metrics` adds up the live ones)."""
        from prometheus_client.mmap_dict import MmapedDict

        found: dict[str, int] = {}
        for path in sorted((self.workdir / "instance" / "metrics").glob("gauge_livesum_*.db")):
            for key, value, *_ in MmapedDict.read_all_values_from_file(str(path)):
                metric, _name, labels, *_rest = json.loads(key)
                if metric == POOL_METRIC and value:
                    process = path.stem.removeprefix("gauge_livesum_")
                    found[f"{process} {labels.get('pool')}"] = int(value)
        return found

    def pool(self) -> PoolReading:
        text = self.metrics() or ""
        samples = [line.rsplit(" ", 1)[-1] for line in text.splitlines()
                   if line.startswith(POOL_METRIC) and not line.startswith("#")]
        gauge = int(sum(float(value) for value in samples)) if samples else None
        by_process = self.pool_by_process() if gauge else {}
        if not self.is_postgres:
            return PoolReading(gauge, None, by_process=by_process)
        with psycopg.connect(_conninfo(self.database_url, self._pg_database),
                             autocommit=True) as conn:
            held = conn.execute(
                "SELECT pid, state, now() - xact_start, left(query, 160) FROM pg_stat_activity"
                " WHERE datname = current_database() AND application_name = %s"
                " AND state IS DISTINCT FROM 'idle'", (API_APP,)).fetchall()
        return PoolReading(gauge, len(held), [tuple(row) for row in held], by_process)

    def stop(self) -> None:
        for proc in self.procs.values():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + 15
        for proc in self.procs.values():
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(10)
        for log in self._logs:
            log.close()
        if self._pg_database is not None:
            with psycopg.connect(_conninfo(self.database_url), autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{self._pg_database}" WITH (FORCE)')
