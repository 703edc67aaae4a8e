"""Reads beside slow work (issue 31 item 2: p95 of `/api/auth/me` < 50 ms while 8 trials run).

In a process of its own (`python -m tests.bench.slow_lane`): `assay serve` as `make run`
starts it (its default threads and admission places) on a fresh SQLite instance; a fake
provider whose judge replies take ten minutes; two users. `/api/auth/me` is timed alone,
then with eight scorer trials of an LLM judge in flight (four per user: each one's share of
the slow lane). Prints one JSON line.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any

import httpx

from assay.app import create_app
from assay.core.auth.service import create_api_token, register
from assay.core.llm.models import Credential, ModelConfig
from assay.core.projects.models import Membership, Role
from assay.core.projects.service import create_project
from assay.extensions import db
from assay.providers.fake import FakeProviderThread
from assay.providers.fake_config import FakeConfig
from assay.settings import Settings
from tests.api.test_slow_lane import JUDGE_MODEL, PARAMS, VERDICT  # the test's slow judge
from tests.services import free_port

TRIALS = 8
READS = 200
BAR_MS = 50.0


def _world(fake_url: str) -> tuple[int, list[str]]:
    with db.factory() as session:
        owner = register(session, f"lane{time.time_ns()}@example.com", "Bench-password-1!",
                         None, 4)
        other = register(session, f"lane2{time.time_ns()}@example.com", "Bench-password-1!",
                         None, 4)
        project = create_project(session, owner, "Slow lane")
        session.add(Membership(project_id=project.id, user_id=other.id, role=Role.editor))
        credential = Credential(project_id=project.id, kind="fake", label="Slow account",
                                base_url=fake_url, secret_env=None, config={})
        session.add(credential)
        session.flush()
        session.add(ModelConfig(project_id=project.id, credential_id=credential.id,
                                name="Slow judge", model=JUDGE_MODEL, params={"max_tokens": 200},
                                input_price_per_mtok_micros=1_000_000,
                                output_price_per_mtok_micros=2_000_000))
        tokens = [create_api_token(session, user, "bench")[1] for user in (owner, other)]
        session.commit()
        return project.id, tokens


def _reads(url: str, token: str) -> list[float]:
    timings = []
    with httpx.Client(headers={"Authorization": f"Bearer {token}"}, timeout=60) as client:
        for _ in range(READS):
            started = time.perf_counter()
            client.get(f"{url}/api/auth/me").raise_for_status()
            timings.append((time.perf_counter() - started) * 1000)
    return timings


def _figures(timings: list[float]) -> dict[str, float]:
    cuts = statistics.quantiles(timings, n=20)
    return {"p50_ms": round(statistics.median(timings), 1), "p95_ms": round(cuts[18], 1)}


def _in_flight(fake: FakeProviderThread) -> int:
    return int(httpx.get(f"{fake.url}/_fake/stats").json()["in_flight"])


def measure() -> dict[str, Any]:
    instance = tempfile.mkdtemp(prefix="assay-bench-")
    env = {"ASSAY_INSTANCE_PATH": instance, "ASSAY_BCRYPT_ROUNDS": "4", "ASSAY_METRICS": "0",
           "DATABASE_URL": f"sqlite:///{instance}/assay.db",
           "REDIS_URL": os.environ.get("ASSAY_BENCH_REDIS_URL", "redis://127.0.0.1:6379/14")}
    os.environ.update(env)
    app = create_app(Settings.from_env())
    with app.app_context():
        from flask_migrate import upgrade

        upgrade()
    with FakeProviderThread(FakeConfig(latency_ms=600_000, scripts=[])) as fake:
        config = httpx.get(f"{fake.url}/_fake/config").json()
        httpx.post(f"{fake.url}/_fake/config", json={**config, "scripts": [
            {"model": JUDGE_MODEL, "pattern": "", "reply": json.dumps(VERDICT)}]}
        ).raise_for_status()
        project_id, tokens = _world(fake.url)
        port = free_port()
        server = subprocess.Popen([sys.executable, "-m", "assay", "serve", "--port", str(port)],
                                  env={**os.environ, **env}, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 90
            while True:
                try:
                    if httpx.get(f"{url}/api/health", timeout=5).status_code < 500:
                        break
                except httpx.HTTPError:
                    pass
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("the API server did not start")
                time.sleep(0.2)
            _reads(url, tokens[0])  # warm: connections, caches
            alone = _figures(_reads(url, tokens[0]))

            answers: list[str] = []

            def trial(token: str) -> None:
                try:
                    reply = httpx.post(f"{url}/api/projects/{project_id}/scorers/try", timeout=900,
                               headers={"Authorization": f"Bearer {token}"},
                               json={"kind": "llm_judge", "params": PARAMS,
                                     "sample": {"output": "Paris."}})
                    answers.append(f"{reply.status_code} {reply.text[:200]}")
                except httpx.HTTPError:
                    pass  # the server ends under it

            for i in range(TRIALS):
                threading.Thread(target=trial, args=(tokens[i % 2],), daemon=True).start()
            while _in_flight(fake) < TRIALS:
                if time.monotonic() > deadline + 90:
                    raise RuntimeError(f"only {_in_flight(fake)} trials reached the provider: "
                                       f"{answers}")
                time.sleep(0.1)
            beside = _figures(_reads(url, tokens[1]))
            still = _in_flight(fake)
        finally:
            server.terminate()
            server.wait(timeout=30)
    return {"trials": TRIALS, "reads": READS, "alone": alone, "beside": beside,
            "trials_in_flight_after": still, "ratio": round(beside["p95_ms"] / BAR_MS, 3)}


def report(figures: dict[str, Any]) -> list[str]:
    alone, beside = figures["alone"], figures["beside"]
    return [f"/api/auth/me beside {figures['trials']} scorer trials in flight "
            f"({figures['trials_in_flight_after']} still in flight after {figures['reads']} "
            f"reads): p50 {beside['p50_ms']} ms, p95 {beside['p95_ms']} ms = "
            f"{figures['ratio']:.3f} of the {BAR_MS:.0f} ms bar (alone: p50 {alone['p50_ms']} "
            f"ms, p95 {alone['p95_ms']} ms)"]


if __name__ == "__main__":
    print(json.dumps(measure()))
