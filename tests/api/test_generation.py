"""Generation through the API, its jobs run inline against the fake provider's scripted
replies: questions, synthetic cases, budgets, estimates, previews and accepting them."""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from assay.core.datasets.models import Case, Dataset, DatasetVersion, VersionCase
from assay.core.llm.models import Credential, ModelConfig
from assay.core.llm.service import ensure_demo_models
from assay.core.projects.models import AuditEvent, Project, Role
from assay.extensions import db
from assay.jobs.generation import run_job
from assay.providers.fake import FakeProviderThread
from assay.runtime import current
from tests.factories import Factory, Session


@dataclass
class Setup:
    browser: Session
    project: Project
    fast: int  # priced fake-provider models
    smart: int
    factory: Factory

    @property
    def base(self) -> str:
        return f"/api/projects/{self.project.id}/generation"


@pytest.fixture
def scripts(fake_provider: FakeProviderThread) -> Iterator[Any]:
    def set_scripts(*rows: tuple[str, str]) -> None:
        reply = httpx.post(f"{fake_provider.url}/_fake/config", json={"scripts": [
            {"model": None, "pattern": pattern, "reply": text} for pattern, text in rows]})
        assert reply.status_code == 200, reply.text

    yield set_scripts
    httpx.post(f"{fake_provider.url}/_fake/config", json={"scripts": []})


@pytest.fixture
def setup(factory: Factory) -> Setup:
    owner = factory.user()
    project = factory.project(owner, "Generation")
    with db.factory() as session:
        models = ensure_demo_models(session, session.merge(owner), session.merge(project),
                                    factory.settings.fake_provider_url)
        session.commit()
        fast, smart = models[0].id, models[1].id
    return Setup(factory.login(owner), project, fast, smart, factory)


def run_inline(job_id: int) -> None:
    asyncio.run(run_job(current(), job_id))


def start(setup: Setup, kind: str, body: dict[str, Any]) -> dict[str, Any]:
    reply = setup.browser.post(f"{setup.base}/{kind}", json=body)
    assert reply.status_code == 202, reply.json
    job = reply.json
    assert job["status"] == "queued" and job["items"] == []
    run_inline(job["id"])
    done = setup.browser.get(f"{setup.base}/{job['id']}")
    assert done.status_code == 200
    return dict(done.json)


QUESTIONS = [{"question": f"Question number {n} about rivers?", "answer": f"Answer {n}"}
             for n in range(7)]


def test_questions_end_to_end_asked_for_ten_got_seven(setup: Setup, scripts: Any) -> None:
    reply = ("Here are your questions:\n```json\n"
             + json.dumps([*QUESTIONS, QUESTIONS[0]]) + "\n```\nEnjoy!")
    scripts(("about: rivers", reply))
    job = start(setup, "questions", {"model_id": setup.fast, "count": 10, "topic": "rivers",
                                     "type_tags": ["geography"], "difficulty": "easy"})
    # fewer items than asked is partial, with the reason, never "succeeded"
    assert job["status"] == "partial", job
    assert (job["requested"], job["received"]) == (10, 7)
    assert "asked for 10 questions, got 7" in job["warnings"]
    assert "1 duplicate question(s) dropped" in job["warnings"]
    assert job["items"] == QUESTIONS
    assert job["cost_micros"] > 0 and job["tokens_in"] > 0 and job["tokens_out"] > 0
    assert job["estimate"]["high_micros"] >= job["cost_micros"]
    assert (job["batches"], job["batches_done"]) == (1, 1)
    assert job["error"] == "7 of 10 questions: 1 duplicate question(s) dropped"

    events = setup.browser.get(f"{setup.base}/{job['id']}/events")
    assert events.mimetype == "text/event-stream"
    kinds = [line.split(": ", 1)[1] for line in events.get_data(as_text=True).splitlines()
             if line.startswith("event: ")]
    assert kinds == ["generation.started", "generation.progress", "generation.finished"]

    accepted = setup.browser.post(f"{setup.base}/{job['id']}/accept",
                                  json={"dataset_name": "Rivers", "selected": [4, 0, 2]})
    assert accepted.status_code == 201, accepted.json
    assert accepted.json["cases"] == 3 and accepted.json["kind"] == "questions"
    with db.factory() as session:
        dataset = session.get(Dataset, accepted.json["dataset_id"])
        assert dataset is not None and dataset.kind == "questions"
        cases = list(session.scalars(select(Case).join(VersionCase).join(DatasetVersion)
                                     .where(DatasetVersion.dataset_id == dataset.id)
                                     .order_by(VersionCase.position)))
        assert [c.input for c in cases] == [{"question": QUESTIONS[i]["question"]}
                                            for i in (4, 0, 2)]
        assert cases[0].expected == {"answer": "Answer 4"}
        assert (cases[0].tags, cases[0].difficulty) == (["geography"], "easy")
        actions = list(session.scalars(select(AuditEvent.action).where(
            AuditEvent.project_id == setup.project.id).order_by(AuditEvent.id)))
    assert actions[-3:] == ["generation.started", "dataset.created", "generation.accepted"]
    again = setup.browser.get(f"{setup.base}/{job['id']}").json
    assert again["dataset_ids"] == [accepted.json["dataset_id"]]
    listed = setup.browser.get(setup.base).json
    assert [j["id"] for j in listed["items"]] == [job["id"]] and listed["total"] == 1
    assert "items" not in listed["items"][0]


def test_a_large_count_runs_in_batches_deduped_across_them(setup: Setup, scripts: Any) -> None:
    def batch(n: int, size: int) -> str:
        return "\n".join(f"{i + 1}. Batch {n} question {i}?" for i in range(size))

    scripts(("batch 1 of 3", batch(1, 25)), ("batch 2 of 3", batch(2, 25)),
            # the third batch repeats two of the first's and misses some
            ("batch 3 of 3", batch(1, 2) + "\n" + batch(3, 5)))
    job = start(setup, "questions", {"model_id": setup.fast, "count": 60, "topic": "lakes"})
    assert job["status"] == "partial"
    assert job["error"] == "55 of 60 questions: 2 duplicate question(s) dropped"
    assert (job["batches"], job["batches_done"]) == (3, 3)
    assert job["received"] == 55
    assert "2 duplicate question(s) dropped" in job["warnings"]
    assert "asked for 60 questions, got 55" in job["warnings"]


def test_estimates_are_ranges_and_write_nothing(setup: Setup) -> None:
    body = {"model_id": setup.smart, "count": 60, "topic": "tides"}
    reply = setup.browser.post(f"{setup.base}/questions/estimate", json=body)
    assert reply.status_code == 200, reply.json
    est = reply.json
    assert est["calls"] == 3 and est["priced"]
    assert 0 < est["low_micros"] < est["high_micros"]
    assert est["output_tokens_low"] < est["output_tokens_high"]
    cases = setup.browser.post(f"{setup.base}/cases/estimate", json={
        "model_id": setup.fast, "count": 500, "diversity": 9, "variables": ["a", "b"],
        "include_edge_cases": True}).json
    assert cases["calls"] == 25 and cases["high_micros"] > 0
    assert setup.browser.get(setup.base).json["total"] == 0


def test_a_budget_below_the_estimate_refuses_to_start(setup: Setup) -> None:
    with db.factory() as session:
        audits = len(session.scalars(select(AuditEvent.id)).all())
    reply = setup.browser.post(f"{setup.base}/questions", json={
        "model_id": setup.smart, "count": 100, "topic": "x", "max_cost_micros": 10})
    assert reply.status_code == 422 and reply.json["code"] == "OVER_BUDGET"
    assert "max_cost_micros" in reply.json["errors"]["json"]
    with db.factory() as session:
        assert len(session.scalars(select(AuditEvent.id)).all()) == audits
        model = session.get(ModelConfig, setup.fast)
        assert model is not None
        model.input_price_per_mtok_micros = None
        session.commit()
    unpriced = setup.browser.post(f"{setup.base}/questions", json={
        "model_id": setup.fast, "count": 5, "topic": "x", "max_cost_micros": 10**9})
    assert unpriced.status_code == 422
    assert unpriced.json["errors"]["json"]["max_cost_micros"] == ["The model is unpriced"]
    assert setup.browser.get(setup.base).json["total"] == 0
    roomy = setup.browser.post(f"{setup.base}/questions", json={
        "model_id": setup.smart, "count": 5, "topic": "x", "max_cost_micros": 10**9})
    assert roomy.status_code == 202


def test_the_budget_holds_when_prices_rise_before_the_job_runs(setup: Setup,
                                                               scripts: Any) -> None:
    scripts(("about: brooks", json.dumps(["Brook one?", "Brook two?"])))
    body = {"model_id": setup.smart, "count": 2, "topic": "brooks"}
    high = setup.browser.post(f"{setup.base}/questions/estimate", json=body).json["high_micros"]
    reply = setup.browser.post(f"{setup.base}/questions", json={**body, "max_cost_micros": high})
    assert reply.status_code == 202, reply.json
    with db.factory() as session:
        model = session.get(ModelConfig, setup.smart)
        assert model is not None
        model.output_price_per_mtok_micros *= 100
        session.commit()
    run_inline(reply.json["id"])
    job = setup.browser.get(f"{setup.base}/{reply.json['id']}").json
    assert job["status"] == "failed" and job["cost_micros"] == 0
    assert "batch 1 failed: skipped: the budget would be exceeded" in job["warnings"]


def test_synthetic_cases_drop_rows_missing_a_variable(setup: Setup, scripts: Any) -> None:
    rows = [{"input": {"city": f"City {n}", "tone": "formal"}, "expected": f"Hello {n}",
             "edge_case": n == 0} for n in range(9)]
    rows += [{"input": {"city": "Nowhere"}}, {"city": "Flat", "tone": "casual"}]
    scripts(("template variables: city, tone", json.dumps(rows)))
    job = start(setup, "cases", {"model_id": setup.fast, "count": 10, "diversity": 8,
                                 "domain_hints": "greetings", "variables": ["city", "tone"],
                                 "include_edge_cases": True})
    assert job["status"] == "succeeded", job
    assert job["received"] == 10
    assert "1 case(s) missing variable 'tone' dropped" in job["warnings"]
    assert job["items"][0] == {"input": {"city": "City 0", "tone": "formal"},
                               "expected": "Hello 0", "edge_case": True}
    assert job["items"][9] == {"input": {"city": "Flat", "tone": "casual"}, "expected": None,
                               "edge_case": False}
    accepted = setup.browser.post(f"{setup.base}/{job['id']}/accept",
                                  json={"dataset_name": "Greetings", "selected": None})
    assert accepted.status_code == 201 and accepted.json["cases"] == 10
    with db.factory() as session:
        first = session.scalars(select(Case).where(
            Case.dataset_id == accepted.json["dataset_id"]).order_by(Case.id)).first()
        assert first is not None
        assert (first.input, first.expected, first.tags) == (
            {"city": "City 0", "tone": "formal"}, {"output": "Hello 0"},
            ["synthetic", "edge-case"])


def test_case_variables_come_from_a_prompt_template(setup: Setup, scripts: Any) -> None:
    scripts(("<prompt>", json.dumps([{"input": {"name": f"N{n}", "city": f"C{n}"}}
                                     for n in range(10)])))
    template = "Greet {{ name }} from {{city}} warmly; mention {{name}} twice."
    job = start(setup, "cases", {"model_id": setup.fast, "count": 10,
                                 "prompt_template": template})
    assert job["spec"]["variables"] == ["name", "city"]
    assert job["received"] == 10 and job["items"][3]["input"] == {"name": "N3", "city": "C3"}
    both = setup.browser.post(f"{setup.base}/cases/estimate", json={
        "model_id": setup.fast, "count": 10, "variables": ["tone", "city"],
        "prompt_template": template})
    assert both.status_code == 200
    none = setup.browser.post(f"{setup.base}/cases", json={
        "model_id": setup.fast, "count": 10, "prompt_template": "No variables here."})
    assert none.status_code == 422 and "variables" in none.json["errors"]["json"]


def test_accepting_checks_state_selection_and_name(setup: Setup, scripts: Any) -> None:
    scripts(("about: seas", json.dumps(["Sea one?", "Sea two?"])))
    queued = setup.browser.post(f"{setup.base}/questions",
                                json={"model_id": setup.fast, "count": 2, "topic": "seas"}).json
    early = setup.browser.post(f"{setup.base}/{queued['id']}/accept",
                               json={"dataset_name": "Early"})
    assert early.status_code == 409 and early.json["code"] == "GENERATION_NOT_FINISHED"
    run_inline(queued["id"])
    url = f"{setup.base}/{queued['id']}/accept"
    bad = setup.browser.post(url, json={"dataset_name": "Seas", "selected": [0, 2]})
    assert bad.status_code == 422 and bad.json["errors"]["json"]["selected"]
    twice = setup.browser.post(url, json={"dataset_name": "Seas", "selected": [1, 1]})
    assert twice.status_code == 422
    assert setup.browser.post(url, json={"dataset_name": "Seas"}).status_code == 201
    taken = setup.browser.post(url, json={"dataset_name": "Seas"})
    assert taken.status_code == 409 and taken.json["code"] == "NAME_TAKEN"


def test_a_provider_failure_fails_the_job_with_its_class(setup: Setup) -> None:
    with db.factory() as session:
        credential = session.get(ModelConfig, setup.fast).credential  # type: ignore[union-attr]
        broken = Credential(project_id=setup.project.id, kind="fake", label="Broken",
                            base_url=credential.base_url, config={
                                "headers": {"X-Fake-Fault": "malformed"}})
        session.add(broken)
        session.flush()
        model = ModelConfig(project_id=setup.project.id, credential_id=broken.id,
                            name="Broken", model="fake-fast", params={})
        session.add(model)
        session.commit()
        model_id = model.id
    job = start(setup, "questions", {"model_id": model_id, "count": 3, "topic": "x"})
    assert job["status"] == "failed"
    assert job["error"].startswith("every batch failed; the first: malformed_response")
    assert job["cost_micros"] is None  # unpriced
    assert setup.browser.post(f"{setup.base}/{job['id']}/accept",
                              json={"dataset_name": "No"}).status_code == 409


def test_unknown_models_and_other_projects_jobs(setup: Setup, scripts: Any) -> None:
    reply = setup.browser.post(f"{setup.base}/questions",
                               json={"model_id": 999_999, "count": 2, "topic": "x"})
    assert reply.status_code == 422 and "model_id" in reply.json["errors"]["json"]
    scripts(("about: ponds", json.dumps(["Pond?"])))
    job = start(setup, "questions", {"model_id": setup.fast, "count": 1, "topic": "ponds"})
    stranger = setup.factory.signed_in()
    theirs = setup.factory.project(setup.factory.user(), "Theirs")
    with db.factory() as session:
        from assay.core.projects.models import Membership
        session.add(Membership(project_id=theirs.id, user_id=stranger.user_id,
                               role=Role.owner))
        session.commit()
    for method, suffix in (("GET", ""), ("GET", "/events"), ("POST", "/accept")):
        url = f"/api/projects/{theirs.id}/generation/{job['id']}{suffix}"
        body = {"dataset_name": "Stolen"} if method == "POST" else None
        assert stranger.request(method, url, json=body).status_code == 404, suffix


CONVERSATIONS = [{"turns": [
    {"question": f"How long is the Danube ({n})?", "ground_truth": "2,850 km."},
    {"question": "Through how many countries?", "ground_truth": "Ten."}]} for n in range(3)]


def test_grounded_conversations_from_a_document(setup: Setup, scripts: Any) -> None:
    document_id = make_document(setup.project.id)
    scripts(("<document>", json.dumps([*CONVERSATIONS, {"turns": [{"question": "No truth?"}]}])))
    job = start(setup, "conversations", {"model_id": setup.fast, "document_id": document_id,
                                         "count": 3, "turns": 2})
    assert job["status"] == "succeeded", job
    assert job["received"] == 3
    assert ("1 conversation(s) with a turn lacking its question or ground truth dropped"
            in job["warnings"])
    assert job["items"][0]["turns"][1] == {"turn_number": 2, "question": "Through how many "
                                           "countries?", "ground_truth": "Ten."}
    accepted = setup.browser.post(f"{setup.base}/{job['id']}/accept",
                                  json={"dataset_name": "Danube", "selected": [2]})
    assert accepted.status_code == 201 and accepted.json["kind"] == "conversations"
    with db.factory() as session:
        case = session.scalars(select(Case).where(
            Case.dataset_id == accepted.json["dataset_id"])).one()
        assert case.input == {"messages": [
            {"role": "user", "content": "How long is the Danube (2)?"},
            {"role": "user", "content": "Through how many countries?"}]}
        assert case.expected == {"turns": ["2,850 km.", "Ten."]}
        assert case.tags == ["grounded"]


def test_a_long_document_is_cut_to_the_context_window(setup: Setup, scripts: Any) -> None:
    long_text = " ".join(f"Fact {n}: the river has feature {n}." for n in range(3000))
    document_id = make_document(setup.project.id, long_text, "long.md")
    with db.factory() as session:
        model = session.get(ModelConfig, setup.fast)
        assert model is not None
        model.context_window = 4000
        session.commit()
    body = {"model_id": setup.fast, "document_id": document_id, "count": 2, "turns": 2}
    est = setup.browser.post(f"{setup.base}/conversations/estimate", json=body).json
    assert est["input_tokens"] < 4000
    assert any("cut to its first" in w for w in est["warnings"]), est
    scripts(("<document>", json.dumps(CONVERSATIONS[:2])))
    job = start(setup, "conversations", body)
    assert job["status"] == "succeeded" and job["received"] == 2
    assert any("cut to its first" in w for w in job["warnings"])
    missing = setup.browser.post(f"{setup.base}/conversations",
                                 json={**body, "document_id": 999_999})
    assert missing.status_code == 404


def finished_job(owner_id: int, project_id: int, model_id: int,
                 questions: list[str] | None = None) -> int:
    """A questions job that is over (its batch answered with `questions`), for tests that
    need one without running it: started through the service, concluded as the job does."""
    from assay.core.auth.models import User
    from assay.core.generation import service, store
    from assay.core.generation.service import BatchResult
    from assay.events.publish import publish
    from assay.jobs.generation import FINISHED

    rt = current()
    prefix = rt.settings.redis_prefix
    questions = questions or ["Finished question one?", "Finished question two?"]
    with db.factory() as session:
        owner, project = session.get(User, owner_id), session.get(Project, project_id)
        assert owner is not None and project is not None
        state = service.start(session, rt.redis, prefix, owner, project, "questions", {
            "model_id": model_id, "count": len(questions), "topic": "finished",
            "type_tags": [], "instructions": None, "difficulty": None,
            "max_cost_micros": None})
        session.commit()
    result = BatchResult(0, json.dumps(questions), None, 10, 10, 1)
    state["status"] = store.RUNNING
    service.apply_result(state, result)
    service.conclude(state, [len(questions)], [result])
    store.save(rt.redis, prefix, state)
    publish(rt.redis, store.events_key(prefix, state["id"]), FINISHED, service.progress(state))
    return int(state["id"])


def make_document(project_id: int, text: str = "The Danube flows through ten countries. "
                  "It is 2,850 km long.", name: str = "danube.txt") -> int:
    """A document row (as an upload would store it), for tests that need one."""
    from assay.core.datasets.models import Document

    with db.factory() as session:
        document = Document(project_id=project_id, name=name, mime="text/plain",
                            size_bytes=len(text.encode()), text=text, pages=None)
        session.add(document)
        session.commit()
        return document.id


def text_pdf(lines: list[str]) -> bytes:
    """A minimal one-page PDF with a text layer (Helvetica), built by hand."""
    content = "BT /F1 12 Tf 72 720 Td 14 TL " + " ".join(
        f"({line.replace('(', '[').replace(')', ']')}) '" for line in lines) + " ET"
    objects = [
        "<< /Type /Catalog /Pages 2 0 R >>",
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        "/Resources << /Font << /F1 5 0 R >> >> >>",
        f"<< /Length {len(content)} >>\nstream\n{content}\nendstream",
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = b"%PDF-1.4\n"
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n{body}\nendobj\n".encode()
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += "".join(f"{o:010d} 00000 n \n" for o in offsets).encode()
    out += (f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n"
            "%%EOF\n").encode()
    return out


def blank_pdf() -> bytes:
    """A PDF of one empty page: no text layer, like a scan."""
    from pypdf import PdfWriter

    writer, buffer = PdfWriter(), io.BytesIO()
    writer.add_blank_page(612, 792)
    writer.write(buffer)
    return buffer.getvalue()


def upload(browser: Session, project_id: int, name: str, data: bytes) -> Any:
    return browser.post(f"/api/projects/{project_id}/documents",
                        data={"file": (io.BytesIO(data), name)},
                        content_type="multipart/form-data")


def test_documents_upload_list_read_delete(setup: Setup) -> None:
    pid = setup.project.id
    pdf = upload(setup.browser, pid, "guide.pdf", text_pdf(["The Rhine is 1,230 km long.",
                                                             "It ends in the North Sea."]))
    assert pdf.status_code == 201, pdf.json
    assert (pdf.json["mime"], pdf.json["pages"]) == ("application/pdf", 1)
    assert "1,230 km" in pdf.json["text"] and "North Sea" in pdf.json["text"]
    text = upload(setup.browser, pid, "../../notes.md", "# Notes\n\nCaf\u00e9 facts.".encode())
    assert text.status_code == 201, text.json
    assert (text.json["name"], text.json["mime"], text.json["pages"]) == (
        "notes.md", "text/markdown", None)
    listed = setup.browser.get(f"/api/projects/{pid}/documents").json
    assert [d["name"] for d in listed["items"]] == ["notes.md", "guide.pdf"]
    assert "text" not in listed["items"][0] and listed["items"][1]["characters"] > 20
    one = setup.browser.get(f"/api/projects/{pid}/documents/{pdf.json['id']}")
    assert one.status_code == 200 and one.json["text"] == pdf.json["text"]
    assert setup.browser.delete(
        f"/api/projects/{pid}/documents/{pdf.json['id']}").status_code == 204
    assert setup.browser.get(
        f"/api/projects/{pid}/documents/{pdf.json['id']}").status_code == 404
    with db.factory() as session:
        actions = list(session.scalars(select(AuditEvent.action).where(
            AuditEvent.target_type == "document").order_by(AuditEvent.id)))
    assert actions == ["document.uploaded", "document.uploaded", "document.deleted"]


@pytest.mark.parametrize(("name", "data", "message"), [
    ("scan.pdf", blank_pdf(), "no extractable text (scanned PDF?)"),
    ("broken.pdf", b"%PDF-1.4\nnot really a pdf", "Not a readable PDF"),
    ("latin1.txt", "caf\u00e9".encode("latin-1"), "The text file is not UTF-8"),
    ("empty.txt", b"", "The file is empty"),
    ("blank.md", b"  \n\n ", "The file has no text"),
    ("nul.txt", b"a\x00b", "The text file contains NUL characters (is it binary?)"),
    ("sheet.xlsx", b"PK\x03\x04", "Upload a PDF, a .txt or a .md file"),
])
def test_documents_that_cannot_be_used_are_422(setup: Setup, name: str, data: bytes,
                                                message: str) -> None:
    reply = upload(setup.browser, setup.project.id, name, data)
    assert reply.status_code == 422, reply.json
    assert reply.json["errors"] == {"files": {"file": [message]}}
    assert setup.browser.get(f"/api/projects/{setup.project.id}/documents").json["total"] == 0


def test_document_uploads_over_20_mb_are_413_and_bad_forms_422(setup: Setup) -> None:
    url = f"/api/projects/{setup.project.id}/documents"
    big = upload(setup.browser, setup.project.id, "big.txt", b"a" * (20 * 1024 * 1024 + 1))
    assert big.status_code in (413, 422), big.json
    if big.status_code == 422:
        assert big.json["errors"]["files"]["file"] == ["The file is larger than 20 MB"]
    huge = upload(setup.browser, setup.project.id, "huge.txt", b"a" * (21 * 1024 * 1024))
    assert huge.status_code == 413 and huge.json["code"] == "PAYLOAD_TOO_LARGE"
    nineteen = upload(setup.browser, setup.project.id, "ok.txt", b"word " * (19 * 200_000))
    assert nineteen.status_code == 201
    missing = setup.browser.post(url, data={"other": "x"}, content_type="multipart/form-data")
    assert missing.status_code == 422 and "file" in missing.json["errors"]["files"]
    as_json = setup.browser.post(url, json={"file": "x"})
    assert as_json.status_code == 422
    extra = setup.browser.post(url, data={"file": (io.BytesIO(b"hi"), "a.txt"), "x": "1"},
                               content_type="multipart/form-data")
    assert extra.status_code == 422 and extra.json["errors"]["files"] == {"x": ["Unknown field."]}
