"""The engine with the providers layer: injected faults end classified, cached reruns call
nothing, every credential kind runs, streaming records TTFT, and keys never leave the worker."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from rq import Queue
from rq.job import Job
from rq.registry import FinishedJobRegistry
from sqlalchemy import select

from assay.core.datasets.service import create_dataset
from assay.core.llm.models import CachedResponse, Credential, ModelConfig
from assay.core.llm.secrets import encrypt_secret
from assay.core.projects.models import Project
from assay.core.runs.models import Output, Run
from assay.core.runs.planning import RunSpec, TargetSpec, plan_run
from assay.extensions import db
from assay.jobs.runs import execute_run
from assay.providers.base import ERROR_CLASSES
from assay.providers.fake import FakeProviderThread
from assay.runtime import current
from assay.settings import Settings
from tests.factories import Factory

SECRET = "sk-live-Sup3rSecretKey-0123456789abcdef"


@pytest.fixture
def fake(fake_provider: FakeProviderThread) -> Iterator[FakeProviderThread]:
    """The session's fake provider, its config restored and its stats reset."""
    before = httpx.get(f"{fake_provider.url}/_fake/config").json()
    httpx.post(f"{fake_provider.url}/_fake/reset")
    yield fake_provider
    httpx.post(f"{fake_provider.url}/_fake/config", json=before).raise_for_status()
    httpx.post(f"{fake_provider.url}/_fake/reset")


def configure(fake: FakeProviderThread, **changes: Any) -> None:
    httpx.post(f"{fake.url}/_fake/config", json=changes).raise_for_status()
    httpx.post(f"{fake.url}/_fake/reset").raise_for_status()


def stats(fake: FakeProviderThread) -> dict[str, Any]:
    return dict(httpx.get(f"{fake.url}/_fake/stats").json())


@dataclass
class Setup:
    project: Project
    dataset_id: int
    model_ids: list[int]


def setup(factory: Factory, settings: Settings, fake: FakeProviderThread, cases: int = 10,
          kind: str = "fake", secret: str | None = None, secret_env: str | None = None,
          params: dict[str, Any] | None = None, priced: bool = True,
          config: dict[str, Any] | None = None, owner: Any = None) -> Setup:
    owner = owner or factory.user()
    project = factory.project(owner, "Providers")
    with db.factory() as session:
        credential = Credential(project_id=project.id, kind=kind, label=kind,
                                base_url=fake.url, secret_env=secret_env, config=config or {})
        if secret is not None:
            credential.secret_ciphertext = encrypt_secret(settings.secret_key, project.id,
                                                          kind, secret)
        session.add(credential)
        session.flush()
        model = ModelConfig(project_id=project.id, credential_id=credential.id, name="M",
                            model="fake-fast",
                            input_price_per_mtok_micros=150_000 if priced else None,
                            output_price_per_mtok_micros=600_000 if priced else None,
                            params={"temperature": 0, "max_tokens": 64} if params is None
                            else params)
        session.add(model)
        session.flush()
        dataset = create_dataset(session, None, project, "qs", "questions", [
            {"input": {"question": f"question number {i} about things"}} for i in range(cases)])
        session.commit()
        return Setup(project, dataset.id, [model.id])


def run(s: Setup, execute: bool = True, **kw: Any) -> int:
    with db.factory() as session:
        created = plan_run(session, None, session.merge(s.project), RunSpec(
            dataset_id=s.dataset_id, targets=tuple(TargetSpec(i) for i in s.model_ids), **kw))
        session.commit()
        run_id = created.id
    if execute:
        execute_run(run_id)
    return run_id


def outputs(run_id: int) -> list[Output]:
    with db.factory() as session:
        return list(session.scalars(select(Output).where(Output.run_id == run_id)
                                    .order_by(Output.case_id, Output.repeat)))


def the_run(run_id: int) -> Run:
    with db.factory() as session:
        found = session.get(Run, run_id)
        assert found is not None
        return found


def test_injected_faults_end_succeeded_or_classified(factory: Factory, settings: Settings,
                                                     fake: FakeProviderThread) -> None:
    configure(fake, fault_rate=0.2, faults=["429", "500", "hang", "reset", "malformed"],
              seed=5, hang_s=3, retry_after_s=0.1, latency_ms=5)
    s = setup(factory, settings, fake, cases=60)
    run_id = run(s, concurrency=20, timeout_s=1)
    seen = stats(fake)
    rows = outputs(run_id)
    assert len(rows) == 60
    assert {o.status for o in rows} <= {"succeeded", "failed"}, "a cell was left undone"
    failed = [o for o in rows if o.status == "failed"]
    assert all(o.error_class in ERROR_CLASSES and o.error_message for o in failed)
    assert all(o.text and o.error_class is None for o in rows if o.status == "succeeded")
    assert sum(seen["faults"].values()) >= 6 and set(seen["faults"]) >= {"429", "500"}
    assert any(o.attempts > 1 for o in rows), "no cell was retried"
    final = the_run(run_id)
    assert final.succeeded + final.failed == 60 and final.failed == len(failed)
    assert final.status == ("completed" if not failed else "partial")


def test_second_identical_run_is_served_from_the_cache(factory: Factory, settings: Settings,
                                                       fake: FakeProviderThread) -> None:
    s = setup(factory, settings, fake, cases=8)
    first = outputs(run(s, repeats=2))
    assert stats(fake)["total"] == 16
    assert all(o.status == "succeeded" and not o.cached and o.cost_micros for o in first)
    httpx.post(f"{fake.url}/_fake/reset")

    second = outputs(run(s, repeats=2))
    assert stats(fake)["total"] == 0, "a cached rerun called the provider"
    assert all(o.status == "succeeded" and o.cached and o.cost_micros == 0 for o in second)
    assert [(o.text, o.tokens_in, o.tokens_out) for o in second] == [
        (o.text, o.tokens_in, o.tokens_out) for o in first]
    with db.factory() as session:
        hits = list(session.scalars(select(CachedResponse.hits)))
        assert len(hits) == 16 and set(hits) == {1}

    opted_out = outputs(run(s, repeats=2, cache=False))
    assert stats(fake)["total"] == 16 and not any(o.cached for o in opted_out)


def test_the_cache_is_never_shared_between_projects(factory: Factory, settings: Settings,
                                                   fake: FakeProviderThread) -> None:
    run(setup(factory, settings, fake, cases=4))
    other = outputs(run(setup(factory, settings, fake, cases=4)))  # same prompts, other tenant
    assert stats(fake)["total"] == 8 and not any(o.cached for o in other)


def test_sampling_runs_are_not_cached(factory: Factory, settings: Settings,
                                      fake: FakeProviderThread) -> None:
    s = setup(factory, settings, fake, cases=4, params={"temperature": 0.8, "max_tokens": 20})
    run(s)
    again = outputs(run(s))
    assert stats(fake)["total"] == 8 and not any(o.cached for o in again)
    with db.factory() as session:
        assert session.scalar(select(CachedResponse.key)) is None


@pytest.mark.parametrize(("kind", "path"), [
    ("anthropic", "/v1/messages"), ("azure_openai", "/openai/deployments/fake-fast/"),
    ("openai_compatible", "/v1/chat/completions"), ("ollama", "/v1/chat/completions")])
def test_every_kind_runs_through_the_engine(factory: Factory, settings: Settings,
                                            fake: FakeProviderThread, kind: str,
                                            path: str) -> None:
    s = setup(factory, settings, fake, cases=3, kind=kind, secret=SECRET)
    rows = outputs(run(s, stream=True))
    assert all(o.status == "succeeded" for o in rows), [o.error_message for o in rows]
    for o in rows:
        assert o.raw_request is not None and path in o.raw_request["url"]
        assert o.ttft_ms is not None and o.latency_ms is not None and o.ttft_ms <= o.latency_ms
        assert o.raw_response is not None and o.raw_response["streamed"] is True
        assert o.tokens_in and o.tokens_out and o.cost_micros and o.attempts == 1
        assert SECRET not in str(o.raw_request) + str(o.raw_response)


def test_unpriced_models_cost_unknown_not_zero(factory: Factory, settings: Settings,
                                               fake: FakeProviderThread) -> None:
    s = setup(factory, settings, fake, cases=3, priced=False)
    rows = outputs(run(s))
    assert all(o.status == "succeeded" and o.cost_micros is None for o in rows)


def test_a_key_that_cannot_be_resolved_fails_cells_as_auth(factory: Factory,
                                                           settings: Settings,
                                                           fake: FakeProviderThread,
                                                           monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    """The variable was set when the run was planned (planning refuses a run without it)
    and is gone when the worker runs it."""
    s = setup(factory, settings, fake, cases=3, kind="openai",
              secret_env="NEVER_SET_TEST_API_KEY")
    monkeypatch.setenv("ASSAY_CREDENTIAL_ENV", "NEVER_SET_TEST_API_KEY=*")
    monkeypatch.setenv("ASSAY_CREDENTIAL_ENV_URLS", f"NEVER_SET_TEST_API_KEY={fake.url}")
    monkeypatch.setenv("NEVER_SET_TEST_API_KEY", "set-while-planning")
    run_id = run(s, execute=False)
    monkeypatch.delenv("NEVER_SET_TEST_API_KEY")
    execute_run(run_id)
    rows = outputs(run_id)
    assert all(o.status == "failed" and o.error_class == "auth" for o in rows)
    assert all("NEVER_SET_TEST_API_KEY" in (o.error_message or "") for o in rows)
    assert stats(fake)["total"] == 0 and the_run(run_id).status == "failed"


def test_the_resolved_key_is_what_is_sent(factory: Factory, settings: Settings,
                                          fake: FakeProviderThread) -> None:
    s = setup(factory, settings, fake, cases=2, kind="openai", secret="bad-key")
    rows = outputs(run(s))
    assert all(o.status == "failed" and o.error_class == "auth" and o.attempts == 1
               for o in rows)


def _wait_done(run_id: int, timeout: float = 60) -> Run:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = the_run(run_id)
        if found.finished_at is not None:
            return found
        time.sleep(0.1)
    raise AssertionError("the run did not finish")


def test_the_key_never_leaves_the_worker(factory: Factory, settings: Settings,
                                         fake: FakeProviderThread, live_url: str,
                                         worker: subprocess.Popen[bytes],
                                         test_env: dict[str, str]) -> None:
    owner = factory.user()
    s = setup(factory, settings, fake, cases=5, kind="openai", secret=SECRET, owner=owner)
    token = factory.api_token(owner)
    reply = httpx.post(f"{live_url}/api/projects/{s.project.id}/runs",
                       json={"dataset_id": s.dataset_id,
                             "targets": [{"model_id": i} for i in s.model_ids]},
                       headers={"Authorization": f"Bearer {token}"})
    assert reply.status_code == 202, reply.text
    assert SECRET not in reply.text
    run_id = reply.json()["id"]
    assert _wait_done(run_id).status == "completed"
    assert stats(fake)["total"] == 5  # the worker called with the key it resolved itself

    rt = current()
    registry = FinishedJobRegistry(queue=Queue(settings.runs_queue, connection=rt.redis))
    jobs = [Job.fetch(i, connection=rt.redis) for i in registry.get_job_ids()]
    ours = [j for j in jobs if j.args == (run_id,)]
    assert ours, "the run's job was not found"
    for job in ours:
        assert job.kwargs == {} and SECRET not in repr(job.args) + (job.description or "")
    events = rt.redis.xrange(rt.events_key(run_id))
    assert events and SECRET.encode() not in b"".join(
        k + v for _, fields in events for k, v in fields.items())
    for o in outputs(run_id):
        values = [o.text, o.error_message, o.raw_request, o.raw_response]
        assert SECRET not in repr(values)
    listed = httpx.get(f"{live_url}/api/projects/{s.project.id}/runs/{run_id}/outputs",
                       headers={"Authorization": f"Bearer {token}"})
    assert listed.status_code == 200 and SECRET not in listed.text
    url = test_env["DATABASE_URL"]
    if url.startswith("sqlite:///"):
        with db.engine.connect() as conn:  # make sure the WAL is folded into the file
            conn.exec_driver_sql("PRAGMA wal_checkpoint(FULL)")
        raw = Path(url.removeprefix("sqlite:///")).read_bytes()
        wal = Path(url.removeprefix("sqlite:///") + "-wal")
        raw += wal.read_bytes() if wal.exists() else b""
        assert SECRET.encode() not in raw, "the key is in the database file in plain text"


def test_two_shard_runners_share_a_run_without_doing_a_cell_twice(
        factory: Factory, settings: Settings, fake: FakeProviderThread) -> None:
    import threading

    s = setup(factory, settings, fake, cases=150, params={"temperature": 0.5, "max_tokens": 8})
    run_id = run(s, execute=False, concurrency=10)
    runners = [threading.Thread(target=execute_run, args=(run_id,)) for _ in range(2)]
    for runner in runners:
        runner.start()
    for runner in runners:
        runner.join(60)
    rows = outputs(run_id)
    assert len(rows) == 150 and all(o.status == "succeeded" for o in rows)
    assert all(o.attempts == 1 for o in rows), "a cell was claimed twice"
    assert stats(fake)["total"] == 150, "a cell was called twice"
    assert the_run(run_id).status == "completed"
