"""The soak of DESIGN.md section 9 "real use", long: `make run`'s processes with simulated
users and schemathesis `--checks all` for SOAK_SECONDS on SQLite, then on PostgreSQL
(tests/soak/). Prints read p50/p95 before, during and after, the ratio after/before, the
pool's checked-out count at the end, the count of 5xx, and each problem found with the
request behind it.

    python -m tests.bench.soak [SECONDS]   (also part of `make bench`: python -m tests.bench)

ASSAY_BENCH_REDIS_URL (default redis://127.0.0.1:6379/14) and ASSAY_BENCH_POSTGRES_URL
(a server's URL; the soak makes a database of its own there) as for the other figures.
ASSAY_SOAK_DATABASES (default "SQLite,PostgreSQL") picks the databases, e.g. for an hour on one.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import psycopg
from sqlalchemy.engine import make_url

from tests.soak.driver import SoakConfig, soak
from tests.soak.stack import SoakStack

SOAK_SECONDS = 150.0


def _postgres_server() -> str | None:
    url = os.environ.get("ASSAY_BENCH_POSTGRES_URL",
                         "postgresql://postgres@127.0.0.1:5432/postgres")
    try:
        with psycopg.connect(make_url(url).set(drivername="postgresql").render_as_string(
                hide_password=False), connect_timeout=3):
            return url
    except psycopg.OperationalError:
        return None


def lines(seconds: float = SOAK_SECONDS) -> list[str]:
    redis_url = os.environ.get("ASSAY_BENCH_REDIS_URL", "redis://127.0.0.1:6379/14")
    out = []
    chosen = os.environ.get("ASSAY_SOAK_DATABASES", "SQLite,PostgreSQL").split(",")
    for label in [name for name in ("SQLite", "PostgreSQL") if name in chosen]:
        workdir = Path(tempfile.mkdtemp(prefix="assay-soak-"))
        url = f"sqlite:///{workdir / 'assay.db'}" if label == "SQLite" else _postgres_server()
        if url is None:
            out.append(f"soak on {label}: skipped (no server)")
            continue
        stack = SoakStack(workdir, url, redis_url)
        try:
            stack.start()
            result = soak(stack, SoakConfig(seconds=seconds, users=8, shared=3,
                                            probe_rounds=15))
        except Exception as error:  # the other database's figures still count
            out.append(f"soak on {label}: failed: {type(error).__name__}: {error}"[:3000])
            continue
        finally:
            stack.stop()
        out += result.lines()
        out += [f"  PROBLEM: {problem}" for problem in result.problems()] or ["  no problem"]
        out.append(f"  (logs in {workdir})")
    return out


if __name__ == "__main__":
    print("\n".join(lines(float(sys.argv[1]) if sys.argv[1:] else SOAK_SECONDS)), flush=True)
