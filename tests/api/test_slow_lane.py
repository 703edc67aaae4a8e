"""Slow work cannot starve the reads (api/slow_lane.py): trials whose judge takes minutes
hold places of their own, never the reads', so `/api/auth/me` answers while eight of them
are in flight in a real `assay serve`; past the lane's places, or a user's share, a slow
request is refused at once with Retry-After; a trial is bounded in time."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from assay.core.llm.models import Credential, ModelConfig
from assay.core.projects.models import Project, Role
from assay.extensions import db
from assay.providers.fake import FakeProviderThread
from assay.providers.fake_config import FakeConfig
from assay.runtime import current
from assay.scorers.base import Context, Subject
from assay.scorers.code import OUT_OF_TIME, CodeExecutionScorer
from assay.settings import Settings
from tests.factories import Factory
from tests.services import free_port

JUDGE_MODEL = "fake-slow-judge"
VERDICT = {"criteria": {"Accuracy": {"score": 4, "rationale": "Right."}},
           "summary": "Good.", "confidence": 0.75}
PARAMS = {"rubric": {"criteria": [
    {"name": "Accuracy", "description": "The answer is right.", "weight": 0.5, "scale": "1-5"},
    {"name": "Clarity", "description": "The answer is clear.", "weight": 0.5, "scale": "1-5"}]},
    "judges": ["Slow judge"]}
WAIT_S = 90.0  # generous: a loaded 2-core machine


@pytest.fixture
def slow_judge() -> Iterator[FakeProviderThread]:
    """A provider whose every reply takes ten minutes: trials on it stay in flight."""
    with FakeProviderThread(FakeConfig(latency_ms=600_000, scripts=[])) as fake:
        config = httpx.get(f"{fake.url}/_fake/config").json()
        httpx.post(f"{fake.url}/_fake/config", json={**config, "scripts": [
            {"model": JUDGE_MODEL, "pattern": "", "reply": json.dumps(VERDICT)}]}
        ).raise_for_status()
        yield fake


def _judge(project_id: int, url: str) -> None:
    with db.factory() as session:
        credential = Credential(project_id=project_id, kind="fake", label="Slow account",
                                base_url=url, secret_env=None, config={})
        session.add(credential)
        session.flush()
        session.add(ModelConfig(project_id=project_id, credential_id=credential.id,
                                name="Slow judge", model=JUDGE_MODEL, params={"max_tokens": 200},
                                input_price_per_mtok_micros=1_000_000,
                                output_price_per_mtok_micros=2_000_000))
        session.commit()


@pytest.fixture
def served(test_env: dict[str, str]) -> Iterator[str]:
    """`assay serve` as production runs it (gunicorn, admission), one process, few
    threads, on the tests' database and Redis."""
    port = free_port()
    env = {**os.environ, **test_env, "ASSAY_WEB_SLOW": "8", "ASSAY_WEB_SLOW_PER_USER": "4",
           "ASSAY_METRICS": "0"}
    server = subprocess.Popen(
        [sys.executable, "-m", "assay", "serve", "--port", str(port), "--workers", "1",
         "--threads", "4", "--admit", "2"], env=env, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + WAIT_S
        while True:
            try:
                if httpx.get(f"{url}/api/health", timeout=5).status_code < 500:
                    break
            except httpx.HTTPError:
                pass
            assert server.poll() is None, "the API server exited"
            assert time.monotonic() < deadline, "the API server did not start"
            time.sleep(0.2)
        yield url
    finally:
        server.terminate()  # trials still in flight end with it
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=30)


def _in_flight(fake: FakeProviderThread) -> int:
    return int(httpx.get(f"{fake.url}/_fake/stats").json()["in_flight"])


def test_eight_trials_in_flight_leave_the_reads_their_places(
        factory: Factory, slow_judge: FakeProviderThread, served: str) -> None:
    owner = factory.user()
    project = factory.project(owner, "Trials")
    _judge(project.id, slow_judge.url)
    second, third = (factory.member(project, Role.editor) for _ in range(2))
    tokens = [factory.api_token(u) for u in (owner, second, third)]
    try_url = f"{served}/api/projects/{project.id}/scorers/try"
    body = {"kind": "llm_judge", "params": PARAMS, "sample": {"output": "Paris."}}
    answers: list[int] = []

    def trial(token: str) -> None:
        try:
            reply = httpx.post(try_url, json=body, timeout=WAIT_S * 10,
                               headers={"Authorization": f"Bearer {token}"})
            answers.append(reply.status_code)
        except httpx.HTTPError:
            answers.append(0)  # the server ended under it, at the test's end

    trials = [threading.Thread(target=trial, args=(tokens[i % 2],), daemon=True)
              for i in range(8)]
    for thread in trials:
        thread.start()
    deadline = time.monotonic() + WAIT_S
    while _in_flight(slow_judge) < 8:
        assert time.monotonic() < deadline, (_in_flight(slow_judge), answers)
        time.sleep(0.1)

    def get(path: str, token: str) -> httpx.Response:
        # a read queued behind the trials would wait their ten minutes: this bound is
        # generous for a read and far short of a trial
        return httpx.get(f"{served}{path}", timeout=WAIT_S,
                         headers={"Authorization": f"Bearer {token}"})

    for i in range(20):
        me = get("/api/auth/me", tokens[i % 3])
        assert me.status_code == 200, me.text
    assert get(f"/api/projects/{project.id}/scorers", tokens[0]).status_code == 200
    # The trials are all still in flight, none answered: the reads went past them.
    assert _in_flight(slow_judge) == 8 and answers == []

    def attempt(token: str) -> httpx.Response:
        return httpx.post(try_url, json=body, timeout=WAIT_S,
                          headers={"Authorization": f"Bearer {token}"})

    yours = attempt(tokens[0])  # the owner has four in flight: their share
    assert yours.status_code == 429, yours.text
    assert yours.json()["code"] == "SLOW_WORK_LIMIT" and int(yours.headers["Retry-After"]) > 0
    full = attempt(tokens[2])  # a third user: the lane's eight places are taken
    assert full.status_code == 503, full.text
    assert full.json()["code"] == "SLOW_WORK_BUSY" and int(full.headers["Retry-After"]) > 0
    # Refused at once: nothing more reached the provider, the eight are still in flight.
    assert _in_flight(slow_judge) == 8 and answers == []
    # Other slow work shares the lane: a connection test is refused the same way.
    with db.factory() as session:
        credential_id = session.query(Credential.id).filter_by(project_id=project.id).scalar()
    test = httpx.post(f"{served}/api/projects/{project.id}/credentials/{credential_id}/test",
                      headers={"Authorization": f"Bearer {tokens[1]}"}, timeout=WAIT_S)
    assert test.status_code == 429 and test.json()["code"] == "SLOW_WORK_LIMIT", test.text


def test_a_trial_past_its_deadline_answers_with_what_it_has(
        factory: Factory, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeProviderThread(FakeConfig(latency_ms=30_000)) as fake:
        owner = factory.user()
        project = factory.project(owner, "Deadline")
        _judge(project.id, fake.url)
        browser = factory.login(owner)
        rt = current()
        monkeypatch.setattr(rt, "settings", dataclasses.replace(rt.settings,
                                                                slow_deadline_s=1.0))
        reply = browser.post(f"/api/projects/{project.id}/scorers/try", json={
            "kind": "llm_judge", "params": PARAMS, "sample": {"output": "Paris."}})
        assert reply.status_code == 200, reply.json
        [result] = reply.json["results"]
        assert "took longer than 1 s" in result["error"] and result["value"] is None
        assert reply.json["cost_micros"] == 0 and reply.json["judge_calls"] == 0
        with db.factory() as session:
            row = session.get(Project, project.id)
            assert row is not None and row.spent_micros == 0
        # The judge call was closed, not left running on the provider.
        deadline = time.monotonic() + WAIT_S
        while _in_flight(fake):
            assert time.monotonic() < deadline
            time.sleep(0.1)


def test_tests_past_the_deadline_are_not_run() -> None:
    """100 tests x 30 s would hold a thread for 50 minutes: past the deadline the sandbox
    starts no more of them, and says so for each."""
    scorer = CodeExecutionScorer({"language": "python", "entrypoint": "add", "timeout_s": 30,
                         "tests": [{"call": f"add({i}, 1)", "expected": i + 1}
                                   for i in range(100)]})
    subject = Subject(output="def add(a, b):\n    return a + b\n", input={})
    ctx = Context(code_execution=True, deadline=time.monotonic() - 1)
    [result] = _run(scorer.score(subject, ctx))
    assert result.passed is False and result.value == 0
    rows: list[dict[str, Any]] = result.details["tests"]
    assert len(rows) == 100 and all(OUT_OF_TIME in str(r) for r in rows)


def _run(awaitable: Any) -> Any:
    import asyncio

    return asyncio.run(awaitable)


@pytest.mark.parametrize(("name", "value", "says"), [
    ("ASSAY_WEB_SLOW", "0", "ASSAY_WEB_SLOW must be at least 1"),
    ("ASSAY_WEB_SLOW", "lots", "ASSAY_WEB_SLOW must be an integer"),
    ("ASSAY_WEB_SLOW_PER_USER", "-2", "ASSAY_WEB_SLOW_PER_USER must be at least 1"),
    ("ASSAY_SLOW_DEADLINE_S", "0", "ASSAY_SLOW_DEADLINE_S must be between"),
    ("ASSAY_SLOW_DEADLINE_S", "soon", "ASSAY_SLOW_DEADLINE_S must be a number"),
])
def test_bad_slow_lane_settings_are_refused_by_name(
        test_env: dict[str, str], name: str, value: str, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        Settings.from_env({**test_env, name: value})
