"""`make bench`: DESIGN.md section 9 figures measured in one run, printed as ratios to the bar.

Uses the real engine (shard runner, SQLite file, real Redis) against the fake provider at
100 ms latency, and a real HTTP server for the SSE delivery figure.
"""

from __future__ import annotations

import asyncio
import json
import logging
import multiprocessing
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from typing import Any

import httpx
from sqlalchemy import func, select
from werkzeug.serving import make_server

from assay.app import create_app
from assay.core.auth.service import create_api_token, register
from assay.core.datasets.service import create_dataset
from assay.core.llm.service import ensure_demo_models
from assay.core.projects.service import create_project
from assay.core.runs.models import Output
from assay.core.runs.planning import RunSpec, TargetSpec, plan_run
from assay.core.scoring.models import Score
from assay.core.scoring.service import create_scorer
from assay.events.publish import PROGRESS
from assay.extensions import db
from assay.jobs.runs import _Shard
from assay.observability import tracing
from assay.runtime import current
from assay.settings import Settings
from tests.bench import (
    api_reads,
    arena,
    arena_fcp,
    evalcli,
    experiment_report,
    experiments,
    fcp,
    promptfoo,
    report_html,
    reports,
    scale,
    slow_lane,
)

LATENCY_S = 0.1
PLAN_BAR_S = 3.0


def _setup(fake_url: str, concurrency: int, database_url: str | None = None) -> Settings:
    instance = tempfile.mkdtemp(prefix="assay-bench-")
    env = {"ASSAY_INSTANCE_PATH": instance, "ASSAY_BCRYPT_ROUNDS": "4",
           "ASSAY_FAKE_PROVIDER_URL": fake_url, "ASSAY_RUN_CONCURRENCY": str(concurrency),
           "REDIS_URL": os.environ.get("ASSAY_BENCH_REDIS_URL", "redis://127.0.0.1:6379/14")}
    os.environ.update(env)
    os.environ.pop("DATABASE_URL", None)  # the instance's SQLite file unless told otherwise
    if database_url is not None:
        os.environ["DATABASE_URL"] = database_url
    return Settings.from_env()


def _plan_run(settings: Settings, cells: int, scored: bool = True) -> tuple[int, int, str]:
    """A run of `cells` questions on one fake model; `scored`: with a reference check (the
    replies say "... says: question N"), as the throughput bars ask."""
    with db.factory() as session:
        user = register(session, f"bench{time.time_ns()}@example.com", "Bench-password-1!",
                        None, 4)
        project = create_project(session, user, "Bench")
        models = ensure_demo_models(session, user, project, settings.fake_provider_url)[:1]
        cases = [{"input": {"question": f"question {i}"}} for i in range(cells)]
        dataset = create_dataset(session, user, project, "bench", "questions", cases)
        scorers = (create_scorer(session, user, project, {
            "name": "says", "kind": "icontains", "params": {"value": "question"}})[0].id,) \
            if scored else ()
        run = plan_run(session, user, project, RunSpec(
            dataset_id=dataset.id, targets=tuple(TargetSpec(m.id) for m in models),
            scorer_ids=scorers))
        _, token = create_api_token(session, user, "bench")
        session.commit()
        return project.id, run.id, token


def _shard_process(run_id: int, go: Any) -> None:
    db.engine.dispose(close=False)  # the parent's connections stay the parent's
    go.wait()
    asyncio.run(_Shard(current(), run_id).run())


def _job_carrier(sampled: bool) -> dict[str, str]:
    """The trace context a request puts in the job it enqueues: one the sampler kept
    (`sampled`), or one it dropped."""
    from opentelemetry.propagate import inject
    from opentelemetry.trace import (
        NonRecordingSpan,
        SpanContext,
        TraceFlags,
        set_span_in_context,
    )

    parent = SpanContext(trace_id=time.time_ns(), span_id=1, is_remote=True,
                         trace_flags=TraceFlags(TraceFlags.SAMPLED if sampled else 0))
    carrier: dict[str, str] = {}
    inject(carrier, context=set_span_in_context(NonRecordingSpan(parent)))
    return carrier


def throughput(fake_url: str, concurrency: int, shards: int = 1, seconds: float = 4.0,
               scored: bool = True, database_url: str | None = None,
               traced: bool | None = None) -> dict[str, Any]:
    """A run of `concurrency / LATENCY_S * seconds` cells with `concurrency` calls in flight
    in all (the run's concurrency holds over its shards): one shard in this process, or
    `shards` shard processes (as on that many workers); on SQLite, or on `database_url`.
    `traced` (one shard, tracing set up): the shard runs as a worker's job does, in a job
    span whose request was sampled (True) or not (False)."""
    settings = _setup(fake_url, concurrency, database_url)
    app = create_app(settings)
    with app.app_context():
        from flask_migrate import upgrade

        upgrade()
    cells = int(concurrency / LATENCY_S * seconds)
    _, run_id, _ = _plan_run(settings, cells, scored)
    cpu_started = time.process_time()
    if shards == 1:
        carrier = None if traced is None else _job_carrier(traced)
        started = time.perf_counter()
        with tracing.job_span("execute_run", carrier) if carrier is not None else nullcontext():
            asyncio.run(_Shard(current(), run_id).run())
        elapsed = time.perf_counter() - started
        cpu = time.process_time() - cpu_started
    else:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        forks = multiprocessing.get_context("fork")
        go = forks.Event()
        children = [forks.Process(target=_shard_process, args=(run_id, go))
                    for _ in range(shards)]
        for child in children:
            child.start()
        time.sleep(0.3)  # forked and waiting
        started = time.perf_counter()
        go.set()
        for child in children:
            child.join()
        elapsed = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)  # cumulative: take the delta
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    with db.factory() as session:
        done = session.scalar(select(func.count()).where(
            Output.run_id == run_id, Output.status == "succeeded"))
        scored_count = session.scalar(select(func.count()).where(Score.run_id == run_id))
    if done != cells or (scored and scored_count != cells):
        raise RuntimeError(f"the bench run ended with {done} of {cells} cells succeeded, "
                           f"{scored_count} scored")
    rate = cells / elapsed
    limit = concurrency / LATENCY_S
    return {"concurrency": concurrency, "shards": shards, "cells": cells, "scored": scored_count,
            "seconds": round(elapsed, 2), "calls_per_s": round(rate), "limit": round(limit),
            "ratio": round(rate / limit, 3), "cpu_ms_per_call": round(cpu * 1000 / cells, 3)}


def client_throughput(fake_url: str, concurrency: int, seconds: float = 4.0) -> dict[str, Any]:
    """The LLM client alone (no database, no engine): `concurrency` calls in flight at once
    against the fake provider in its own process, for about `seconds`."""
    from assay.providers.base import ChatRequest, Endpoint
    from assay.providers.client import LLMClient

    calls = int(concurrency / LATENCY_S * seconds)
    endpoint = Endpoint("fake", fake_url, "bench")
    request = ChatRequest("fake-fast", [{"role": "user", "content": "question for the bench"}],
                          {"temperature": 0, "max_tokens": 64})

    async def main() -> tuple[float, float, int]:
        async with LLMClient(max_connections=concurrency) as client:
            async def worker(n: int) -> int:
                failed = 0
                for _ in range(n):
                    failed += (await client.chat(endpoint, request)).error is not None
                return failed

            await asyncio.gather(*(worker(1) for _ in range(concurrency)))  # connect, warm up
            started, cpu_started = time.perf_counter(), time.process_time()
            share, extra = divmod(calls, concurrency)
            failures = await asyncio.gather(*(worker(share + (i < extra))
                                              for i in range(concurrency)))
            return (time.perf_counter() - started, time.process_time() - cpu_started,
                    sum(failures))

    elapsed, cpu, failed = asyncio.run(main())
    rate, limit = calls / elapsed, concurrency / LATENCY_S
    return {"concurrency": concurrency, "calls": calls, "failed": failed,
            "seconds": round(elapsed, 2), "calls_per_s": round(rate), "limit": round(limit),
            "ratio": round(rate / limit, 3), "cpu_ms_per_call": round(cpu * 1000 / calls, 3)}


def sse_latency(samples: int = 40) -> dict[str, Any]:
    """Time from XADD to the frame arriving at an HTTP client of the SSE endpoint."""
    rt = current()
    project_id, run_id, token = _plan_run(rt.settings, 1)
    server = make_server("127.0.0.1", 0, create_app(rt.settings), threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_port}/api/projects/{project_id}/runs/{run_id}/events"
    delays: list[float] = []
    with httpx.stream("GET", url, headers={"Authorization": f"Bearer {token}"},
                      timeout=30) as reply:
        lines = reply.iter_lines()
        next(lines)  # the retry: line
        for _ in range(samples):
            sent = time.perf_counter()
            rt.publish(run_id, PROGRESS, {"n": 1})
            for line in lines:
                if line.startswith("data:"):
                    delays.append((time.perf_counter() - sent) * 1000)
                    break
            time.sleep(0.02)
    server.shutdown()
    p95 = statistics.quantiles(delays, n=20)[18]
    return {"p50_ms": round(statistics.median(delays), 2), "p95_ms": round(p95, 2),
            "bar_ms": 100, "ratio_to_bar": round(p95 / 100, 3)}


IMPORT_ROWS = 10_000
IMPORT_BAR_S = 5.0


def _import_csv(rows: int) -> str:
    lines = ["question,answer,tags,level"]
    lines += [f"\"What is {i} + {i}, and why?\",{2 * i},\"math,bench\",easy" for i in range(rows)]
    return "\n".join(lines) + "\n"


def import_in_process(database_url: str) -> float:
    """Seconds to validate and commit IMPORT_ROWS CSV rows into a dataset (in this process,
    against `database_url`): parse, map, check every row, bulk insert, one commit."""
    from flask_migrate import upgrade

    from assay.core.datasets.importing import import_cases

    os.environ.update({"ASSAY_INSTANCE_PATH": tempfile.mkdtemp(prefix="assay-bench-"),
                       "DATABASE_URL": database_url, "ASSAY_BCRYPT_ROUNDS": "4"})
    app = create_app(Settings.from_env())
    with app.app_context():
        upgrade()
    content = _import_csv(IMPORT_ROWS)
    mapping = {"variables": {"question": "question"}, "expected": "answer", "tags": "tags",
               "difficulty": "level"}
    with app.app_context(), db.factory() as session:
        user = register(session, "import@example.com", "Bench-password-1!", None, 4)
        project = create_project(session, user, "Import bench")
        dataset = create_dataset(session, user, project, "imported", "questions", [])
        session.commit()
        started = time.perf_counter()
        version = import_cases(session, user, project, dataset, "csv", content, mapping,
                               None)
        session.commit()
        elapsed = time.perf_counter() - started
        assert version.case_count == IMPORT_ROWS
    return elapsed


@contextmanager
def _postgres_database() -> Iterator[str | None]:
    """A fresh PostgreSQL database (None when none is reachable)."""
    import psycopg
    from sqlalchemy.engine import make_url

    url = os.environ.get("ASSAY_BENCH_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
    name = f"assay_bench_{os.getpid()}"
    admin = make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
    try:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
            conn.execute(f'CREATE DATABASE "{name}"')
    except psycopg.OperationalError:
        yield None
        return
    try:
        yield make_url(url).set(drivername="postgresql+psycopg", database=name).render_as_string(
            hide_password=False)
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def figure_process(flag: str, database_url: str) -> float:
    """A figure measured in a process of its own (its own app, engine and database)."""
    out = subprocess.run([sys.executable, "-m", "tests.bench", flag, database_url],
                         capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def _wait_up(url: str, seconds: float = 90.0) -> None:
    """Until `url` answers: a loaded machine can take many seconds to start a process, and
    a run that starts before its provider answers fails its first calls."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            httpx.get(url, timeout=1)
            return
        except httpx.TransportError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


@contextmanager
def fake_provider_process() -> Iterator[str]:
    """The fake provider in a process of its own, so it does not share the engine's GIL."""
    port = int(os.environ.get("ASSAY_BENCH_FAKE_PORT", 8790))  # several benches on one box
    proc = subprocess.Popen([sys.executable, "-m", "assay", "fake-provider", "--port", str(port)],
                            env={**os.environ, "ASSAY_FAKE_LATENCY_MS": str(LATENCY_S * 1000)},
                            stdout=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_up(f"{url}/_fake/health")
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def print_run_throughput(fake_url: str) -> None:
    """SQLite with one shard (the single-worker default), and PostgreSQL with one and with
    two shard processes (two workers sharing the run, as a deployment runs them); then what
    metrics and traces cost there, and what scoring costs."""
    with _postgres_database() as postgres:
        setups = [("SQLite", None, 1)] + ([] if postgres is None else [
            ("PostgreSQL", postgres, 1), ("PostgreSQL", postgres, 2)])
        for concurrency, bar in ((50, 0.90), (200, 0.75)):
            for label, url, shards in setups:
                figures = throughput(fake_url, concurrency, shards, database_url=url)
                print(f"run throughput, concurrency {concurrency:>3}, {label}, {shards} shard "
                      f"process{'es' if shards > 1 else ''}: {figures['calls_per_s']:>5} "
                      f"calls/s of {figures['limit']} = {figures['ratio']:.3f} of the limit "
                      f"(bar {bar}); {figures['cpu_ms_per_call']} ms CPU per call; "
                      f"{figures['cells']} cells, {figures['scored']} scores, in "
                      f"{figures['seconds']} s")
        if postgres is not None:
            print_observability_overhead(fake_url, postgres)
    # alternated, and the faster of two each: a busy moment of the machine is not scoring
    times: dict[bool, list[float]] = {False: [], True: []}
    for scored in (False, True, False, True):
        times[scored].append(throughput(fake_url, 200, 1, scored=scored)["seconds"])
    bare, with_scores = min(times[False]), min(times[True])
    print(f"scoring overhead, reference check at concurrency 200 (SQLite): {bare} s without, "
          f"{with_scores} s with = {with_scores / bare - 1:+.1%} of wall time (bar +10%)")


SAMPLE_RATIO = 0.01  # the README's OTEL_TRACES_SAMPLER_ARG


def _observed_throughput(fake_url: str, database_url: str, variant: str,
                         otlp_url: str) -> dict[str, Any]:
    """One PostgreSQL run at concurrency 200 (one shard) in a process of its own, as a
    worker runs it: `off` (ASSAY_METRICS=0, no tracing), or metrics in multiprocess mode and
    traces exported to `otlp_url` with the README's sampler, the run's request `sampled` or
    `dropped` by it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    if variant == "off":
        env["ASSAY_METRICS"] = "0"
    else:
        env.update({"ASSAY_METRICS": "1", "OTEL_EXPORTER_OTLP_ENDPOINT": otlp_url,
                    "PROMETHEUS_MULTIPROC_DIR": tempfile.mkdtemp(prefix="assay-bench-prom-"),
                    "OTEL_TRACES_SAMPLER": "parentbased_traceidratio",
                    "OTEL_TRACES_SAMPLER_ARG": str(SAMPLE_RATIO)})
    out = subprocess.run([sys.executable, "-m", "tests.bench", "--throughput-one",
                          json.dumps([fake_url, database_url, variant])],
                         capture_output=True, text=True, check=True, env=env)
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def print_observability_overhead(fake_url: str, database_url: str) -> None:
    """Throughput with metrics and traces on against off (PostgreSQL, concurrency 200),
    each variant twice, alternated, the faster of two kept: a busy moment of a shared
    machine is not what tracing costs."""
    port = int(os.environ.get("ASSAY_BENCH_FAKE_PORT", 8790)) + 1
    sink = subprocess.Popen([sys.executable, "-m", "tests.bench.otlp_sink", str(port)])
    otlp_url = f"http://127.0.0.1:{port}"
    try:
        _wait_up(f"{otlp_url}/spans")
        runs: dict[str, list[dict[str, Any]]] = {"off": [], "dropped": [], "sampled": []}
        for _ in range(2):
            for variant in runs:
                runs[variant].append(_observed_throughput(fake_url, database_url, variant,
                                                          otlp_url))
        spans = httpx.get(f"{otlp_url}/spans", timeout=5).json()["spans"]
    finally:
        sink.terminate()
        sink.wait(timeout=10)
    best = {v: max(r, key=lambda f: f["calls_per_s"]) for v, r in runs.items()}
    off = best["off"]["calls_per_s"]
    cost = {v: 1 - best[v]["calls_per_s"] / off for v in ("dropped", "sampled")}
    expected = (1 - SAMPLE_RATIO) * cost["dropped"] + SAMPLE_RATIO * cost["sampled"]
    # CPU per call (the least of two each) moves less with the machine's load than calls/s
    cpu = {v: min(f["cpu_ms_per_call"] for f in r) for v, r in runs.items()}
    cpu_cost = {v: cpu[v] / cpu["off"] - 1 for v in ("dropped", "sampled")}
    cpu_expected = (1 - SAMPLE_RATIO) * cpu_cost["dropped"] + SAMPLE_RATIO * cpu_cost["sampled"]
    cells = sum(f["cells"] for f in runs["sampled"])
    print(f"metrics and tracing, concurrency 200, PostgreSQL, 1 shard, sampler "
          f"parentbased_traceidratio {SAMPLE_RATIO}: off {off} calls/s "
          f"({best['off']['cpu_ms_per_call']} ms CPU per call); on, run's trace dropped "
          f"{best['dropped']['calls_per_s']} calls/s ({best['dropped']['cpu_ms_per_call']} ms)"
          f" = {cost['dropped']:+.1%}; on, run traced {best['sampled']['calls_per_s']} "
          f"calls/s ({best['sampled']['cpu_ms_per_call']} ms, {spans / cells:.2f} spans per "
          f"call) = {cost['sampled']:+.1%}; expected cost at that sampling {expected:+.1%} "
          f"of throughput (bar 5%); CPU per call {cpu['off']} / {cpu['dropped']} / "
          f"{cpu['sampled']} ms = {cpu_cost['dropped']:+.1%} dropped, "
          f"{cpu_cost['sampled']:+.1%} traced, {cpu_expected:+.1%} expected")


def print_eval_throughput(fake_url: str) -> None:
    """`assay eval` in a process of its own, then promptfoo on the same workload."""
    assay = evalcli.eval_throughput(fake_url)
    print(evalcli.report(assay))
    try:
        peer = promptfoo.throughput(fake_url)
    except promptfoo.Skipped as reason:
        print(f"promptfoo {promptfoo.VERSION}, same workload: skipped ({reason})")
        return
    print(promptfoo.report(peer))
    times = peer["seconds"] / assay["process_seconds"]
    print(f"side by side, whole process start to exit: assay eval {assay['process_ratio']:.3f}, "
          f"promptfoo {peer['ratio']:.3f} of the limit (promptfoo takes {times:.1f}x the time); "
          f"the run alone assay eval {assay['run_ratio']:.3f}, in the command "
          f"{assay['ratio']:.3f}")


def print_report_html() -> None:
    """The HTML report of a 10,000-output run (`assay report`), in a process of its own."""
    out = subprocess.run([sys.executable, "-m", "tests.bench.report_html"],
                         capture_output=True, text=True, check=True)
    print("\n".join(report_html.report(json.loads(out.stdout.strip().splitlines()[-1]))))


def main() -> None:
    logging.disable(logging.WARNING)
    with fake_provider_process() as fake_url:
        print("Assay bench (DESIGN.md section 9); ratios: higher is better for throughput,"
              " lower is better for latency.\n")
        for concurrency, bar in ((50, 0.90), (200, 0.75)):
            figures = client_throughput(fake_url, concurrency)
            print(f"client throughput, concurrency {concurrency:>3}: "
                  f"{figures['calls_per_s']:>5} calls/s of {figures['limit']} = "
                  f"{figures['ratio']:.3f} of the limit (bar {bar}); "
                  f"{figures['cpu_ms_per_call']} ms CPU per call; {figures['calls']} calls "
                  f"({figures['failed']} failed) in {figures['seconds']} s")
        print_run_throughput(fake_url)
        print_eval_throughput(fake_url)
        print_report_html()
        rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        # not the worker's bar (that is "worker RSS" below, a worker through a 100,000-cell
        # run): this process holds every run above, their apps and the bench's own imports
        print(f"peak RSS of the bench process after the in-process runs above: {rss_mb:.0f} MB "
              "(for reference; the 250 MB bar is the worker's, measured below)")
        sse = sse_latency()
        print(f"SSE delivery: p50 {sse['p50_ms']} ms, p95 {sse['p95_ms']} ms "
              f"= {sse['ratio_to_bar']:.3f} of the 100 ms bar")
        for label in ("PostgreSQL", "SQLite"):
            with _postgres_database() if label == "PostgreSQL" else _sqlite_url() as url:
                if url is None:
                    print(f"dataset import, {IMPORT_ROWS} CSV rows on {label}: skipped "
                          "(no server)")
                    continue
                seconds = figure_process("--import", url)
                planning = figure_process("--plan", url)
            print(f"dataset import, {IMPORT_ROWS} CSV rows: validate + commit {seconds:.2f} s "
                  f"on {label} = {seconds / IMPORT_BAR_S:.3f} of the {IMPORT_BAR_S:.0f} s bar"
                  + ("" if label == "PostgreSQL" else " (the bar is for PostgreSQL)"))
            print(f"planning {scale.CELLS} cells (10,000 cases x a 10-value grid) on {label}: "
                  f"{planning:.2f} s = {planning / PLAN_BAR_S:.3f} of the {PLAN_BAR_S:.0f} s bar")
        with _postgres_database() as url:
            if url is not None:
                rss = scale.worker_rss({
                    "ASSAY_INSTANCE_PATH": tempfile.mkdtemp(prefix="assay-bench-"),
                    "DATABASE_URL": url, "ASSAY_FAKE_PROVIDER_URL": fake_url,
                    "ASSAY_BCRYPT_ROUNDS": "4", "ASSAY_REDIS_PREFIX": f"bench-{os.getpid()}",
                    "REDIS_URL": os.environ["REDIS_URL"]})
                peak = max(rss["worker_mb"], rss["horse_mb"])
                print(f"worker RSS through a {rss['cells']}-cell run on PostgreSQL "
                      f"(concurrency 200, {rss['done']} done, {rss['status']}, "
                      f"{rss['seconds']} s): worker {rss['worker_mb']} MB, work horse "
                      f"{rss['horse_mb']} MB = {peak / 250:.3f} of the 250 MB bar")
        with _postgres_database() as url:
            if url is None:
                print("API reads with 1,000,000 outputs: skipped (no PostgreSQL server)")
            else:
                out = subprocess.run([sys.executable, "-m", "tests.bench.api_reads", url],
                                     capture_output=True, text=True, check=True)
                print("\n".join(api_reads.report(json.loads(out.stdout.strip().splitlines()[-1]))))
        with _postgres_database() as url:
            if url is None:
                print("reports over 1,000,000 outputs: skipped (no PostgreSQL server)")
            else:
                out = subprocess.run([sys.executable, "-m", "tests.bench.reports", url],
                                     capture_output=True, text=True, check=True)
                print("\n".join(reports.report(json.loads(out.stdout.strip().splitlines()[-1]))))
        out = subprocess.run([sys.executable, "-m", "tests.bench.arena"], capture_output=True,
                             text=True, check=True)
        print("\n".join(arena.report(json.loads(out.stdout.strip().splitlines()[-1]))))
        out = subprocess.run([sys.executable, "-m", "tests.bench.experiment_report"],
                             capture_output=True, text=True, check=True)
        print("\n".join(experiment_report.report_lines(
            json.loads(out.stdout.strip().splitlines()[-1]))))
        out = subprocess.run([sys.executable, "-m", "tests.bench.fcp"], capture_output=True,
                             text=True, check=True)
        print("\n".join(fcp.report(json.loads(out.stdout.strip().splitlines()[-1]))))
        out = subprocess.run([sys.executable, "-m", "tests.bench.arena_fcp"],
                             capture_output=True, text=True, check=True)
        print("\n".join(arena_fcp.report(json.loads(out.stdout.strip().splitlines()[-1]))))
        print_experiment_overhead(fake_url)
    print_slow_lane()
    print_soak()


def print_slow_lane() -> None:
    """In a process of its own: it serves the API as production does (tests/bench/slow_lane)."""
    out = subprocess.run([sys.executable, "-m", "tests.bench.slow_lane"], capture_output=True,
                         text=True, check=True)
    print("\n".join(slow_lane.report(json.loads(out.stdout.strip().splitlines()[-1]))))


def print_soak(seconds: str | None = None) -> None:
    """In a process of its own: it starts a whole stack per database (tests/soak/);
    `seconds`: of its "during" phase (tests/bench/soak.py's SOAK_SECONDS unless given)."""
    out = subprocess.run([sys.executable, "-m", "tests.bench.soak",
                          *([seconds] if seconds else [])], capture_output=True, text=True)
    print(out.stdout.rstrip())
    if out.returncode or not out.stdout.strip():
        print(f"soak: failed to run (exit {out.returncode})\n{out.stderr[-3000:]}")


def print_experiment_overhead(fake_url: str) -> None:
    out = subprocess.run([sys.executable, "-m", "tests.bench.experiments", fake_url],
                         capture_output=True, text=True, check=True)
    print("\n".join(experiments.report(json.loads(out.stdout.strip().splitlines()[-1]))))


@contextmanager
def _sqlite_url() -> Iterator[str | None]:
    yield f"sqlite:///{tempfile.mkdtemp(prefix='assay-bench-')}/import.db"


if __name__ == "__main__":
    if sys.argv[1:2] == ["--import"]:
        logging.disable(logging.WARNING)
        print(import_in_process(sys.argv[2]))
    elif sys.argv[1:2] == ["--throughput"]:  # that section alone, while tuning the engine
        logging.disable(logging.WARNING)
        with fake_provider_process() as url:
            print_run_throughput(url)
    elif sys.argv[1:2] == ["--throughput-one"]:  # one observed run, its own process
        logging.disable(logging.WARNING)
        fake, database, variant = json.loads(sys.argv[2])
        tracing.setup("assay-worker")  # before any engine or Redis client exists
        print(json.dumps(throughput(fake, 200, 1, database_url=database,
                                    traced=None if variant == "off" else variant == "sampled")))
    elif sys.argv[1:2] == ["--eval"]:  # the assay eval bar alone
        logging.disable(logging.WARNING)
        with fake_provider_process() as url:
            print_eval_throughput(url)
    elif sys.argv[1:2] == ["--report-html"]:  # the HTML report's bars alone
        print_report_html()
    elif sys.argv[1:2] == ["--experiments"]:  # the experiment overhead alone
        logging.disable(logging.WARNING)
        with fake_provider_process() as url:
            print_experiment_overhead(url)
    elif sys.argv[1:2] == ["--api-reads"]:  # that section alone: DATABASE_URL [--reuse]
        out = subprocess.run([sys.executable, "-m", "tests.bench.api_reads", *sys.argv[2:]],
                             capture_output=True, text=True, check=True)
        print("\n".join(api_reads.report(json.loads(out.stdout.strip().splitlines()[-1]))))
    elif sys.argv[1:2] == ["--slow-lane"]:  # reads beside eight scorer trials, alone
        print_slow_lane()
    elif sys.argv[1:2] == ["--soak"]:  # the soak alone, on SQLite and PostgreSQL [SECONDS]
        print_soak(sys.argv[2] if sys.argv[2:] else None)
    elif sys.argv[1:2] == ["--plan"]:
        logging.disable(logging.WARNING)
        print(scale.plan_in_process(sys.argv[2]))
    else:
        main()
