"""Observability (issue 19 item 5): JSON logs that name the request, user, project and run,
in the API and in the jobs a request enqueues; never a key or a prompt; /metrics behind
its token with the metrics a run produces; /api/ready failing and recovering with Redis
and the database; the shipped alert rules and dashboard naming only metrics that exist."""

from __future__ import annotations

import io
import json
import logging
import re
import threading
from collections.abc import Iterator
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
import redis
import yaml
from flask import Flask
from rq import Queue
from sqlalchemy import create_engine
from sqlalchemy.orm import Session as OrmSession

from assay.api.health import routes as health_routes
from assay.observability import logs
from assay.observability.jobs import ObservedSimpleWorker
from assay.providers.fake import FakeConfig, FakeProviderThread
from assay.runtime import current
from assay.seeds import demo_cases
from assay.settings import REPO_ROOT, Settings
from tests.factories import Factory

CANARY = "sk-observe-canary-3b9d27e1"
TOKEN = "metrics-test-token"
DOCKER = REPO_ROOT / "docker"


@pytest.fixture
def json_logs(monkeypatch: pytest.MonkeyPatch) -> Iterator[io.StringIO]:
    """Root's handler as ASSAY_LOG_FORMAT=json configures it, writing into a buffer."""
    stream = io.StringIO()
    monkeypatch.setenv("ASSAY_LOG_FORMAT", "json")
    handler = logs.handler(stream=stream)
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    try:
        yield stream
    finally:
        root.removeHandler(handler)
        root.setLevel(level)


@pytest.fixture
def metrics_token(monkeypatch: pytest.MonkeyPatch, app: Flask) -> str:
    rt = current()
    monkeypatch.setattr(rt, "settings", replace(rt.settings, metrics_token=TOKEN))
    return TOKEN


def _lines(stream: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stream.getvalue().splitlines() if line.strip()]


def _work(settings: Settings) -> None:
    conn = redis.Redis.from_url(current().settings.redis_url or "")
    ObservedSimpleWorker([Queue(settings.runs_queue, connection=conn)],
                         connection=conn).work(burst=True, logging_level="WARNING")


def _scrape(client: Any) -> str:
    reply = client.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    assert reply.status_code == 200, reply.get_data(as_text=True)
    assert reply.content_type.startswith("text/plain")
    return str(reply.get_data(as_text=True))


def _run_with_key(factory: Factory, fake_provider: FakeProviderThread
                  ) -> tuple[Any, int, int, str]:
    """(browser, project id, run id, request id): a run of a priced model on a credential
    holding CANARY, created with a request id of our own and executed by a worker."""
    owner = factory.user()
    project = factory.project(owner, "Observed")
    browser = factory.login(owner)
    pid = project.id
    cred = browser.post(f"/api/projects/{pid}/credentials", json={
        "kind": "fake", "label": "Observed", "base_url": fake_provider.url, "api_key": CANARY})
    assert cred.status_code == 201, cred.json
    model = browser.post(f"/api/projects/{pid}/models", json={
        "name": "Observed model", "credential_id": cred.json["id"], "model": "fake-fast",
        "input_price_per_mtok_micros": 2_000_000, "output_price_per_mtok_micros": 8_000_000})
    assert model.status_code == 201, model.json
    demo = browser.post(f"/api/projects/{pid}/runs/demo")  # makes the demo dataset
    assert demo.status_code == 202
    datasets = browser.get(f"/api/projects/{pid}/datasets").json["items"]
    request_id = "req-observe-42"
    run = browser.post(f"/api/projects/{pid}/runs", headers={"X-Request-ID": request_id},
                       json={"dataset_id": datasets[0]["id"], "cache": False,
                             "targets": [{"model_id": model.json["id"]}]})
    assert run.status_code == 202, run.json
    assert run.headers["X-Request-ID"] == request_id
    _work(factory.settings)
    done = browser.get(f"/api/projects/{pid}/runs/{run.json['id']}")
    assert done.json["status"] == "completed", done.json
    return browser, pid, run.json["id"], request_id


def test_json_logs_carry_the_ids_into_the_jobs_and_never_a_key_or_prompt(
        factory: Factory, fake_provider: FakeProviderThread, json_logs: io.StringIO,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_ACCESS_LOG", "1")
    _, pid, run_id, request_id = _run_with_key(factory, fake_provider)
    lines = _lines(json_logs)  # every line parses as JSON
    assert lines and all({"time", "level", "logger", "message"} <= set(line) for line in lines)
    assert not [line for line in lines if "context" in line]  # the text format's suffix

    access = [line for line in lines if line["logger"] == "assay.access"
              and line.get("request_id") == request_id]
    assert len(access) == 1
    assert access[0]["project_id"] == pid and access[0]["user_id"] is not None
    assert access[0]["message"] == "POST /api/projects/<int:project_id>/runs 202"
    user_id = access[0]["user_id"]

    in_jobs = [line for line in lines if line["logger"].startswith("assay.jobs")
               and line.get("run_id") == run_id]
    assert in_jobs, "the run's job logged nothing"
    for line in in_jobs:  # the request's id, its user and project, and the run
        assert (line["request_id"], line["user_id"], line["project_id"], line["run_id"]) \
            == (request_id, user_id, pid, run_id), line

    text = json_logs.getvalue()
    assert CANARY not in text
    for case in demo_cases():
        assert json.dumps(case["input"])[1:-1] not in text
        for value in case["input"].values():
            assert str(value) not in text, "a prompt's text is in the logs"


def test_request_ids_are_made_when_absent_or_unsafe(client: Any) -> None:
    made = client.get("/api/health").headers["X-Request-ID"]
    assert re.fullmatch(r"[0-9a-f]{32}", made)
    for forged in ("x level=ERROR", "x" * 65, '{"level": "ERROR"}'):
        made = client.get("/api/health", headers={"X-Request-ID": forged})
        assert re.fullmatch(r"[0-9a-f]{32}", made.headers["X-Request-ID"])
    kept = client.get("/api/health", headers={"X-Request-ID": "lb-1234.abc"})
    assert kept.headers["X-Request-ID"] == "lb-1234.abc"


def test_metrics_need_their_token(client: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    rt = current()
    monkeypatch.setattr(rt, "settings", replace(rt.settings, metrics_token=None))
    assert client.get("/metrics").status_code == 404  # no token set: no endpoint
    monkeypatch.setattr(rt, "settings", replace(rt.settings, metrics_token=TOKEN))
    assert client.get("/metrics").status_code == 401
    assert client.get("/metrics", headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert client.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"}
                      ).status_code == 200


@pytest.fixture
def faulty_provider() -> Iterator[FakeProviderThread]:
    """Answers a third of the calls with a 429 or a 500 (retried: transient)."""
    config = FakeConfig(latency_ms=2.0, fault_rate=0.35, faults=("429", "500"),
                        retry_after_s=0.0, seed=3)
    with FakeProviderThread(config) as server:
        yield server


def test_a_run_shows_in_the_metrics(factory: Factory, faulty_provider: FakeProviderThread,
                                    metrics_token: str) -> None:
    browser, pid, run_id, _ = _run_with_key(factory, faulty_provider)
    browser.get(f"/api/projects/{pid}/runs/{run_id}/statistics")
    samples = _samples(_scrape(browser.client))
    cases = len(demo_cases())
    assert samples['assay_provider_calls_total{outcome="ok",provider="fake"}'] >= cases
    assert samples['assay_provider_request_duration_seconds_count{provider="fake"}'] > cases
    for error_class in ("rate_limited", "server_error"):
        assert samples[f'assay_provider_errors_total{{error_class="{error_class}",'
                       'provider="fake"}'] >= 1
        assert samples[f'assay_provider_retries_total{{error_class="{error_class}",'
                       'provider="fake"}'] >= 1
    assert samples['assay_spend_dollars_total{model="fake-fast",provider="fake"}'] > 0
    assert samples['assay_run_cells_total{outcome="ok"}'] >= cases
    assert samples['assay_jobs_total{job="execute_run",status="finished"}'] >= 1
    assert samples['assay_job_duration_seconds_count{job="execute_run"}'] >= 1
    queue = factory.settings.runs_queue
    assert samples[f'assay_queue_depth{{queue="{queue}"}}'] == 0
    assert samples["assay_redis_up"] == 1
    route = "/api/projects/<int:project_id>/runs/<int:run_id>/statistics"
    key = (f'assay_http_request_duration_seconds_count{{method="GET",route="{route}",'
           'status="200"}')
    assert samples[key] >= 1
    assert "assay_cache_hits_total" in samples and "assay_leases_reclaimed_total" in samples


def test_cache_hits_are_counted(factory: Factory, fake_provider: FakeProviderThread,
                                metrics_token: str, app: Flask) -> None:
    from assay.observability import metrics

    before = metrics.CACHE_HITS._value.get()
    owner = factory.user()
    project = factory.project(owner)
    factory.finished_run(owner, project, execute=True)  # demo models answer at temperature 0
    factory.finished_run(owner, project, execute=True)  # so the second run replays the first
    assert metrics.CACHE_HITS._value.get() - before >= len(demo_cases())


def _samples(text: str) -> dict[str, float]:
    found = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            found[name] = float(value)
    return found


def _metric_names(text: str) -> set[str]:
    """Every sample name in the exposition text (histogram series included)."""
    return {re.split(r"[{ ]", line, maxsplit=1)[0] for line in text.splitlines()
            if line and not line.startswith("#")}


def _referenced(expression: str) -> set[str]:
    return set(re.findall(r"\bassay_[a-z_]+\b", expression))


def test_alert_rules_and_dashboard_name_metrics_that_exist(
        factory: Factory, faulty_provider: FakeProviderThread, metrics_token: str,
        client: Any) -> None:
    _run_with_key(factory, faulty_provider)  # errors, retries, spend: every series appears
    exported = _metric_names(_scrape(client))
    rules = yaml.safe_load((DOCKER / "prometheus" / "alerts.yaml").read_text())
    used = set()
    for group in rules["groups"]:
        for rule in group["rules"]:
            used |= _referenced(rule["expr"])
    dashboard = json.loads((DOCKER / "grafana" / "assay-dashboard.json").read_text())
    for panel in dashboard["panels"]:
        for target in panel.get("targets", []):
            used |= _referenced(target["expr"])
    assert len(used) >= 12
    assert used <= exported, used - exported


@pytest.fixture
def worker_alive(app: Flask, settings: Settings) -> Iterator[None]:
    """A registered RQ worker with a fresh heartbeat, as a running `assay worker` has."""
    from rq import Worker

    conn = redis.Redis.from_url(settings.redis_url or "")
    worker = Worker([Queue(settings.runs_queue, connection=conn)], connection=conn)
    worker.register_birth()
    worker.heartbeat()
    try:
        yield
    finally:
        worker.register_death()


def test_ready_fails_with_redis_or_the_database_down_and_recovers(
        client: Any, worker_alive: None, monkeypatch: pytest.MonkeyPatch,
        tmp_path: Path) -> None:
    ready = client.get("/api/ready")
    assert ready.status_code == 200, ready.json
    assert ready.json["ready"] and ready.json["database"]["migrations"]["ok"]
    assert ready.json["workers"]["count"] >= 1

    rt = current()
    monkeypatch.setattr(rt, "_redis", redis.Redis(port=1, socket_connect_timeout=0.5))
    down = client.get("/api/ready")
    assert down.status_code == 503
    assert down.json["redis"] == {"ok": False, "error": "ConnectionError"}
    assert down.json["workers"]["ok"] is False and down.json["database"]["ok"] is True
    monkeypatch.undo()
    assert client.get("/api/ready").status_code == 200

    gone = create_engine(f"sqlite:///{tmp_path / 'missing' / 'assay.db'}")
    monkeypatch.setattr(health_routes, "session", lambda: OrmSession(gone))
    down = client.get("/api/ready")
    assert down.status_code == 503
    assert down.json["database"]["ok"] is False and down.json["redis"]["ok"] is True
    assert down.json["database"]["error"] == "OperationalError"
    monkeypatch.undo()
    assert client.get("/api/ready").status_code == 200


def test_ready_fails_without_a_worker_or_behind_the_migrations(
        client: Any, monkeypatch: pytest.MonkeyPatch, worker_alive: None) -> None:
    from assay.observability import ready

    monkeypatch.setattr(ready, "migrations_head", lambda: "f00dfacef00d")
    behind = client.get("/api/ready")
    assert behind.status_code == 503
    assert behind.json["database"]["migrations"]["ok"] is False


def test_ready_needs_a_worker(client: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    import uuid

    rt = current()  # a queue of its own: no worker of another test serves it
    monkeypatch.setattr(rt, "settings", replace(rt.settings,
                                                redis_prefix=f"assay-idle-{uuid.uuid4().hex}"))
    reply = client.get("/api/ready")
    assert reply.status_code == 503 and reply.json["workers"] == {"ok": False, "count": 0}


def test_workers_and_the_api_report_together(factory: Factory, settings: Settings,
                                             test_env: dict[str, str], tmp_path: Path,
                                             fake_provider: FakeProviderThread) -> None:
    """Multiprocess mode for real: `assay worker --burst` (its work horse runs the job) writes
    samples into PROMETHEUS_MULTIPROC_DIR, and another process (as a gunicorn worker does
    when scraped) adds them up."""
    import os
    import subprocess
    import sys

    owner = factory.user()
    project = factory.project(owner)
    browser = factory.login(owner)
    assert browser.post(f"/api/projects/{project.id}/runs/demo").status_code == 202
    env = {**os.environ, **test_env, "PROMETHEUS_MULTIPROC_DIR": str(tmp_path)}
    subprocess.run([sys.executable, "-m", "assay", "worker", "--burst"], env=env,
                   check=True, timeout=120)
    assert list(tmp_path.glob("counter_*.db")), "the worker wrote no samples"
    samples = _scraped(settings, env)
    assert samples['assay_jobs_total{job="execute_run",status="finished"}'] >= 1
    assert samples['assay_provider_calls_total{outcome="ok",provider="fake"}'] >= len(
        demo_cases())


def _scraped(settings: Settings, env: dict[str, str]) -> dict[str, float]:
    """/metrics as a new process renders it from the directory in `env`."""
    import subprocess
    import sys

    script = ("import sys, redis; from assay.observability import metrics; "
              f"conn = redis.Redis.from_url({settings.redis_url!r}); "
              f"sys.stdout.write(metrics.render(conn, {settings.runs_queue!r}).decode())")
    return _samples(subprocess.run([sys.executable, "-c", script], env=env, check=True,
                                   timeout=60, capture_output=True, text=True).stdout)


def test_work_horses_reuse_their_workers_sample_files(test_env: dict[str, str],
                                                     tmp_path: Path) -> None:
    """RQ forks a work horse per job: files named by the horse's pid added a few files to
    PROMETHEUS_MULTIPROC_DIR per job, and every scrape read them all. A worker's horses
    share one set of files, and the counts in them still add up across the jobs."""
    import os
    import subprocess
    import sys
    import uuid

    jobs = 6
    prefix = f"assay-horses-{uuid.uuid4().hex[:8]}"  # a queue no other test's worker serves
    env = {**os.environ, **test_env, "PROMETHEUS_MULTIPROC_DIR": str(tmp_path),
           "ASSAY_REDIS_PREFIX": prefix}
    settings = Settings.from_env(env)
    conn = redis.Redis.from_url(settings.redis_url or "")
    queue = Queue(settings.runs_queue, connection=conn)
    try:
        for _ in range(jobs):  # each job counts one provider call, as a run's cell would
            queue.enqueue("assay.observability.metrics.record_call", "fake", None)
        subprocess.run([sys.executable, "-m", "assay", "worker", "--burst"], env=env,
                       check=True, timeout=120)
        assert queue.count == 0
    finally:
        queue.empty()
    files = sorted(path.name for path in tmp_path.glob("*.db"))
    horse_files = [name for name in files if name.endswith("-horse.db")]
    # the horses' counters and histograms; their live pool gauge goes once a horse has exited
    assert len(horse_files) == 2, files
    assert len(files) <= 6, files  # and at most as many of the worker's own, whatever the jobs
    samples = _scraped(settings, env)
    assert samples['assay_jobs_total{job="record_call",status="finished"}'] == jobs
    assert samples['assay_job_duration_seconds_count{job="record_call"}'] == jobs
    assert samples['assay_provider_calls_total{outcome="ok",provider="fake"}'] == jobs


def test_a_process_a_work_horse_forks_names_files_of_its_own(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the horse itself writes its worker's horse files: a process it forks (which
    inherits the setting) must not write the same files at the same time."""
    import os

    from assay.observability import metrics

    monkeypatch.setattr(metrics, "_horse", None)
    assert metrics.process_id() == f"{metrics._HOST}-{os.getpid()}"
    metrics.become_work_horse(4242)
    assert metrics.process_id() == f"{metrics._HOST}-4242-horse"
    assert metrics.process_id(77) == f"{metrics._HOST}-77"  # mark_process_dead's names
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child reports through the pipe
        os.write(write, metrics.process_id().encode())
        os._exit(0)
    os.close(write)
    os.waitpid(child, 0)
    with os.fdopen(read) as pipe:
        assert pipe.read() == f"{metrics._HOST}-{child}"


class _Collector(BaseHTTPRequestHandler):
    """An OTLP/HTTP endpoint that keeps what it is sent."""

    received: ClassVar[list[tuple[str, bytes]]] = []

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        _Collector.received.append((self.path, body))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()


TRACED = """
import asyncio, sys
from assay.observability import tracing
on = tracing.setup("assay-test")
from assay.app import create_app
from assay.providers.base import ChatRequest, Endpoint
from assay.providers.client import LLMClient
app = create_app()
assert app.test_client().get("/api/health").status_code == 200
from assay.api.kept_reads import KeptReadsDoor
from assay.api.slow_lane import SlowLane
assert isinstance(app.wsgi_app, SlowLane)  # the slow lane is always in front
assert isinstance(app.wsgi_app.wsgi_app, KeptReadsDoor) is not on  # traced: reads via Flask

async def call():
    async with LLMClient() as client:
        result = await client.chat(Endpoint("fake", sys.argv[1], "sk-fake", {}, None),
                                   ChatRequest("fake-fast", [{"role": "user", "content": "hi"}],
                                               {}))
        assert result.ok, result.error

asyncio.run(call())
tracing.flush()
heavy = ("opentelemetry.sdk.trace", "opentelemetry.instrumentation", "opentelemetry.exporter")
print(on, sorted({m for m in sys.modules if m.startswith(heavy)} & set(heavy)))
"""


def test_traces_only_when_an_endpoint_is_set(app: Flask, test_env: dict[str, str],
                                             fake_provider: FakeProviderThread) -> None:
    """Off: no tracer, instrumentation or exporter is imported (redis-py imports the
    OpenTelemetry metrics API by itself where the package is installed). On: Flask, SQL,
    Redis and the outbound LLM call each send spans to the OTLP endpoint."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env.update(test_env)
    off = subprocess.run([sys.executable, "-c", TRACED, fake_provider.url], env=env,
                         timeout=180, capture_output=True, text=True)
    assert off.returncode == 0, off.stderr[-3000:]
    assert off.stdout.strip().splitlines()[-1] == "False []", off.stdout

    server = ThreadingHTTPServer(("127.0.0.1", 0), _Collector)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        env["OTEL_EXPORTER_OTLP_ENDPOINT"] = f"http://127.0.0.1:{server.server_address[1]}"
        on = subprocess.run([sys.executable, "-c", TRACED, fake_provider.url], env=env,
                            timeout=180, capture_output=True, text=True)
    finally:
        server.shutdown()
        server.server_close()
    assert on.returncode == 0, on.stderr[-3000:]
    assert on.stdout.strip().splitlines()[-1] == (
        "True ['opentelemetry.exporter', 'opentelemetry.instrumentation', "
        "'opentelemetry.sdk.trace']"), on.stdout
    sent = b"".join(body for path, body in _Collector.received if path == "/v1/traces")
    assert b"assay-test" in sent  # the service name
    assert b"/api/health" in sent  # Flask
    assert b"SELECT 1" in sent  # SQLAlchemy
    assert b"PING" in sent  # Redis
    assert fake_provider.url.removeprefix("http://").encode() in sent  # the LLM call


SAMPLED = """
import asyncio, sys
from opentelemetry import trace
from opentelemetry.propagate import inject
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags, set_span_in_context
from assay.observability import tracing
tracing.setup("assay-test")
from sqlalchemy import create_engine, text
from assay.providers.base import ChatRequest, Endpoint
from assay.providers.client import LLMClient, RetryPolicy

engine = create_engine("sqlite://")


def carrier(sampled):
    parent = SpanContext(trace_id=7 if sampled else 8, span_id=1, is_remote=True,
                         trace_flags=TraceFlags(1 if sampled else 0))
    out = {}
    inject(out, context=set_span_in_context(NonRecordingSpan(parent)))
    return out


async def calls(model, n, url=sys.argv[1]):
    async with LLMClient(retry=RetryPolicy(attempts=1)) as client:
        for _ in range(n):
            await client.chat(Endpoint("fake", url, "sk-fake", {}, None),
                              ChatRequest(model, [{"role": "user", "content": "hi"}], {}))


import time
for sampled, tag in ((False, "dropped"), (True, "kept")):
    with tracing.job_span(f"job-{tag}", carrier(sampled)):
        with tracing.span(f"batch-{tag}"), engine.connect() as conn:
            conn.execute(text(f"SELECT '{tag}-sql'"))
        started = time.monotonic()
        asyncio.run(calls(f"fake-fast-{tag}", 30))
        took = time.monotonic() - started
        asyncio.run(calls(f"fake-error-{tag}", 3, "http://127.0.0.1:9"))  # refused
tracing.flush()
print(took)
"""


def test_a_dropped_trace_makes_no_span_and_a_kept_one_samples_its_calls(
        test_env: dict[str, str], fake_provider: FakeProviderThread) -> None:
    """Inside a trace the sampler dropped, no span is made (SQL, batch, LLM call); inside a
    kept one, every failed call has a span and succeeded ones only the per-second allowance
    (2 here, in bursts of 2), not one each."""
    import os
    import subprocess
    import sys

    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    _Collector.received.clear()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Collector)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env.update(test_env)
    env["OTEL_EXPORTER_OTLP_ENDPOINT"] = f"http://127.0.0.1:{server.server_address[1]}"
    env["OTEL_TRACES_SAMPLER"] = "parentbased_always_on"
    env["ASSAY_TRACE_CALLS_PER_S"] = "2"
    try:
        done = subprocess.run([sys.executable, "-c", SAMPLED, fake_provider.url], env=env,
                              timeout=180, capture_output=True, text=True)
    finally:
        server.shutdown()
        server.server_close()
    assert done.returncode == 0, done.stderr[-3000:]
    names: list[str] = []
    for path, body in _Collector.received:
        if path == "/v1/traces":
            message = ExportTraceServiceRequest()
            message.ParseFromString(body)
            names += [span.name for resource in message.resource_spans
                      for scope in resource.scope_spans for span in scope.spans]
    assert not [n for n in names if "dropped" in n], names
    assert "job job-kept" in names and "batch-kept" in names
    assert any(n.startswith("SELECT") for n in names)
    assert names.count("chat fake-error-kept") == 3  # every failure
    took = float(done.stdout.strip().splitlines()[-1])  # the 30 calls' seconds
    assert 1 <= names.count("chat fake-fast-kept") <= 2 + 2 * took < 30, (names, took)


def test_a_kept_read_answered_in_front_of_flask_logs_the_same_ids(
        factory: Factory, fake_provider: FakeProviderThread, json_logs: io.StringIO,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The door (api/kept_reads.py) has no request context: its access line still names
    the request, the user, the project and the run."""
    monkeypatch.setenv("ASSAY_ACCESS_LOG", "1")
    browser, pid, run_id, _ = _run_with_key(factory, fake_provider)
    url = f"/api/projects/{pid}/runs/{run_id}/progress"
    for request_id in ("req-kept-1", "req-kept-2", "req-kept-3"):  # kept, then the door's
        assert browser.get(url, headers={"X-Request-ID": request_id}).status_code == 200
    access = {line["request_id"]: line for line in _lines(json_logs)
              if line["logger"] == "assay.access" and line.get("run_id") == run_id}
    first, door = access["req-kept-1"], access["req-kept-3"]
    assert door["message"] == first["message"] == (
        "GET /api/projects/<int:project_id>/runs/<int:run_id>/progress 200")
    assert (door["user_id"], door["project_id"]) == (first["user_id"], pid) != (None, pid)
