"""Generation end to end: API -> RQ -> a real worker process -> LLMClient -> fake provider
(scripted replies) -> Redis preview -> SSE -> accept into a dataset."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from assay.core.datasets.models import Dataset
from assay.core.llm.service import ensure_demo_models
from assay.extensions import db
from assay.providers.fake import FakeProviderThread
from tests.engine.test_demo_run import read_events, stream_id
from tests.factories import Factory


@pytest.fixture
def scripted(fake_provider: FakeProviderThread) -> Iterator[None]:
    def batch(n: int, size: int) -> str:
        return "```json\n" + json.dumps([{"question": f"Batch {n} question {i}?",
                                          "answer": str(i)} for i in range(size)]) + "\n```"

    scripts = [{"model": "fake-fast", "pattern": f"batch {n} of 3", "reply": batch(n, 25)}
               for n in (1, 2)]
    scripts.append({"model": "fake-fast", "pattern": "batch 3 of 3", "reply": batch(3, 6)})
    reply = httpx.post(f"{fake_provider.url}/_fake/config", json={"scripts": scripts})
    assert reply.status_code == 200
    yield
    httpx.post(f"{fake_provider.url}/_fake/config", json={"scripts": []})


@pytest.fixture
def project(factory: Factory, live_url: str, worker: subprocess.Popen[bytes]) -> dict[str, Any]:
    owner = factory.user()
    project = factory.project(owner, "Generating")
    with db.factory() as session:
        models = ensure_demo_models(session, session.merge(owner), session.merge(project),
                                    factory.settings.fake_provider_url)
        session.commit()
        model_id = models[0].id
    token = factory.api_token(owner)
    return {"base": f"{live_url}/api/projects/{project.id}/generation", "model_id": model_id,
            "headers": {"Authorization": f"Bearer {token}"}, "token": token}


def test_a_worker_generates_questions_in_batches_with_live_progress(
        project: dict[str, Any], scripted: None) -> None:
    base, headers = project["base"], project["headers"]
    started = httpx.post(f"{base}/questions", headers=headers, json={
        "model_id": project["model_id"], "count": 60, "topic": "deltas"})
    assert started.status_code == 202, started.text
    job_id = started.json()["id"]

    events = read_events(f"{base}/{job_id}/events", project["token"])
    types = [kind for _, kind, _ in events]
    assert types == ["generation.started", *["generation.progress"] * 3,
                     "generation.finished"]
    ids = [stream_id(event_id) for event_id, _, _ in events]
    assert ids == sorted(ids)
    done = [data["batches_done"] for _, _, data in events]
    assert done == [0, 1, 2, 3, 3]
    final = events[-1][2]
    assert final["status"] == "partial" and (final["requested"], final["received"]) == (60, 56)

    job = httpx.get(f"{base}/{job_id}", headers=headers).json()
    assert job["status"] == "partial" and len(job["items"]) == 56
    assert job["error"].startswith("56 of 60 questions")
    assert "asked for 60 questions, got 56" in job["warnings"]
    assert job["cost_micros"] > 0
    # resuming after the last event replays nothing but still ends the stream
    resumed = httpx.get(f"{base}/{job_id}/events", timeout=30,
                        headers={**headers, "Last-Event-ID": events[-1][0]}).text
    assert "event: generation.started" not in resumed
    assert "event: generation.finished" in resumed

    accepted = httpx.post(f"{base}/{job_id}/accept", headers=headers,
                          json={"dataset_name": "Deltas", "selected": list(range(0, 56, 2))})
    assert accepted.status_code == 201, accepted.text
    with db.factory() as session:
        dataset = session.get(Dataset, accepted.json()["dataset_id"])
        assert dataset is not None and dataset.kind == "questions"
    assert accepted.json()["cases"] == 28


def test_a_worker_generates_conversations_grounded_in_an_uploaded_document(
        project: dict[str, Any], fake_provider: FakeProviderThread) -> None:
    base, headers = project["base"], project["headers"]
    documents = base.replace("/generation", "/documents")
    uploaded = httpx.post(documents, headers=headers, files={
        "file": ("delta.md", b"# Deltas\n\nThe Nile delta is 240 km wide at the coast.")})
    assert uploaded.status_code == 201, uploaded.text
    conversations = [{"turns": [{"question": f"How wide is the Nile delta? ({n})",
                                 "ground_truth": "240 km at the coast."},
                                {"question": "Where is it widest?",
                                 "ground_truth": "At the coast."}]} for n in range(2)]
    httpx.post(f"{fake_provider.url}/_fake/config", json={"scripts": [
        {"model": None, "pattern": "Nile delta", "reply": json.dumps(conversations)}]})
    try:
        started = httpx.post(f"{base}/conversations", headers=headers, json={
            "model_id": project["model_id"], "document_id": uploaded.json()["id"],
            "count": 2, "turns": 2})
        assert started.status_code == 202, started.text
        job_id = started.json()["id"]
        events = read_events(f"{base}/{job_id}/events", project["token"])
    finally:
        httpx.post(f"{fake_provider.url}/_fake/config", json={"scripts": []})
    assert [kind for _, kind, _ in events][-1] == "generation.finished"
    job = httpx.get(f"{base}/{job_id}", headers=headers).json()
    assert job["status"] == "succeeded" and job["received"] == 2, job
    accepted = httpx.post(f"{base}/{job_id}/accept", headers=headers,
                          json={"dataset_name": "Nile", "selected": [1]})
    assert accepted.status_code == 201 and accepted.json()["kind"] == "conversations"
