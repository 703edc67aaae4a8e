"""Run a command with PostgreSQL and Redis for the tests, wherever `make test` runs.

    python -m tests.services -- make test-all

Where a PostgreSQL and a Redis already answer at the test URLs (POSTGRES_TEST_URL, default
postgresql://postgres@127.0.0.1:5432/test; ASSAY_TEST_REDIS_URL, default
redis://127.0.0.1:6379/13), the command uses them. Where one does not, a throwaway one is
started from Debian's packages (installed with apt-get when missing): a PostgreSQL cluster
made by initdb in a temporary folder, served by pg_ctl on a free port, and a redis-server
on a free port that keeps nothing on disk. They are stopped and their folders removed when
the command ends, however it ends. The command's exit code is ours.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import psycopg
import redis

PG_URL = "postgresql://postgres@127.0.0.1:5432/test"
REDIS_URL = "redis://127.0.0.1:6379/13"
READY_TIMEOUT = 30.0


def log(message: str) -> None:
    print(f"[services] {message}", file=sys.stderr, flush=True)


def postgres_answers(url: str) -> bool:
    try:
        with psycopg.connect(url, connect_timeout=3) as conn:
            conn.execute("SELECT 1")
        return True
    except psycopg.Error:
        return False


def redis_answers(url: str) -> bool:
    try:
        return bool(redis.Redis.from_url(url, socket_connect_timeout=3).ping())
    except redis.RedisError:
        return False


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def apt_install(package: str) -> None:
    """Install a Debian package, as root directly or through sudo."""
    sudo = [] if os.geteuid() == 0 else ["sudo", "-n"]
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    log(f"installing Debian's {package}")
    subprocess.run([*sudo, "apt-get", "update", "-qq"], check=True, env=env)
    subprocess.run([*sudo, "apt-get", "install", "-y", "-qq", package], check=True, env=env,
                   stdout=subprocess.DEVNULL)


def postgres_bin(name: str) -> str:
    """initdb and pg_ctl live outside PATH in Debian's package (/usr/lib/postgresql/N/bin)."""
    for attempt in range(2):
        found = shutil.which(name) or next(
            iter(sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), reverse=True)), None)
        if found:
            return found
        if attempt == 0:
            apt_install("postgresql")
    raise SystemExit(f"{name} not found after installing Debian's postgresql")


def as_cluster_owner(argv: list[str]) -> list[str]:
    """initdb and postgres refuse to run as root: run them as the package's `postgres` user."""
    if os.geteuid() != 0:
        return argv
    return ["runuser", "-u", "postgres", "--", *argv]


@contextlib.contextmanager
def throwaway_postgres() -> Iterator[str]:
    port = free_port()
    folder = Path(tempfile.mkdtemp(prefix="assay-pg-"))
    data = folder / "data"
    initdb, pg_ctl = postgres_bin("initdb"), postgres_bin("pg_ctl")
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres", "postgres")
    log(f"starting a throwaway PostgreSQL on port {port} in {folder}")
    try:
        subprocess.run(as_cluster_owner([initdb, "-D", str(data), "-U", "postgres",
                                         "-A", "trust", "--no-sync"]),
                       check=True, stdout=subprocess.DEVNULL)
        options = (f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=off "
                   "-c synchronous_commit=off -c full_page_writes=off -c max_connections=300")
        subprocess.run(as_cluster_owner([pg_ctl, "-D", str(data), "-o", options, "-w",
                                         "-l", str(folder / "log"), "start"]),
                       check=True, stdout=subprocess.DEVNULL)
        with psycopg.connect(f"postgresql://postgres@127.0.0.1:{port}/postgres",
                             autocommit=True) as conn:
            conn.execute("CREATE DATABASE test")
        yield f"postgresql://postgres@127.0.0.1:{port}/test"
    finally:
        if (data / "postmaster.pid").exists():
            subprocess.run(as_cluster_owner([pg_ctl, "-D", str(data), "-m", "immediate", "-w",
                                             "stop"]), stdout=subprocess.DEVNULL, check=False)
        shutil.rmtree(folder, ignore_errors=True)
        log("throwaway PostgreSQL removed")


@contextlib.contextmanager
def throwaway_redis(db: str) -> Iterator[str]:
    server = shutil.which("redis-server")
    if not server:
        apt_install("redis-server")
        server = shutil.which("redis-server") or "/usr/bin/redis-server"
    port = free_port()
    folder = tempfile.mkdtemp(prefix="assay-redis-")
    log(f"starting a throwaway Redis on port {port}")
    proc = subprocess.Popen([server, "--port", str(port), "--bind", "127.0.0.1",
                             "--save", "", "--appendonly", "no", "--dir", folder],
                            stdout=subprocess.DEVNULL, start_new_session=True)
    url = f"redis://127.0.0.1:{port}/{db}"
    try:
        deadline = time.monotonic() + READY_TIMEOUT
        while not redis_answers(url):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("the throwaway redis-server did not start")
            time.sleep(0.1)
        yield url
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)
        shutil.rmtree(folder, ignore_errors=True)
        log("throwaway Redis removed")


def redis_db(url: str) -> str:
    return urlsplit(url).path.lstrip("/") or "0"


def main(argv: list[str]) -> int:
    command = argv[1:] if argv[:1] == ["--"] else argv
    if not command:
        raise SystemExit("usage: python -m tests.services -- COMMAND [ARGS...]")
    pg_url = os.environ.get("POSTGRES_TEST_URL", PG_URL)
    redis_url = os.environ.get("ASSAY_TEST_REDIS_URL", REDIS_URL)
    with contextlib.ExitStack() as stack:
        if not postgres_answers(pg_url):
            log(f"no PostgreSQL answers at {pg_url}")
            pg_url = stack.enter_context(throwaway_postgres())
        if not redis_answers(redis_url):
            log(f"no Redis answers at {redis_url}")
            redis_url = stack.enter_context(throwaway_redis(redis_db(redis_url)))
        env = {**os.environ, "POSTGRES_TEST_URL": pg_url, "ASSAY_TEST_REDIS_URL": redis_url}
        # a Ctrl-C reaches the command (same process group); we wait for it, then clean up
        with contextlib.suppress(KeyboardInterrupt):
            return subprocess.run(command, env=env, check=False).returncode
    return 130


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
