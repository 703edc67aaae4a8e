"""What the user sets in the New run form is what runs (issue 31 item 6): every field of
the run-create body is sent through the HTTP API, a real RQ worker runs the run on the fake
provider, and each field is proved by what the engine then did: the requests the provider
received (model, parameters, prompt, stream, how many, how many at once), the cells and
scores stored, the shard jobs enqueued, what the budget refused; a field only shown (the
name) says so with its reason.

A field of RunCreateSchema without a row here fails the coverage test: no field is stored
and ignored unnoticed."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from marshmallow import Schema, fields
from rq import Queue
from rq.job import Job
from rq.registry import FinishedJobRegistry
from sqlalchemy import select

from assay.api.runs.schemas import RunCreateSchema
from assay.core.datasets.service import latest_version
from assay.core.llm.models import Credential, ModelConfig
from assay.core.prompts.models import PromptVersion
from assay.core.runs.models import Output, Run, RunTarget
from assay.core.scoring.models import Score, ScorerVersion
from assay.extensions import db
from assay.providers.fake import FakeProviderThread
from assay.runtime import current
from assay.settings import Settings
from tests.api.test_rag_runs import HANDBOOK, QUESTIONS, upload
from tests.engine.test_providers_engine import Setup, configure, fake, setup
from tests.factories import Factory, Session

__all__ = ["fake"]  # the fixture, imported for these tests

TERMINAL = {"completed", "partial", "failed", "cancelled", "budget_exceeded"}
PARAMS: dict[str, Any] = {
    "temperature": 0.35, "max_tokens": 321, "top_p": 0.9, "frequency_penalty": 0.3,
    "presence_penalty": 0.4, "seed": 99, "stop": ["ZZ-STOP"]}
GRID: dict[str, list[Any]] = {"temperature": [0.5, 0.7], "max_tokens": [222], "top_p": [0.8],
        "frequency_penalty": [0.2], "presence_penalty": [0.1], "seed": [7],
        "stop": [["QQ-STOP"]]}
PROMPT = "PIRATE-MARKER: answer like a pirate. {{question}}"
V1_QUESTIONS = 2  # the dataset's version 1; version 2 adds one more case


@dataclass
class Lab:
    s: Setup
    browser: Session
    fake_url: str

    @property
    def project_id(self) -> int:
        return self.s.project.id

    def url(self, tail: str) -> str:
        return f"/api/projects/{self.project_id}{tail}"

    def post(self, tail: str, body: dict[str, Any], status: int = 201) -> dict[str, Any]:
        reply = self.browser.post(self.url(tail), json=body)
        assert reply.status_code == status, reply.json
        return dict(reply.json or {})

    def run(self, **body: Any) -> Walk:
        """Create the run through the API, wait for the worker to end it."""
        httpx.post(f"{self.fake_url}/_fake/reset").raise_for_status()
        body = {"dataset_id": self.s.dataset_id,
                "targets": [{"model_id": self.s.model_ids[0]}], **body}
        created = self.post("/runs", body, 202)
        run_id = created["id"]
        deadline = time.monotonic() + 90
        while (found := _run(run_id)).status not in TERMINAL:
            assert time.monotonic() < deadline, f"run still {found.status}"
            time.sleep(0.1)
        received = httpx.get(f"{self.fake_url}/_fake/requests").json()["requests"]
        with db.factory() as session:
            outputs = list(session.scalars(select(Output).where(Output.run_id == run_id)))
            targets = list(session.scalars(select(RunTarget).where(
                RunTarget.run_id == run_id).order_by(RunTarget.position)))
            scores = list(session.scalars(select(Score).where(Score.run_id == run_id)))
            session.expunge_all()
        seen = httpx.get(f"{self.fake_url}/_fake/stats").json()
        return Walk(self, body, found, outputs, targets, scores, received, seen)


@dataclass
class Walk:
    lab: Lab
    body: dict[str, Any]
    run: Run
    outputs: list[Output]
    targets: list[RunTarget]
    scores: list[Score]
    requests: list[dict[str, Any]]
    stats: dict[str, Any]
    ids: dict[str, int] | None = None
    # run ids repeat across tests on a fresh database while Redis keeps finished jobs
    jobs_before: frozenset[str] = frozenset()

    def of_target(self, position: int) -> list[dict[str, Any]]:
        """The requests of one target, told apart by its parameters."""
        params = self.targets[position].params
        return [r for r in self.requests
                if all(r.get(k) == v for k, v in params.items() if k != "max_tokens")]


def _run(run_id: int) -> Run:
    with db.factory() as session:
        found = session.get(Run, run_id)
        assert found is not None
        session.expunge(found)
        return found


def _text(request: dict[str, Any]) -> str:
    return json.dumps(request.get("messages") or [])


def _max_tokens(request: dict[str, Any]) -> Any:
    return request.get("max_tokens") or request.get("max_completion_tokens")


def make_lab(factory: Factory, settings: Settings, fake: FakeProviderThread,
             cases: int = V1_QUESTIONS, price: int = 150_000) -> Lab:
    owner = factory.user()
    s = setup(factory, settings, fake, cases=cases, owner=owner)
    with db.factory() as session:
        model = session.get(ModelConfig, s.model_ids[0])
        assert model is not None
        model.input_price_per_mtok_micros = model.output_price_per_mtok_micros = price
        session.commit()
    return Lab(s, factory.login(owner), fake.url)


# --- the walk: one run with every field it can hold set away from its default ----------------


@pytest.fixture
def walked(factory: Factory, settings: Settings, fake: FakeProviderThread,
           worker: subprocess.Popen[bytes]) -> Walk:
    configure(fake, latency_ms=20)
    lab = make_lab(factory, settings, fake)
    with db.factory() as session:
        v1 = latest_version(session, lab.s.dataset_id).id
    lab.post(f"/datasets/{lab.s.dataset_id}/cases",
             {"input": {"question": "a version 2 question only"}})
    prompt = lab.post("/prompts", {"name": "Pirate", "template": PROMPT})
    pinned = lab.post("/scorers", {"name": "Pinned", "kind": "icontains",
                                   "params": {"value": "question"}})
    lab.post(f"/scorers/{pinned['id']}/versions", {"params": {"value": "never-in-a-reply"}})
    latest = lab.post("/scorers", {"name": "Latest", "kind": "icontains",
                                   "params": {"value": "nothing-here"}})
    lab.post(f"/scorers/{latest['id']}/versions", {"params": {"value": "question"}})
    with db.factory() as session:
        pinned_v1 = session.scalar(select(ScorerVersion.id).where(
            ScorerVersion.scorer_id == pinned["id"], ScorerVersion.number == 1))
        latest_v2 = session.scalar(select(ScorerVersion.id).where(
            ScorerVersion.scorer_id == latest["id"], ScorerVersion.number == 2))
    assert pinned_v1 and latest_v2
    with db.factory() as session:
        prompt_version = session.scalar(select(PromptVersion.id).where(
            PromptVersion.prompt_id == prompt["id"]))
    model = lab.s.model_ids[0]
    before = frozenset(_finished_job_ids())
    w = lab.run(name="Every field", dataset_version_id=v1, targets=[
        {"model_id": model, "params": PARAMS, "prompt_version_id": prompt_version},
        {"model_id": model, "grid": GRID}],
        repeats=2, cache=False, stream=True, shards=3, budget_micros=10**9,
        scorer_ids=[latest["id"]], scorer_version_ids=[pinned_v1])
    w.ids = {"v1": v1, "pinned_v1": pinned_v1, "latest_v2": latest_v2,
             "pinned": pinned["id"], "latest": latest["id"]}
    w.jobs_before = before
    return w


def _finished_job_ids() -> list[str]:
    rt = current()
    queue = Queue(rt.settings.runs_queue, connection=rt.redis)
    return [str(i) for i in FinishedJobRegistry(queue=queue).get_job_ids()]


def _dataset(w: Walk) -> None:
    asked = {q for r in w.requests for q in [f"question number {i} about things"
                                             for i in range(V1_QUESTIONS)] if q in _text(r)}
    assert asked == {f"question number {i} about things" for i in range(V1_QUESTIONS)}


def _dataset_version(w: Walk) -> None:
    assert w.run.dataset_version_id == (w.ids or {})["v1"]
    assert not any("a version 2 question only" in _text(r) for r in w.requests)


def _model(w: Walk) -> None:
    assert w.requests and {r["model"] for r in w.requests} == {"fake-fast"}
    with db.factory() as session:
        assert session.scalar(select(Credential.id).where(
            Credential.project_id == w.lab.project_id)) is not None


def _params(name: str) -> Callable[[Walk], None]:
    def probe(w: Walk) -> None:
        sent = [r for r in w.requests if "PIRATE-MARKER" in _text(r)]
        assert len(sent) == V1_QUESTIONS * 2
        for r in sent:
            got = _max_tokens(r) if name == "max_tokens" else r.get(name)
            assert got == PARAMS[name], (name, got)
    return probe


def _prompt_version(w: Walk) -> None:
    first = [r for r in w.requests if r.get("temperature") == PARAMS["temperature"]]
    assert first and all("PIRATE-MARKER" in _text(r) for r in first)
    grid = [r for r in w.requests if r.get("temperature") in GRID["temperature"]]
    assert grid and not any("PIRATE-MARKER" in _text(r) for r in grid)


def _grid(name: str) -> Callable[[Walk], None]:
    def probe(w: Walk) -> None:
        grid = [r for r in w.requests if "PIRATE-MARKER" not in _text(r)]
        # two targets from the grid (temperature's two values), each case twice
        assert len(grid) == 2 * V1_QUESTIONS * 2 and len(w.targets) == 3
        seen = sorted({json.dumps(_max_tokens(r) if name == "max_tokens" else r.get(name))
                       for r in grid})
        assert seen == sorted(json.dumps(v) for v in GRID[name]), (name, seen)
    return probe


def _repeats(w: Walk) -> None:
    assert sorted({o.repeat for o in w.outputs}) == [0, 1]
    assert len(w.requests) == 3 * V1_QUESTIONS * 2 == len(w.outputs)


def _cache_off(w: Walk) -> None:
    # the first target is deterministic (a seed): with the cache its repeat would be free
    assert not any(o.cached for o in w.outputs) and len(w.requests) == len(w.outputs)


def _stream(w: Walk) -> None:
    assert w.requests and all(r.get("stream") is True for r in w.requests)
    assert all(o.ttft_ms is not None for o in w.outputs)


def _shards(w: Walk) -> None:
    """Three shard runners were enqueued (the server's default is two); each finds the
    run ended or claims batches, and finishes."""
    rt = current()

    def mine() -> int:
        jobs = [Job.fetch(i, connection=rt.redis)
                for i in _finished_job_ids() if i not in w.jobs_before]
        return sum(1 for j in jobs if j.func_name == "assay.jobs.runs.execute_run"
                   and j.args == (w.run.id,))

    deadline = time.monotonic() + 20
    while mine() < 3 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert rt.settings.run_shards != 3 and mine() == 3


def _scorer_ids(w: Walk) -> None:
    ids = w.ids or {}
    latest = [s for s in w.scores if s.scorer_version_id == ids["latest_v2"]]
    assert len(latest) == len(w.outputs)
    with db.factory() as session:
        assert {s.scorer_version_id for s in w.scores} == {ids["latest_v2"], ids["pinned_v1"]}
        assert session.scalar(select(ScorerVersion.number).where(
            ScorerVersion.id == ids["latest_v2"])) == 2


def _scorer_version_ids(w: Walk) -> None:
    pinned = [s for s in w.scores if s.scorer_version_id == (w.ids or {})["pinned_v1"]]
    assert len(pinned) == len(w.outputs)
    # version 1 looks for "question" (the fake echoes it); version 2 for a word never said
    texts = {o.id: (o.text or "").lower() for o in w.outputs}
    assert all(s.passed == ("question" in texts[s.output_id]) for s in pinned)


def _budget_stored(w: Walk) -> None:
    assert w.run.budget_micros == 10**9 and w.run.status == "completed"


WALK_ROWS: dict[str, Callable[[Walk], None]] = {
    "dataset_id": _dataset,
    "dataset_version_id": _dataset_version,
    "targets.model_id": _model,
    **{f"targets.params.{k}": _params(k) for k in PARAMS},
    "targets.prompt_version_id": _prompt_version,
    **{f"targets.grid.{k}": _grid(k) for k in GRID},
    "repeats": _repeats,
    "cache": _cache_off,
    "stream": _stream,
    "shards": _shards,
    "scorer_ids": _scorer_ids,
    "scorer_version_ids": _scorer_version_ids,
}


def test_each_field_of_the_walk_changes_what_the_engine_does(walked: Walk) -> None:
    """One run, every row checked on it; the failures name their fields."""
    failures: dict[str, str] = {}
    for path, probe in WALK_ROWS.items():
        try:
            probe(walked)
        except (AssertionError, KeyError) as error:
            failures[path] = f"{type(error).__name__}: {error}"
    assert not failures, json.dumps(failures, indent=1)


# --- fields that need a run of their own (and a control at another value) --------------------


@pytest.fixture
def lab(factory: Factory, settings: Settings, fake: FakeProviderThread,
        worker: subprocess.Popen[bytes]) -> Lab:
    return make_lab(factory, settings, fake, cases=4, price=10_000_000)


def test_cache_true_serves_a_rerun_from_the_cache(lab: Lab, fake: FakeProviderThread) -> None:
    configure(fake, latency_ms=5)
    first = lab.run(cache=True)
    assert len(first.requests) == 4 and not any(o.cached for o in first.outputs)
    again = lab.run(cache=True)
    assert again.requests == [] and all(o.cached for o in again.outputs)
    off = lab.run(cache=False)
    assert len(off.requests) == 4 and not any(o.cached for o in off.outputs)


def test_concurrency_caps_the_calls_in_flight(lab: Lab, fake: FakeProviderThread) -> None:
    configure(fake, latency_ms=300)
    one = lab.run(concurrency=1, cache=False, repeats=2)
    assert one.stats["peak_concurrency"] == 1
    four = lab.run(concurrency=4, cache=False, repeats=2)
    assert four.stats["peak_concurrency"] > 1


def test_timeout_s_fails_a_call_slower_than_it(lab: Lab, fake: FakeProviderThread) -> None:
    configure(fake, latency_ms=2500)
    slow = lab.run(timeout_s=1, max_retries=0, cache=False, concurrency=4)
    assert {(o.status, o.error_class) for o in slow.outputs} == {("failed", "timeout")}
    patient = lab.run(timeout_s=10, max_retries=0, cache=False, concurrency=4)
    assert {o.status for o in patient.outputs} == {"succeeded"}


def test_max_retries_is_the_attempts_made(lab: Lab, fake: FakeProviderThread) -> None:
    configure(fake, fault_rate=1.0, faults=["500"], latency_ms=1)
    none = lab.run(max_retries=0, cache=False)
    assert len(none.requests) == 4 and {o.attempts for o in none.outputs} == {1}
    one = lab.run(max_retries=1, cache=False)
    assert len(one.requests) == 8 and {o.attempts for o in one.outputs} == {2}


def test_max_history_pairs_bounds_the_exchanges_sent(lab: Lab, fake: FakeProviderThread) -> None:
    configure(fake, latency_ms=1)
    talk = lab.post("/datasets", {"name": "Talk", "kind": "conversations", "cases": [
        {"input": {"messages": [
            {"role": "user", "content": "FIRST-TURN hello"},
            {"role": "assistant", "content": "Hi."},
            {"role": "user", "content": "SECOND-TURN my order"},
            {"role": "assistant", "content": "Which one?"},
            {"role": "user", "content": "THIRD-TURN number 42"}]},
         "expected": {"turns": ["Hello.", "Order 42.", "It ships today."]}}]})

    def last(pairs: int) -> dict[str, Any]:
        w = lab.run(dataset_id=talk["id"], max_history_pairs=pairs, cache=False)
        return next(r for r in w.requests if "THIRD-TURN" in _text(r))

    short = last(1)
    assert "SECOND-TURN" in _text(short) and "FIRST-TURN" not in _text(short)
    assert "FIRST-TURN" in _text(last(2))


def test_budget_micros_stops_the_run_and_alert_threshold_raises_the_alert(
        lab: Lab, fake: FakeProviderThread) -> None:
    configure(fake, latency_ms=1)
    capped = lab.run(budget_micros=500, cache=False, concurrency=1)
    assert capped.run.status == "budget_exceeded"
    assert len(capped.requests) < 4 and capped.run.spent_micros <= 500
    alerted = lab.run(budget_micros=10_000, alert_threshold=0.05, cache=False)
    assert alerted.run.status == "completed" and alerted.run.spent_micros > 500
    assert alerted.run.alerted_at is not None
    quiet = lab.run(budget_micros=10_000, alert_threshold=1.0, cache=False)
    assert quiet.run.spent_micros == alerted.run.spent_micros and quiet.run.alerted_at is None


def test_rag_retrieves_top_k_chunks_into_the_template(lab: Lab, fake: FakeProviderThread) -> None:
    configure(fake, latency_ms=1)
    doc = upload(lab.browser, lab.project_id, "handbook.md", HANDBOOK.encode(),
                 chunk_size="20", chunk_overlap="0")
    assert doc.status_code == 201, doc.json
    template = "CTX-MARK\n{{context}}\nQUESTION-MARK {{question}}"
    asked = lab.post("/datasets", {"name": "Handbook questions", "kind": "questions",
                                   "cases": [{"input": {"question": q}} for q in QUESTIONS]})

    def rag(top_k: int) -> Walk:
        return lab.run(dataset_id=asked["id"], cache=False, rag={
            "document_ids": [doc.json["id"]], "top_k": top_k, "template": template})

    two = rag(2)
    assert two.requests and all("CTX-MARK" in _text(r) and "QUESTION-MARK" in _text(r)
                                for r in two.requests)
    # a question matching fewer chunks gets fewer: top_k is the most a prompt holds
    assert max(len(o.retrieved or []) for o in two.outputs) == 2
    assert all({c["document_id"] for c in o.retrieved or []} == {doc.json["id"]}
               for o in two.outputs)
    assert {len(o.retrieved or []) for o in rag(1).outputs} == {1}
    without = lab.run(dataset_id=asked["id"], cache=False)
    assert not any("CTX-MARK" in _text(r) for r in without.requests)


OWN_TESTS: dict[str, str] = {
    "cache": "test_cache_true_serves_a_rerun_from_the_cache",
    "concurrency": "test_concurrency_caps_the_calls_in_flight",
    "timeout_s": "test_timeout_s_fails_a_call_slower_than_it",
    "max_retries": "test_max_retries_is_the_attempts_made",
    "max_history_pairs": "test_max_history_pairs_bounds_the_exchanges_sent",
    "budget_micros": "test_budget_micros_stops_the_run_and_alert_threshold_raises_the_alert",
    "alert_threshold": "test_budget_micros_stops_the_run_and_alert_threshold_raises_the_alert",
    "rag.document_ids": "test_rag_retrieves_top_k_chunks_into_the_template",
    "rag.top_k": "test_rag_retrieves_top_k_chunks_into_the_template",
    "rag.template": "test_rag_retrieves_top_k_chunks_into_the_template",
}
SHOWN_ONLY: dict[str, str] = {
    "name": "the run's title in lists and reports; no call depends on it",
}


# --- coverage: every field of the form's schema has a row -----------------------------------


def leaves(schema: Schema, prefix: str = "") -> set[str]:
    out: set[str] = set()
    for name, f in schema.fields.items():
        inner = f.inner if isinstance(f, fields.List) else f
        if isinstance(inner, fields.Nested):
            out |= leaves(inner.schema, f"{prefix}{name}.")
        else:
            out.add(f"{prefix}{name}")
    return out


def test_every_run_field_has_a_row() -> None:
    assert all(name in globals() for name in OWN_TESTS.values())
    covered = set(WALK_ROWS) | set(OWN_TESTS) | set(SHOWN_ONLY)
    assert leaves(RunCreateSchema()) == covered
