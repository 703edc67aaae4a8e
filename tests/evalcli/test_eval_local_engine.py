"""`assay eval` locally at the bench's shape (two models, concurrency 200, a `contains`
scorer), through the click entry point: each cell is called exactly once, and no Redis is
started or reached (local mode needs none)."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

from assay import redis_conn
from assay.cli import main
from assay.core.evalcli import runfiles
from assay.core.runs import service
from assay.providers.fake import FakeProviderThread
from assay.providers.fake_config import FakeConfig
from tests.bench.evalcli import CONCURRENCY, write_config

CASES = 300


def bench_like(url: str, folder: Path) -> Path:
    return write_config(url, folder, cases=CASES)


@pytest.fixture
def no_redis(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every attempt to start or reach a Redis, recorded (and refused)."""
    tried: list[str] = []

    def refuse(settings: object) -> str:
        tried.append(str(settings))
        raise AssertionError("local mode reached for a Redis")

    monkeypatch.setattr(redis_conn, "embedded_url", refuse)
    monkeypatch.delenv("REDIS_URL", raising=False)
    return tried


def test_each_cell_is_called_once_and_counted_once(tmp_path: Path,
                                                   no_redis: list[str]) -> None:
    started = set(redis_conn._embedded)  # earlier tests of the session may have started one
    # jitter spreads the replies so slots free up one by one, as against a real provider
    with FakeProviderThread(FakeConfig(latency_ms=20.0, jitter_ms=20.0, seed=3)) as fake:
        result = CliRunner().invoke(main, [
            "eval", str(bench_like(fake.url, tmp_path)), "-q", "--no-cache",
            "--runs-dir", str(tmp_path / "runs")], env={"ASSAY_FAKE_PROVIDER_URL": ""})
        stats = httpx.get(f"{fake.url}/_fake/stats").json()
    assert result.exit_code == 0, result.output
    run = runfiles.read_run(runfiles.resolve(tmp_path / "runs", "latest"))
    cells = 2 * CASES
    assert run.metadata["totals"]["succeeded"] == cells
    assert Counter(r["attempts"] for r in run.responses) == {1: cells}
    assert stats["total"] == cells  # what the provider received: one request a cell
    assert stats["peak_concurrency"] <= CONCURRENCY
    assert sum(e["scorer"] == "says" for e in run.evaluations) == cells
    assert no_redis == [] and set(redis_conn._embedded) == started


def test_retries_are_counted_with_their_cell(tmp_path: Path, no_redis: list[str]) -> None:
    """With faults, a cell's attempts are its requests: the run files' total matches what
    the provider received (a failed first try and its retry are one cell, two attempts)."""
    with FakeProviderThread(FakeConfig(latency_ms=5.0, fault_rate=0.2, faults=("500",),
                                       seed=11)) as fake:
        result = CliRunner().invoke(main, [
            "eval", str(bench_like(fake.url, tmp_path)), "-q", "--no-cache",
            "--runs-dir", str(tmp_path / "runs")], env={"ASSAY_FAKE_PROVIDER_URL": ""})
        stats = httpx.get(f"{fake.url}/_fake/stats").json()
    assert result.exit_code in (0, 4), result.output
    run = runfiles.read_run(runfiles.resolve(tmp_path / "runs", "latest"))
    attempts = [r["attempts"] for r in run.responses]
    assert len(attempts) == 2 * CASES and min(attempts) >= 1
    assert sum(attempts) == stats["total"] > 2 * CASES
    assert no_redis == []


def test_claims_and_writes_take_turns_on_sqlite(tmp_path: Path, no_redis: list[str],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """SQLite has one writer at a time and makes the others poll for it, in sleeps of up to
    100 ms: a shard's claims, result writes and renewals wait for each other on a lock
    instead, so no two of them are ever inside the database at once."""
    inside: list[str] = []
    overlaps: list[tuple[str, ...]] = []
    guard = threading.Lock()

    def watched(name: str, real: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            with guard:
                if inside:
                    overlaps.append((*inside, name))
                inside.append(name)
            try:
                time.sleep(0.002)  # long enough for an unguarded other to come in
                return real(*args, **kwargs)
            finally:
                with guard:
                    inside.remove(name)
        return call

    for name in ("claim_cells", "record_results", "renew_leases"):
        monkeypatch.setattr(service, name, watched(name, getattr(service, name)))
    with FakeProviderThread(FakeConfig(latency_ms=10.0, jitter_ms=10.0, seed=5)) as fake:
        result = CliRunner().invoke(main, [
            "eval", str(bench_like(fake.url, tmp_path)), "-q", "--no-cache",
            "--runs-dir", str(tmp_path / "runs")], env={"ASSAY_FAKE_PROVIDER_URL": ""})
    assert result.exit_code == 0, result.output
    run = runfiles.read_run(runfiles.resolve(tmp_path / "runs", "latest"))
    assert run.metadata["totals"]["succeeded"] == 2 * CASES
    assert overlaps == []
