"""API read latency with 1,000,000 outputs in PostgreSQL, under 50 concurrent clients.

In a process of its own (`python -m tests.bench --api-reads DATABASE_URL [--reuse]
[-- serve options]`): plans a run of 20,000 questions x a 50-value temperature grid with the
real planner, marks every output succeeded with plausible values in one UPDATE, sets the
run's and targets' counters to match, VACUUM ANALYZE (`--reuse`: the run an earlier call left
in that database), then starts the API as production does (`python -m assay serve`,
gunicorn) and drives it with `wrk` (C, event-driven: the load generator is not Python-bound;
the asyncio client below when wrk is not installed) from a process of its own: each endpoint
alone with 50 connections, then all of them mixed. Prints one JSON line.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
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
SECONDS = 15.0  # the mixed load
ENDPOINT_SECONDS = 4.0  # each endpoint alone
BAR_MS = 50.0
GRID_COLUMNS = 4  # the grid page's visible targets (a 50-column page is measured apart)

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


def _seed(database_url: str, reuse: bool) -> dict[str, Any]:
    """Plan and fill the 1M-cell run (or find the one an earlier call left); returns ids, a
    fresh token and the timings."""
    os.environ.update({"ASSAY_INSTANCE_PATH": tempfile.mkdtemp(prefix="assay-bench-"),
                       "DATABASE_URL": database_url, "ASSAY_BCRYPT_ROUNDS": "4"})
    app = create_app(Settings.from_env())
    with app.app_context():
        from flask_migrate import upgrade

        upgrade()
    if reuse:
        found = _existing()
        if found is not None:
            return found
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


def _existing() -> dict[str, Any] | None:
    from sqlalchemy import select

    from assay.core.auth.models import User

    with db.factory() as session:
        user = session.scalar(select(User).where(User.email == "reads@example.com"))
        row = session.execute(text("SELECT project_id, id FROM runs WHERE total = :n ORDER BY id"
                                   " DESC LIMIT 1"), {"n": CASES * GRID}).first()
        if user is None or row is None:
            return None
        _, token = create_api_token(session, user, "bench")
        session.commit()
        project_id, run_id = row
        targets = [t for (t,) in session.execute(text(
            "SELECT id FROM run_targets WHERE run_id = :run ORDER BY position"), {"run": run_id})]
        low, high = session.execute(text("SELECT min(id), max(id) FROM outputs"
                                         " WHERE run_id = :run"), {"run": run_id}).one()
    return {"project_id": project_id, "run_id": run_id, "targets": targets,
            "output_ids": (low, high), "token": token, "plan_s": None, "fill_s": None,
            "vacuum_s": None}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _requests(seed: dict[str, Any]) -> list[tuple[str, str | tuple[str, str]]]:
    """(endpoint, path) of the read mix; a path may be (template, kind): `{output}` becomes
    a random output id, `{target}` a random target id of the run, per request."""
    project = f"/api/projects/{seed['project_id']}"
    run = f"{project}/runs/{seed['run_id']}"
    columns = ",".join(str(t) for t in seed["targets"][:GRID_COLUMNS])
    return [
        ("runs", f"{project}/runs"),
        ("run", run),
        ("progress", f"{run}/progress"),
        ("outputs p1", f"{run}/outputs?page=1&page_size=50"),
        ("outputs p2000", f"{run}/outputs?page=2000&page_size=50"),
        ("outputs target", (f"{run}/outputs?page=1&page_size=50&target_id={{target}}", "target")),
        ("outputs failed", f"{run}/outputs?page=1&page_size=50&status=failed"),
        ("output", (f"{run}/outputs/{{output}}", "output")),
        ("grid p1", f"{run}/grid?offset=0&limit=50&target_ids={columns}"),
        ("grid p200", f"{run}/grid?offset=10000&limit=50&target_ids={columns}"),
        ("projects", "/api/projects"),
        ("datasets", f"{project}/datasets"),
        ("models", f"{project}/models"),
    ]


_LUA = """
local token, low, high = "%(token)s", %(low)d, %(high)d
local targets = {%(targets)s}
local paths = {%(paths)s}
wrk.headers["Authorization"] = "Bearer " .. token
local n = 0
local threads = 0
setup = function(thread) threads = threads + 1; thread:set("seed", threads) end
init = function(args) math.randomseed(os.time() * 100 + seed) end
request = function()
  n = n + 1
  local p = paths[(n %% #paths) + 1]
  p = p:gsub("{output}", function() return tostring(math.random(low, high)) end)
  p = p:gsub("{target}", function() return tostring(targets[math.random(#targets)]) end)
  return wrk.format("GET", p)
end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('{"requests": %%d, "duration_us": %%d, "status_errors": %%d, ' ..
    '"socket_errors": %%d, "p50_us": %%d, "p95_us": %%d, "p99_us": %%d}\\n', summary.requests,
    summary.duration, e.status, e.connect + e.read + e.write + e.timeout,
    latency:percentile(50), latency:percentile(95), latency:percentile(99)))
end
"""


def _lua(seed: dict[str, Any], paths: list[str]) -> str:
    low, high = seed["output_ids"]
    quoted = ", ".join(json.dumps(p) for p in paths)
    return _LUA % {"token": seed["token"], "low": low, "high": high, "paths": quoted,
                   "targets": ", ".join(str(t) for t in seed["targets"])}


def _wrk(url: str, seed: dict[str, Any], paths: list[str], seconds: float,
         clients: int = CLIENTS) -> dict[str, Any]:
    """One wrk run over `paths` (round robin); its figures and its own CPU time."""
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as script:
        script.write(_lua(seed, paths))
    before = os.times()
    out = subprocess.run(["wrk", "-t2", f"-c{clients}", f"-d{seconds:.0f}s", "--timeout", "10s",
                          "-s", script.name, url], capture_output=True, text=True, check=True)
    after = os.times()
    os.unlink(script.name)
    lines = out.stdout.strip().splitlines()
    if not lines or not lines[-1].startswith("{"):
        raise RuntimeError(f"wrk said: {out.stdout[-500:]} {out.stderr[-500:]}")
    figures = json.loads(lines[-1])
    seconds_run = figures["duration_us"] / 1e6
    cpu = (after.children_user - before.children_user
           + after.children_system - before.children_system)
    return {"n": figures["requests"], "p50": round(figures["p50_us"] / 1000, 1),
            "p95": round(figures["p95_us"] / 1000, 1), "p99": round(figures["p99_us"] / 1000, 1),
            "rps": round(figures["requests"] / seconds_run),
            "errors": figures["status_errors"] + figures["socket_errors"],
            "generator_cpu": round(cpu / seconds_run, 3)}


def _resolve(path: str | tuple[str, str], seed: dict[str, Any]) -> str:
    if isinstance(path, str):
        return path
    low, high = seed["output_ids"]
    return (path[0].replace("{output}", str(random.randint(low, high)))
            .replace("{target}", str(random.choice(seed["targets"]))))


async def _load(url: str, seed: dict[str, Any], paths: list[str | tuple[str, str]],
                seconds: float, clients: int = CLIENTS) -> dict[str, Any]:
    """The fallback generator (no wrk): asyncio clients; its figures and CPU like _wrk's."""
    timings: list[float] = []
    errors = 0
    started, cpu = time.perf_counter(), time.process_time()
    deadline = started + seconds
    connector = aiohttp.TCPConnector(limit=clients)
    headers = {"Authorization": f"Bearer {seed['token']}"}
    async with aiohttp.ClientSession(url, connector=connector, headers=headers) as http:
        async def client(n: int) -> None:
            nonlocal errors
            i = n
            while time.perf_counter() < deadline:
                path = _resolve(paths[i % len(paths)], seed)
                i += 1
                sent = time.perf_counter()
                async with http.get(path) as reply:
                    await reply.read()
                    errors += reply.status != 200
                timings.append((time.perf_counter() - sent) * 1000)

        await asyncio.gather(*(client(n) for n in range(clients)))
    elapsed = time.perf_counter() - started
    cuts = statistics.quantiles(timings, n=100)
    return {"n": len(timings), "p50": round(statistics.median(timings), 1),
            "p95": round(cuts[94], 1), "p99": round(cuts[98], 1),
            "rps": round(len(timings) / elapsed), "errors": errors,
            "generator_cpu": round((time.process_time() - cpu) / elapsed, 3)}


def _drive(url: str, seed: dict[str, Any], paths: list[str | tuple[str, str]], seconds: float,
           clients: int = CLIENTS) -> dict[str, Any]:
    if shutil.which("wrk"):
        return _wrk(url, seed, [p if isinstance(p, str) else p[0] for p in paths], seconds,
                    clients)
    return asyncio.run(_load(url, seed, paths, seconds, clients))


def _server_cpu(pid: int) -> float:
    """CPU seconds used so far by the server: gunicorn's arbiter and its workers."""
    total = 0.0
    tick = os.sysconf("SC_CLK_TCK")
    for each in [pid, *_children(pid)]:
        try:
            with open(f"/proc/{each}/stat") as stat:
                parts = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(parts[11]) + int(parts[12])) / tick  # utime, stime
    return total


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as found:
            return [int(p) for p in found.read().split()]
    except OSError:
        return []


def _wait_ready(url: str, seconds: float = 120.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{url}/api/health", timeout=2) as reply:
                if reply.status < 500:
                    return
        except (OSError, urllib.error.HTTPError):
            pass
        time.sleep(0.2)
    raise RuntimeError("the API server did not start")


def _timed_get(url: str, path: str, token: str) -> float:
    request = urllib.request.Request(f"{url}{path}", headers={"Authorization": f"Bearer {token}"})
    sent = time.perf_counter()
    with urllib.request.urlopen(request, timeout=120) as reply:
        reply.read()
        assert reply.status == 200, reply.status
    return (time.perf_counter() - sent) * 1000


def measure(database_url: str, reuse: bool = False,
            serve_args: list[str] | None = None) -> dict[str, Any]:
    seed = _seed(database_url, reuse)
    port = _free_port()
    env = {**os.environ, "DATABASE_URL": database_url,
           "ASSAY_INSTANCE_PATH": tempfile.mkdtemp(prefix="assay-bench-")}
    server = subprocess.Popen([sys.executable, "-m", "assay", "serve", "--port", str(port),
                               *(serve_args or [])], env=env, stdout=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    mix = _requests(seed)
    run = f"/api/projects/{seed['project_id']}/runs/{seed['run_id']}"
    try:
        _wait_ready(url)
        _drive(url, seed, [p for _, p in mix], 3.0)  # warm up: connections, caches
        endpoints = {name: _drive(url, seed, [path], ENDPOINT_SECONDS) for name, path in mix}
        load_before = os.getloadavg()[0]
        cpu_before, wall_before = _server_cpu(server.pid), time.perf_counter()
        overall = _drive(url, seed, [p for _, p in mix], SECONDS)
        server_cpu = (_server_cpu(server.pid) - cpu_before) / (time.perf_counter() - wall_before)
        load_after = os.getloadavg()[0]
        alone = {"summary": [round(_timed_get(url, f"{run}/summary", seed["token"]))
                             for _ in range(2)],
                 "grid, all 50 columns": [round(_timed_get(
                     url, f"{run}/grid?offset=0&limit=50", seed["token"])) for _ in range(3)]}
    finally:
        server.terminate()
        server.wait(timeout=30)
    return {
        "cells": CASES * GRID, "plan_s": seed["plan_s"], "fill_s": seed["fill_s"],
        "vacuum_s": seed["vacuum_s"], "clients": CLIENTS, "seconds": SECONDS,
        "generator": "wrk" if shutil.which("wrk") else "asyncio",
        "serve": ["assay", "serve", *(serve_args or [])], "cores": os.cpu_count(),
        "load": [round(load_before, 2), round(load_after, 2)],
        "server_cpu": round(server_cpu, 2), "endpoints": endpoints, "overall": overall,
        "alone_ms": alone,
    }


def report(figures: dict[str, Any]) -> list[str]:
    """The printed figure block."""
    overall = figures["overall"]
    setup = ("reused the seeded run" if figures["plan_s"] is None else
             f"plan {figures['plan_s']} s, fill {figures['fill_s']} s, "
             f"vacuum {figures['vacuum_s']} s")
    lines = [
        f"API reads, {figures['cells']:,} outputs on PostgreSQL, {figures['clients']} clients "
        f"({figures['generator']}, closed loop), `{' '.join(figures['serve'])}` on "
        f"{figures['cores']} cores; load average {figures['load'][0]} -> {figures['load'][1]}; "
        f"setup: {setup}",
        f"  {'all mixed':<15} p50 {overall['p50']:>7} ms  p95 {overall['p95']:>7} ms "
        f"= {overall['p95'] / BAR_MS:.3f} of the {BAR_MS:.0f} ms bar, {overall['rps']}/s "
        f"({overall['n']} requests, {overall['errors']} errors, {figures['seconds']:.0f} s); "
        f"server CPU {figures['server_cpu']} cores, generator CPU "
        f"{overall['generator_cpu']} cores",
        f"  closed loop: latency = clients / throughput, so p50 <= {BAR_MS:.0f} ms needs "
        f"{figures['clients'] * 1000 / BAR_MS:.0f} requests/s; each endpoint alone "
        f"({ENDPOINT_SECONDS:.0f} s, {figures['clients']} clients):"]
    for name, values in figures["endpoints"].items():
        lines.append(f"  {name:<15} p50 {values['p50']:>7} ms  p95 {values['p95']:>7} ms "
                     f"= {values['p95'] / BAR_MS:.3f} of the bar, {values['rps']:>5}/s "
                     f"({values['errors']} errors; generator CPU {values['generator_cpu']})")
    for name, values in figures["alone_ms"].items():
        lines.append(f"  {name} (one request at a time, after the load, not under the "
                     f"read bar): {', '.join(str(v) for v in values)} ms")
    return lines


if __name__ == "__main__":
    args = sys.argv[1:]
    serve = args[args.index("--") + 1:] if "--" in args else []
    args = args[:args.index("--")] if "--" in args else args
    print(json.dumps(measure(args[0], "--reuse" in args, serve)))
