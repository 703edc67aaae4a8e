"""`make test` anywhere: tests/services.py starts throwaway PostgreSQL and Redis only where
none answers, hands their URLs to the command, and removes them afterwards."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest
import redis
from tests.services import free_port, postgres_answers, redis_answers

ROOT = Path(__file__).resolve().parents[2]
PROBE = """
import json, os, sys, psycopg, redis
pg, rd = os.environ["POSTGRES_TEST_URL"], os.environ["ASSAY_TEST_REDIS_URL"]
with psycopg.connect(pg) as conn:
    version = conn.execute("SHOW server_version").fetchone()[0]
redis.Redis.from_url(rd).set("assay-probe", "1")
json.dump({"pg": pg, "redis": rd, "version": version}, open(sys.argv[1], "w"))
sys.exit(int(sys.argv[2]))
"""


def run_services(tmp_path: Path, env: dict[str, str], exit_code: int = 0) -> tuple[int, dict]:
    out = tmp_path / "seen.json"
    proc = subprocess.run(
        [sys.executable, "-m", "tests.services", "--", sys.executable, "-c", PROBE, str(out),
         str(exit_code)],
        cwd=ROOT, env={**os.environ, **env}, capture_output=True, text=True, timeout=120)
    assert out.exists(), proc.stderr
    return proc.returncode, json.loads(out.read_text())


def leftovers() -> set[str]:
    tmp = Path(os.environ.get("TMPDIR", "/tmp"))
    return {p.name for p in tmp.glob("assay-pg-*")} | {p.name for p in tmp.glob("assay-redis-*")}


def test_starts_throwaway_services_where_none_answer_and_removes_them(tmp_path: Path) -> None:
    before = leftovers()
    dead_pg = f"postgresql://postgres@127.0.0.1:{free_port()}/test"
    dead_redis = f"redis://127.0.0.1:{free_port()}/5"
    code, seen = run_services(tmp_path, {"POSTGRES_TEST_URL": dead_pg,
                                         "ASSAY_TEST_REDIS_URL": dead_redis}, exit_code=3)
    assert code == 3  # the command's exit code is passed through
    assert seen["pg"] != dead_pg and seen["pg"].endswith("/test")
    assert seen["redis"] != dead_redis and seen["redis"].endswith("/5")  # the db number is kept
    assert seen["version"]
    # gone afterwards: nothing answers on their ports and their folders are removed
    assert not postgres_answers(seen["pg"])
    assert not redis_answers(seen["redis"])
    assert leftovers() == before


def test_uses_the_running_services_where_they_answer(tmp_path: Path) -> None:
    pg = os.environ.get("ASSAY_TEST_DATABASE_URL") or "postgresql://postgres@127.0.0.1:5432/test"
    rd = os.environ.get("ASSAY_TEST_REDIS_URL", "redis://127.0.0.1:6379/13")
    if not (postgres_answers(pg) and redis_answers(rd)):
        pytest.skip("no PostgreSQL or Redis running here")
    code, seen = run_services(tmp_path, {"POSTGRES_TEST_URL": pg, "ASSAY_TEST_REDIS_URL": rd})
    assert code == 0
    assert seen == {**seen, "pg": pg, "redis": rd}
    assert redis.Redis.from_url(rd).get("assay-probe") == b"1"
    with psycopg.connect(pg) as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)
