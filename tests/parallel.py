"""Run make targets side by side, a few at a time, each on its own Redis database, and print
each one's output whole when it ends (interleaved pytest dots would be unreadable).

`python -m tests.parallel [--jobs N] TARGET...`: at most N targets (default 2) run at once,
taken in the order given; when one ends, the next starts. The two Python suites wait mostly
on workers, servers and sockets, so on two cores they finish in well under their sum, and
the web tests and the browser tests then take the place of whichever suite ends first
instead of waiting for the longer one. Each session already has its own database (a private
PostgreSQL database, a SQLite file) and its own Redis key prefix; RQ's queues are not
prefixed, so each target gets the next Redis database number of ASSAY_TEST_REDIS_URL.
Exit status: the first failing target's; the targets not yet started when one fails still
run, so one run reports every failure.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import IO
from urllib.parse import urlsplit, urlunsplit

DEFAULT_REDIS = "redis://127.0.0.1:6379/13"


def redis_url_for(base: str, offset: int) -> str:
    parts = urlsplit(base)
    db = int(parts.path.lstrip("/") or "0")
    return urlunsplit(parts._replace(path=f"/{(db + offset) % 16}"))


@dataclass
class _Running:
    target: str
    proc: subprocess.Popen[bytes]
    log: IO[bytes]
    started: float


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.parallel")
    parser.add_argument("--jobs", type=int, default=2, help="targets at once (default 2)")
    parser.add_argument("targets", nargs="+")
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")
    base = os.environ.get("ASSAY_TEST_REDIS_URL", DEFAULT_REDIS)
    make = os.environ.get("MAKE", "make")
    with contextlib.ExitStack() as logs:
        return _run(args.targets, args.jobs, base, make, logs)


def _start(target: str, offset: int, base: str, make: str,
           logs: contextlib.ExitStack) -> _Running:
    log = logs.enter_context(tempfile.TemporaryFile())  # noqa: SIM115 (the stack closes it)
    env = {**os.environ, "ASSAY_TEST_REDIS_URL": redis_url_for(base, offset)}
    proc = subprocess.Popen([make, "--no-print-directory", target], env=env,
                            stdout=log, stderr=subprocess.STDOUT)
    print(f"[{target}] started on {env['ASSAY_TEST_REDIS_URL']}", flush=True)
    return _Running(target, proc, log, time.monotonic())


def _report(item: _Running) -> None:
    item.log.seek(0)
    print(f"\n===== {item.target}: exit {item.proc.returncode} after "
          f"{time.monotonic() - item.started:.0f} s =====", flush=True)
    sys.stdout.buffer.write(item.log.read())
    sys.stdout.flush()


def _run(targets: list[str], jobs: int, base: str, make: str,
         logs: contextlib.ExitStack) -> int:
    waiting = list(enumerate(targets))
    running: list[_Running] = []
    status = 0
    while waiting or running:
        while waiting and len(running) < jobs:
            offset, target = waiting.pop(0)
            running.append(_start(target, offset, base, make, logs))
        for item in list(running):
            if item.proc.poll() is None:
                continue
            running.remove(item)
            _report(item)
            status = status or item.proc.returncode
        time.sleep(1)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
