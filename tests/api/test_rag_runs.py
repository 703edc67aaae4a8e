"""Answering from documents, through the API: a document is chunked on upload and its
chunks retrieved by BM25; a run with "Answer from documents" puts each question's top-k
chunks in its prompt through the template and keeps them with the output; RAG metrics
judge groundedness against those chunks, so a model that copies its context is grounded
and one that contradicts it is not."""

from __future__ import annotations

import io
from typing import Any

import pytest
from sqlalchemy import select

from assay.core.llm.models import Credential, ModelConfig
from assay.core.llm.service import ensure_fake_models
from assay.core.projects.models import Project
from assay.core.runs.models import Output
from assay.extensions import db
from assay.jobs.runs import execute_run
from assay.providers.fake import FakeProviderThread
from tests.engine.test_providers_engine import configure, fake  # noqa: F401
from tests.factories import Factory, Session

HANDBOOK = """# Returns

Refunds are paid within 30 days of a return. Store credit never expires.

# Warranty

The warranty lasts two years and covers parts and labour. Batteries are covered for six
months.

# Shipping

Orders ship from Rotterdam. Express delivery takes one working day within the Netherlands.
"""
QUESTIONS = ["How long does the warranty last?", "When are refunds paid?",
             "Where do orders ship from?"]


def upload(browser: Session, project_id: int, name: str, data: bytes,
           **form: Any) -> Any:
    return browser.post(f"/api/projects/{project_id}/documents",
                        data={"file": (io.BytesIO(data), name), **form},
                        content_type="multipart/form-data")


def rag_models(project_id: int, fake_url: str) -> dict[str, int]:
    with db.factory() as session:
        project = session.get(Project, project_id)
        assert project is not None
        models = ensure_fake_models(session, None, project, fake_url, [
            ("Copier", "fake-rag-copier", 100_000, 100_000),
            ("Contradicter", "fake-rag-contradicter", 100_000, 100_000),
            ("Judge", "fake-judge", 100_000, 100_000)])
        session.commit()
        return {m.name: m.id for m in models}


def test_a_document_is_chunked_on_upload_and_searched_by_bm25(factory: Factory) -> None:
    owner = factory.user()
    project = factory.project(owner, "Chunks")
    browser = factory.login(owner)
    reply = upload(browser, project.id, "handbook.md", HANDBOOK.encode(), chunk_size="20",
                   chunk_overlap="0")
    assert reply.status_code == 201, reply.json
    doc = reply.json
    assert (doc["chunk_size"], doc["chunk_overlap"]) == (20, 0) and doc["chunks"] >= 3
    chunks = browser.get(f"/api/projects/{project.id}/documents/{doc['id']}/chunks").json
    items = chunks["items"]
    assert [c["position"] for c in items] == list(range(doc["chunks"]))
    for c in items:  # each chunk is the document's text between its offsets
        assert HANDBOOK[c["start_char"]:c["end_char"]] == c["text"] and c["tokens"] <= 20
    found = browser.get(f"/api/projects/{project.id}/documents/{doc['id']}/search",
                        query_string={"query": "warranty years", "top_k": 2}).json["items"]
    assert "warranty lasts two years" in found[0]["text"]
    assert found == sorted(found, key=lambda c: -c["score"]) and found[0]["score"] > 0
    assert browser.get(f"/api/projects/{project.id}/documents/{doc['id']}/search",
                       query_string={"query": "zebra"}).json["items"] == []
    bad = upload(browser, project.id, "h.md", b"text", chunk_size="5")
    assert bad.status_code == 422 and "chunk_size" in str(bad.json)
    bad = upload(browser, project.id, "h.md", b"text", chunk_size="100", chunk_overlap="80")
    assert bad.status_code == 422 and "chunk_overlap" in str(bad.json)
    default = upload(browser, project.id, "h.txt", HANDBOOK.encode()).json
    assert (default["chunk_size"], default["chunk_overlap"]) == (200, 20)


def _rag_run(browser: Session, project_id: int, dataset_id: int, models: list[int],
             judge_scorer: int, rag: dict[str, Any]) -> Any:
    return browser.post(f"/api/projects/{project_id}/runs", json={
        "dataset_id": dataset_id, "targets": [{"model_id": m} for m in models],
        "scorer_ids": [judge_scorer], "cache": False, "rag": rag})


def test_a_rag_run_retrieves_per_question_and_judges_against_the_context(
        factory: Factory, fake: FakeProviderThread) -> None:  # noqa: F811
    configure(fake, latency_ms=0, scripts=[])
    owner = factory.user()
    project = factory.project(owner, "RAG run")
    browser = factory.login(owner)
    models = rag_models(project.id, fake.url)
    doc = upload(browser, project.id, "handbook.md", HANDBOOK.encode(), chunk_size="25",
                 chunk_overlap="0").json
    chunk_ids = [c["chunk_id"] for c in browser.get(
        f"/api/projects/{project.id}/documents/{doc['id']}/chunks").json["items"]]
    warranty = next(c["chunk_id"] for c in browser.get(
        f"/api/projects/{project.id}/documents/{doc['id']}/search",
        query_string={"query": "warranty"}).json["items"])
    dataset = browser.post(f"/api/projects/{project.id}/datasets", json={
        "name": "Handbook", "kind": "questions", "cases": [
            {"input": {"question": q},
             "expected": {"answer": "see the handbook",
                          **({"source_chunks": [warranty]} if i == 0 else {})}}
            for i, q in enumerate(QUESTIONS)]})
    assert dataset.status_code == 201, dataset.json
    scorer = browser.post(f"/api/projects/{project.id}/scorers", json={
        "name": "RAG", "kind": "rag_metrics", "params": {"judges": ["Judge"]}})
    assert scorer.status_code == 201, scorer.json

    bad = _rag_run(browser, project.id, dataset.json["id"], [models["Copier"]],
                   scorer.json["id"], {"document_ids": [999_999], "template": "{{question}}"})
    assert bad.status_code == 422
    problems = bad.json["errors"]["json"]["rag"]
    assert "No document 999999" in str(problems["document_ids"])
    assert "{{context}}" in str(problems["template"])

    template = "Use the context.\n\nContext:\n{{context}}\n\nQuestion: {{question}}"
    created = _rag_run(browser, project.id, dataset.json["id"],
                       [models["Copier"], models["Contradicter"]], scorer.json["id"],
                       {"document_ids": [doc["id"]], "top_k": 2, "template": template})
    assert created.status_code == 202, created.json
    run = created.json
    assert run["settings"]["rag"] == {"document_ids": [doc["id"]], "top_k": 2,
                                      "template": template}
    execute_run(run["id"])

    listed = browser.get(f"/api/projects/{project.id}/runs/{run['id']}/outputs",
                         query_string={"page_size": 50}).json["items"]
    assert len(listed) == 6 and all(o["status"] == "succeeded" for o in listed)
    for o in listed:
        assert 1 <= len(o["retrieved"]) <= 2
        assert {c["chunk_id"] for c in o["retrieved"]} <= set(chunk_ids)
    with db.factory() as session:
        sent = session.execute(select(Output.id, Output.raw_request).where(
            Output.run_id == run["id"])).all()
    for output_id, raw in sent:  # the prompt holds the template and the chunks retrieved
        prompt = raw["json"]["messages"][-1]["content"]
        row = next(o for o in listed if o["id"] == output_id)
        assert "Use the context." in prompt
        assert all(c["text"] in prompt for c in row["retrieved"])

    detail = browser.get(f"/api/projects/{project.id}/runs/{run['id']}/outputs/"
                         f"{listed[0]['id']}").json
    assert detail["retrieved"] == listed[0]["retrieved"]
    rag_score = next(s for s in detail["scores"] if s["kind"] == "rag_metrics")
    assert rag_score["details"]["grounding_source"] == "retrieved"

    grid = browser.get(f"/api/projects/{project.id}/runs/{run['id']}/grid").json
    shown = [out for row in grid["rows"] for cell in row["cells"] for out in cell["outputs"]]
    assert len(shown) == 6 and all(out["retrieved"][0]["text"] for out in shown)
    by_model: dict[int, list[float]] = {}
    for o in listed:
        scores = browser.get(f"/api/projects/{project.id}/runs/{run['id']}/outputs/"
                             f"{o['id']}").json["scores"]
        score = next(s for s in scores if s["kind"] == "rag_metrics")
        by_model.setdefault(o["model_id"], []).append(score["criteria"]["groundedness"])
    copier, contradicter = by_model[models["Copier"]], by_model[models["Contradicter"]]
    assert min(copier) >= 0.75 and max(contradicter) <= 0.25, (copier, contradicter)

    first_case = min(o["case_id"] for o in listed)
    precision = [s["details"] for o in listed if o["case_id"] == first_case
                 for s in browser.get(f"/api/projects/{project.id}/runs/{run['id']}/outputs/"
                                      f"{o['id']}").json["scores"]]
    for details in precision:  # the warranty question retrieved its source chunk first
        assert details["source_chunk_ids"] == [warranty]
        assert details["context_recall"] == 1.0
        assert details["metrics"]["context_precision"] == pytest.approx(
            1 / len(details["retrieved_chunk_ids"]))


def test_a_run_without_documents_is_judged_against_the_reference(
        factory: Factory, fake: FakeProviderThread) -> None:  # noqa: F811
    configure(fake, latency_ms=0, scripts=[])
    owner = factory.user()
    project = factory.project(owner, "No RAG")
    browser = factory.login(owner)
    models = rag_models(project.id, fake.url)
    dataset = browser.post(f"/api/projects/{project.id}/datasets", json={
        "name": "Plain", "kind": "questions", "cases": [
            {"input": {"question": "How long is the warranty?"},
             "expected": {"answer": "Two years."}}]}).json
    scorer = browser.post(f"/api/projects/{project.id}/scorers", json={
        "name": "RAG", "kind": "rag_metrics", "params": {"judges": ["Judge"]}}).json
    run = browser.post(f"/api/projects/{project.id}/runs", json={
        "dataset_id": dataset["id"], "targets": [{"model_id": models["Copier"]}],
        "scorer_ids": [scorer["id"]], "cache": False}).json
    assert run["settings"].get("rag") is None
    execute_run(run["id"])
    out = browser.get(f"/api/projects/{project.id}/runs/{run['id']}/outputs").json["items"][0]
    assert out["retrieved"] is None
    detail = browser.get(f"/api/projects/{project.id}/runs/{run['id']}/outputs/"
                         f"{out['id']}").json
    assert detail["scores"][0]["details"]["grounding_source"] == "reference"


_ = (Credential, ModelConfig)
