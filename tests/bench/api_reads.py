"""API read latency with 1,000,000 outputs in PostgreSQL, under 50 concurrent clients.

In a process of its own (`python -m tests.bench --api-reads DATABASE_URL`): plans a run of
20,000 questions x a 50-value temperature grid with the real planner, marks every output
succeeded with plausible values in one UPDATE, sets the run's and targets' counters to match,
VACUUM ANALYZE, then starts the API as production does (`python -m assay serve`, gunicorn
gthread) and drives it with 50 asyncio clients over the read endpoints. Prints one JSON line.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

import aiohttp
from sqlalchemy import text

from assay.app import create_app
from assay.core.auth.service import create_api_token, register
from assay.core.datasets.service import create_dataset
from assay.core.llm.service import ensure_demo_models
from assay.core.projects.service import create_project
from assay.core.runs.planning import RunSpec, TargetSpec, plan_run
from assay.extensions import db
from assay.settings import Settings

CASES = 20_000
GRID = 50
CLIENTS = 50
SECONDS = 15.0
POINT_SECONDS = 5.0
ALONE_SECONDS = 4.0
BAR_MS = 50.0

_FILL_OUTPUTS = """
UPDATE outputs SET status = 'succeeded',
  text = 'The answer to question ' || case_id || ' is ' || (id % 97) || '.',
  latency_ms = 150 + (id::bigint * 7919) % 900, tokens_in = 12 + id % 40,
  tokens_out = 20 + id % 200,
  cost_micros = 3 * (12 + id % 40) + 6 * (20 + id % 200), attempts = 1, finished_at = now(),
  raw_request = '{"model": "fake-fast", "temperature": 0.5}',
  raw_response = '{"text": "The answer"}'
WHERE run_id = :run
"""
_FILL_TARGETS = """
UPDATE run_targets t SET succeeded = s.n, failed = 0, skipped = 0, spent_micros = s.cost,
  tokens_in = s.tin, tokens_out = s.tout
FROM (SELECT target_id, count(*) AS n, sum(cost_micros) AS cost, sum(tokens_in) AS tin,
             sum(tokens_out) AS tout FROM outputs WHERE run_id = :run GROUP BY target_id) s
WHERE t.id = s.target_id
"""
_FILL_RUN = """
UPDATE runs r SET status = 'completed', succeeded = s.n, failed = 0, skipped = 0,
  spent_micros = s.cost, reserved_micros = 0, tokens_in = s.tin, tokens_out = s.tout,
  started_at = now() - interval '1 hour', finished_at = now()
FROM (SELECT sum(succeeded) AS n, sum(spent_micros) AS cost, sum(tokens_in) AS tin,
             sum(tokens_out) AS tout FROM run_targets WHERE run_id = :run) s
WHERE r.id = :run
"""


def _seed(database_url: str) -> dict[str, Any]:
    """Plan and fill the 1M-cell run; returns ids, the token and the timings."""
    os.environ.update({"ASSAY_INSTANCE_PATH": tempfile.mkdtemp(prefix="assay-bench-"),
                       "DATABASE_URL": database_url, "ASSAY_BCRYPT_ROUNDS": "4"})
    app = create_app(Settings.from_env())
    with app.app_context():
        from flask_migrate import upgrade

        upgrade()
    with db.factory() as session:
        user = register(session, "reads@example.com", "Bench-password-1!", None, 4)
        project = create_project(session, user, "Reads bench")
        model = ensure_demo_models(session, user, project, "http://127.0.0.1:9")[0]
        dataset = create_dataset(session, user, project, "reads", "questions", [
            {"input": {"question": f"question {i}"}} for i in range(CASES)])
        _, token = create_api_token(session, user, "bench")
        session.commit()
        started = time.perf_counter()
        run = plan_run(session, user, project, RunSpec(
            dataset_id=dataset.id, targets=(TargetSpec(model.id, grid={
                "temperature": [round(0.02 * i, 2) for i in range(GRID)]}),)))
        session.commit()
        planned = time.perf_counter() - started
        assert run.total == CASES * GRID
        started = time.perf_counter()
        for sql in (_FILL_OUTPUTS, _FILL_TARGETS, _FILL_RUN):
            session.execute(text(sql), {"run": run.id})
        session.commit()
        filled = time.perf_counter() - started
        project_id, run_id = project.id, run.id
        targets = [t for (t,) in session.execute(text(
            "SELECT id FROM run_targets WHERE run_id = :run ORDER BY position"), {"run": run_id})]
        low, high = session.execute(text("SELECT min(id), max(id) FROM outputs"
                                         " WHERE run_id = :run"), {"run": run_id}).one()
    started = time.perf_counter()
    with db.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.execute(text("VACUUM ANALYZE"))
    vacuumed = time.perf_counter() - started
    return {"project_id": project_id, "run_id": run_id, "targets": targets,
            "output_ids": (low, high), "token": token, "plan_s": round(planned, 1),
            "fill_s": round(filled, 1), "vacuum_s": round(vacuumed, 1)}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _requests(seed: dict[str, Any]) -> list[tuple[str, Any]]:
    """(endpoint name, path or a function returning one) for the read mix."""
    base = f"/api/projects/{seed['project_id']}/runs"
    run = f"{base}/{seed['run_id']}"
    low, high = seed["output_ids"]
    targets = seed["targets"]
    return [
        ("runs", base),
        ("run", run),
        ("progress", f"{run}/progress"),
        ("outputs p1", f"{run}/outputs?page=1&page_size=50"),
        ("outputs p2000", f"{run}/outputs?page=2000&page_size=50"),
        ("outputs target", lambda: f"{run}/outputs?page=1&page_size=50"
                                   f"&target_id={random.choice(targets)}"),
        ("outputs failed", f"{run}/outputs?page=1&page_size=50&status=failed"),
        ("output", lambda: f"{run}/outputs/{random.randint(low, high)}"),
    ]


async def _load(url: str, token: str, mix: list[tuple[str, Any]], seconds: float,
                clients: int = CLIENTS) -> tuple[dict[str, list[float]], int]:
    timings: dict[str, list[float]] = {name: [] for name, _ in mix}
    errors = 0
    deadline = time.perf_counter() + seconds
    connector = aiohttp.TCPConnector(limit=clients)
    headers = {"Authorization": f"Bearer {token}"}
    async with aiohttp.ClientSession(url, connector=connector, headers=headers) as http:
        async def client(n: int) -> None:
            nonlocal errors
            i = n
            while time.perf_counter() < deadline:
                name, path = mix[i % len(mix)]
                i += 1
                sent = time.perf_counter()
                async with http.get(path() if callable(path) else path) as reply:
                    await reply.read()
                    if reply.status != 200:
                        errors += 1
                timings[name].append((time.perf_counter() - sent) * 1000)

        await asyncio.gather(*(client(n) for n in range(clients)))
    return timings, errors


def _p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20)[18] if len(values) > 1 else values[0]


def _percentiles(values: list[float]) -> dict[str, Any]:
    return {"n": len(values), "p50": round(statistics.median(values), 1),
            "p95": round(_p95(values), 1)}


def measure(database_url: str) -> dict[str, Any]:
    seed = _seed(database_url)
    port = _free_port()
    env = {**os.environ, "DATABASE_URL": database_url,
           "ASSAY_INSTANCE_PATH": tempfile.mkdtemp(prefix="assay-bench-")}
    server = subprocess.Popen([sys.executable, "-m", "assay", "serve", "--port", str(port)],
                              env=env, stdout=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        async def ready() -> None:
            async with aiohttp.ClientSession() as http:
                for _ in range(200):
                    try:
                        async with http.get(f"{url}/api/health") as reply:
                            if reply.status < 500:
                                return
                    except aiohttp.ClientError:
                        pass
                    await asyncio.sleep(0.1)
            raise RuntimeError("the API server did not start")

        asyncio.run(ready())
        mix = _requests(seed)
        asyncio.run(_load(url, seed["token"], mix, 2.0))  # warm up: connections, caches
        # One client alone: each endpoint's service time, without queueing.
        alone, _ = asyncio.run(_load(url, seed["token"], mix, ALONE_SECONDS, clients=1))
        load_before = os.getloadavg()[0]
        timings, errors = asyncio.run(_load(url, seed["token"], mix, SECONDS))
        load_after = os.getloadavg()[0]
        # The same clients on the point reads alone (no outputs list): how much of their
        # latency above is queueing behind the list queries.
        point, _ = asyncio.run(_load(url, seed["token"], [
            entry for entry in mix if not entry[0].startswith("outputs")], POINT_SECONDS))

        async def summaries() -> list[float]:
            out = []
            async with aiohttp.ClientSession(url, headers={
                    "Authorization": f"Bearer {seed['token']}"}) as http:
                for _ in range(3):
                    sent = time.perf_counter()
                    async with http.get(f"/api/projects/{seed['project_id']}/runs/"
                                        f"{seed['run_id']}/summary") as reply:
                        await reply.read()
                        assert reply.status == 200, reply.status
                    out.append((time.perf_counter() - sent) * 1000)
            return out

        summary_ms = asyncio.run(summaries())
    finally:
        server.terminate()
        server.wait(timeout=15)
    every = [v for values in timings.values() for v in values]
    return {
        "cells": CASES * GRID, "plan_s": seed["plan_s"], "fill_s": seed["fill_s"],
        "vacuum_s": seed["vacuum_s"], "clients": CLIENTS, "seconds": SECONDS,
        "requests": len(every), "errors": errors, "rps": round(len(every) / SECONDS),
        "load": [round(load_before, 2), round(load_after, 2)],
        "endpoints": {name: _percentiles(values) for name, values in timings.items() if values},
        "alone": {name: _percentiles(values) for name, values in alone.items() if values},
        "overall": _percentiles(every),
        "summary_ms": [round(v) for v in summary_ms],
        "point_reads": _percentiles([v for values in point.values() for v in values]),
    }


def report(figures: dict[str, Any]) -> list[str]:
    """The printed figure block."""
    overall = figures["overall"]
    lines = [f"API reads, {figures['cells']:,} outputs on PostgreSQL, {figures['clients']} "
             f"clients for {figures['seconds']:.0f} s: {figures['requests']} requests "
             f"({figures['rps']}/s, {figures['errors']} errors), p50 {overall['p50']} ms, "
             f"p95 {overall['p95']} ms = {overall['p95'] / BAR_MS:.3f} of the "
             f"{BAR_MS:.0f} ms bar (load average {figures['load'][0]} -> "
             f"{figures['load'][1]}; setup: plan {figures['plan_s']} s, fill "
             f"{figures['fill_s']} s, vacuum {figures['vacuum_s']} s)"]
    for name, values in figures["endpoints"].items():
        alone = figures["alone"].get(name, {"p50": "-"})
        lines.append(f"  {name:<15} p50 {values['p50']:>7} ms  p95 {values['p95']:>7} ms "
                     f"= {values['p95'] / BAR_MS:.3f} of the bar ({values['n']} requests; "
                     f"one client alone: p50 {alone['p50']} ms)")
    point = figures["point_reads"]
    lines.append(f"  point reads alone (runs, run, progress, output; {POINT_SECONDS:.0f} s): "
                 f"p50 {point['p50']} ms, p95 {point['p95']} ms "
                 f"= {point['p95'] / BAR_MS:.3f} of the bar ({point['n']} requests)")
    lines.append(f"  summary (aggregates 1M rows, not under the read bar; alone, after the "
                 f"load): {', '.join(str(v) for v in figures['summary_ms'])} ms")
    return lines


if __name__ == "__main__":
    print(json.dumps(measure(sys.argv[1])))
