"""Run make targets side by side, each on its own Redis database, and print each one's
output whole when it ends (interleaved pytest dots would be unreadable).

`python -m tests.parallel test-sqlite test-postgres`: the two Python suites wait mostly on
workers, servers and sockets, so on two cores they finish in well under their sum. Each
session already has its own database (a private PostgreSQL database, a SQLite file) and
its own Redis key prefix; RQ's queues are not prefixed, so each target gets the next Redis
database number of ASSAY_TEST_REDIS_URL. Exit status: the first failing target's.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile
import time
from urllib.parse import urlsplit, urlunsplit

DEFAULT_REDIS = "redis://127.0.0.1:6379/13"


def redis_url_for(base: str, offset: int) -> str:
    parts = urlsplit(base)
    db = int(parts.path.lstrip("/") or "0")
    return urlunsplit(parts._replace(path=f"/{(db + offset) % 16}"))


def main(targets: list[str]) -> int:
    if not targets:
        raise SystemExit("usage: python -m tests.parallel TARGET [TARGET...]")
    base = os.environ.get("ASSAY_TEST_REDIS_URL", DEFAULT_REDIS)
    make = os.environ.get("MAKE", "make")
    with contextlib.ExitStack() as logs:
        return _run(targets, base, make, logs)


def _run(targets: list[str], base: str, make: str, logs: contextlib.ExitStack) -> int:
    running = []
    for offset, target in enumerate(targets):
        log = logs.enter_context(tempfile.TemporaryFile())  # noqa: SIM115 (the stack closes it)
        env = {**os.environ, "ASSAY_TEST_REDIS_URL": redis_url_for(base, offset)}
        proc = subprocess.Popen([make, "--no-print-directory", target], env=env,
                                stdout=log, stderr=subprocess.STDOUT)
        print(f"[{target}] started on {env['ASSAY_TEST_REDIS_URL']}", flush=True)
        running.append((target, proc, log, time.monotonic()))
    status = 0
    while running:
        for item in list(running):
            target, proc, log, started = item
            if proc.poll() is None:
                continue
            running.remove(item)
            log.seek(0)
            print(f"\n===== {target}: exit {proc.returncode} after "
                  f"{time.monotonic() - started:.0f} s =====", flush=True)
            sys.stdout.buffer.write(log.read())
            sys.stdout.flush()
            status = status or proc.returncode
        time.sleep(1)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
