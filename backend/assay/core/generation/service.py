"""Generating evaluation data with an LLM: plan the batches, estimate and budget them,
start a job, run its batches through the one LLM client, preview, accept into a dataset.

A job is planned in the request (so its cost is known and a budget can refuse it before
anything is spent) and planned again, identically, in the worker, which also resolves the
credential's key: the key never leaves the worker, and is never stored with the job.
"""

from __future__ import annotations

import asyncio
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import redis
from sqlalchemy import select
from sqlalchemy.orm import Session

from assay.core import audit
from assay.core.auth.models import User
from assay.core.base import utcnow
from assay.core.datasets.models import Dataset
from assay.core.datasets.service import check_cases, create_dataset
from assay.core.errors import Conflict, DomainError, Invalid, NotFound
from assay.core.generation import parsing, prompts, spend, store
from assay.core.generation.origin import generation_origin
from assay.core.llm.models import ModelConfig
from assay.core.llm.secrets import credential_key
from assay.core.llm.service import models_by_id
from assay.core.projects.models import Project
from assay.core.scoring.question_report import GENERATION, generation_metadata
from assay.providers import tokens
from assay.providers.base import ChatRequest, Endpoint
from assay.providers.client import LLMClient
from assay.providers.pricing import cost_micros, dollars, is_priced
from assay.providers.registry import api_key_for

BATCH = {"questions": 25, "cases": 20}
OVERHEAD_TOKENS = 200  # brackets, keys and a stray sentence around the items
MAX_OUTPUT_TOKENS = 16_384
DEFAULT_CONTEXT_WINDOW = 8192  # a model without a context window: assume a small one
SAFETY_TOKENS = 256  # tokenizers of other vendors count differently
LOW_OUTPUT_SHARE = 0.5  # a batch usually writes about half of what it may
PARALLEL_BATCHES = 4
MAX_VARIABLES = 20


def _question_tokens(spec: dict[str, Any]) -> int:
    return 100


def _case_tokens(spec: dict[str, Any]) -> int:
    return 80 + 40 * len(spec["variables"])


def _conversation_tokens(spec: dict[str, Any]) -> int:
    return 160 * int(spec["turns"])


PER_ITEM: dict[str, Callable[[dict[str, Any]], int]] = {
    "questions": _question_tokens, "cases": _case_tokens,
    "conversations": _conversation_tokens}


@dataclass(frozen=True)
class Batch:
    count: int
    messages: list[dict[str, Any]]
    max_tokens: int
    input_tokens: int


@dataclass(frozen=True)
class Plan:
    batches: list[Batch]
    warnings: list[str] = field(default_factory=list)


def _document_text(session: Session, project: Project, document_id: int) -> tuple[str, str]:
    # Imported here: the documents table belongs to the datasets module.
    from assay.core.datasets.models import Document

    document = session.get(Document, document_id)
    if document is None or document.project_id != project.id:
        raise NotFound("Document not found", {"json": {"document_id": ["Document not found"]}})
    return document.name, document.text


def _cut(text: str, limit: int, model: str) -> str:
    encoding = tokens.get_encoding(tokens.encoding_name(model))
    ids = encoding.encode(text, disallowed_special=())
    return text if len(ids) <= limit else encoding.decode(ids[:limit])


def plan(kind: str, spec: dict[str, Any], model: ModelConfig,
         document: tuple[str, str] | None = None) -> Plan:
    """The batches of a job: how many items each asks for, its messages, its output cap."""
    count, per_item = int(spec["count"]), PER_ITEM[kind](spec)
    context = model.context_window or DEFAULT_CONTEXT_WINDOW
    size = (max(1, min(5, 20 // int(spec["turns"]))) if kind == "conversations"
            else BATCH[kind])
    batches_n = math.ceil(count / size)
    sizes = [size] * (count // size) + ([count % size] if count % size else [])
    warnings: list[str] = []
    doc_text = ""
    if kind == "conversations":
        assert document is not None
        name, full = document
        frame = tokens.count_messages(prompts.document_frame(spec, name, size, batches_n),
                                      model.model)
        out_cap = min(OVERHEAD_TOKENS + per_item * size, MAX_OUTPUT_TOKENS, context // 2)
        room = context - frame - out_cap - SAFETY_TOKENS
        if room < 100:
            raise Invalid("The model's context window is too small to hold the document and "
                          "the conversations", {"json": {"model_id": [
                              f"Context window {context} tokens: too small"]}})
        doc_text = _cut(full, room, model.model)
        if len(doc_text) < len(full):
            warnings.append(f"the document was cut to its first {room} tokens to fit the "
                            f"model's context window ({context} tokens"
                            + ("" if model.context_window else ", assumed: the model sets "
                               "none") + ")")
    batches = []
    for index, n in enumerate(sizes):
        if kind == "questions":
            messages = prompts.questions(spec, n, index, batches_n)
        elif kind == "cases":
            messages = prompts.cases(spec, n, index, batches_n)
        else:
            assert document is not None
            messages = prompts.conversations(spec, document[0], doc_text, n, index, batches_n)
        prompt_tokens = tokens.count_messages(messages, model.model)
        cap = min(OVERHEAD_TOKENS + per_item * n, MAX_OUTPUT_TOKENS,
                  max(context - prompt_tokens - SAFETY_TOKENS, 1))
        batches.append(Batch(n, messages, cap, prompt_tokens))
    return Plan(batches, warnings)


def estimate(job_plan: Plan, model: ModelConfig) -> dict[str, Any]:
    """The cost range of a plan: every batch writing its full output cap at the high end,
    LOW_OUTPUT_SHARE of it at the low end; null costs when the model is unpriced."""
    input_tokens = sum(b.input_tokens for b in job_plan.batches)
    high_out = sum(b.max_tokens for b in job_plan.batches)
    low_out = sum(math.ceil(b.max_tokens * LOW_OUTPUT_SHARE) for b in job_plan.batches)
    price_in, price_out = model.input_price_per_mtok_micros, model.output_price_per_mtok_micros
    return {"model_id": model.id, "calls": len(job_plan.batches), "input_tokens": input_tokens,
            "output_tokens_low": low_out, "output_tokens_high": high_out,
            "low_micros": cost_micros(input_tokens, low_out, price_in, price_out),
            "high_micros": cost_micros(input_tokens, high_out, price_in, price_out),
            "priced": is_priced(price_in, price_out), "warnings": list(job_plan.warnings)}


def _model(session: Session, project: Project, model_id: int) -> ModelConfig:
    try:
        return models_by_id(session, project, [model_id])[0]
    except Invalid as exc:
        raise Invalid(exc.message, {"json": {"model_id": exc.errors["json"]["model_ids"]}}) \
            from exc


def _document_for(session: Session, project: Project, kind: str,
                  spec: dict[str, Any]) -> tuple[str, str] | None:
    if kind != "conversations":
        return None
    return _document_text(session, project, int(spec["document_id"]))


_VARIABLE = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]{0,63})\s*\}\}")


def normalized(kind: str, spec: dict[str, Any]) -> dict[str, Any]:
    """Cases take the variables named and those of the prompt template, in order, once."""
    if kind != "cases":
        return spec
    found = _VARIABLE.findall(spec.get("prompt_template") or "")
    variables = list(dict.fromkeys([*spec.get("variables", []), *found]))
    if not variables:
        raise Invalid("Name the variables of the cases, or give a prompt template with "
                      "{{variables}}", {"json": {"variables": [
                          "No variables named and none in prompt_template"]}})
    if len(variables) > MAX_VARIABLES:
        raise Invalid("Too many variables", {"json": {"variables": [
            f"At most {MAX_VARIABLES} variables"]}})
    return {**spec, "variables": variables}


def estimate_job(session: Session, project: Project, kind: str,
                 spec: dict[str, Any]) -> dict[str, Any]:
    spec = normalized(kind, spec)
    model = _model(session, project, int(spec["model_id"]))
    document = _document_for(session, project, kind, spec)
    return estimate(plan(kind, spec, model, document), model)


def _check_budget(cost: dict[str, Any], budget: int | None) -> None:
    if budget is None:
        return
    if not cost["priced"]:
        raise Invalid("The model has no price, so its cost cannot be held to a budget",
                      {"json": {"max_cost_micros": ["The model is unpriced"]}})
    if cost["high_micros"] > budget:
        raise Invalid(f"This generation may cost up to {dollars(cost['high_micros'])}, over "
                      f"the budget of {dollars(budget)}", {"json": {"max_cost_micros": [
                          f"Estimated up to {cost['high_micros']} micro-dollars"]}},
                      code="OVER_BUDGET")


def start(session: Session, conn: redis.Redis, prefix: str, actor: User, project: Project,
          kind: str, spec: dict[str, Any]) -> dict[str, Any]:
    """Plan, estimate and budget a job, store it as queued, audit it; the caller commits
    and enqueues."""
    spec = normalized(kind, spec)
    cost = estimate_job(session, project, kind, spec)
    _check_budget(cost, spec.get("max_cost_micros"))
    spend.check(session, project.id, cost["high_micros"])  # the worker holds it
    job_id = store.new_id(conn, prefix)
    state = {
        "id": job_id, "project_id": project.id, "kind": kind, "status": store.QUEUED,
        "model_id": int(spec["model_id"]), "spec": spec, "requested": int(spec["count"]),
        "received": 0, "items": [], "warnings": list(cost["warnings"]),
        "estimate": {k: cost[k] for k in ("calls", "low_micros", "high_micros", "priced")},
        "cost_micros": 0 if cost["priced"] else None, "tokens_in": 0, "tokens_out": 0,
        "batches": cost["calls"], "batches_done": 0, "calls": 0, "error": None,
        "created_by": actor.id, "created_at": utcnow().isoformat(), "finished_at": None,
        "dataset_ids": []}
    store.save(conn, prefix, state)
    audit.record(session, actor, "generation.started", "generation", job_id, project.id,
                 {"kind": kind, "model_id": state["model_id"], "count": state["requested"],
                  "estimate_high_micros": cost["high_micros"]})
    return state


# --- accepting a preview into a dataset ---------------------------------------------------


def dataset_cases(kind: str, spec: dict[str, Any], items: list[dict[str, Any]],
                  generator: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """The cases of accepted items; each records its `generator` (question_report.py) in
    its metadata, so judged questions can be traced back to the model that wrote them."""
    out = []
    for item in items:
        generation = dict(generator or {})
        if kind == "questions":
            case = {"input": {"question": item["question"]},
                    "expected": {"answer": item["answer"]} if item.get("answer") else None,
                    "tags": list(spec.get("type_tags") or []),
                    "difficulty": spec.get("difficulty")}
        elif kind == "cases":
            case = {"input": dict(item["input"]),
                    "expected": {"output": item["expected"]} if item.get("expected")
                    else None,
                    "tags": ["synthetic", *(["edge-case"] if item.get("edge_case") else [])]}
        else:  # the user turns; the model under test answers each, graded by its truth
            turns = item["turns"]
            case = {"input": {"messages": [{"role": "user", "content": t["question"]}
                                           for t in turns]},
                    "expected": {"turns": [t["ground_truth"] for t in turns]},
                    "tags": ["grounded"]}
            generation["turns"] = turns
        if generation:
            case["metadata"] = {GENERATION: generation}
        out.append(case)
    return out


def accept(session: Session, conn: redis.Redis, prefix: str, actor: User, project: Project,
           job_id: int, name: str, selected: list[int] | None) -> tuple[Dataset, int]:
    """A dataset of the chosen items of a finished job (all of them when `selected` is
    None), in the order chosen; returns it and its case count. The caller commits."""
    state = store.get(conn, prefix, project.id, job_id)
    if state["status"] not in store.ACCEPTABLE:
        raise Conflict("The generation has not finished: nothing to accept yet",
                       code="GENERATION_NOT_FINISHED")
    items = state["items"]
    chosen = list(range(len(items))) if selected is None else selected
    problems = [f"No item {i}: the preview has {len(items)}" for i in chosen
                if not 0 <= i < len(items)]
    if len(set(chosen)) != len(chosen):
        problems.append("An item is selected twice")
    if problems:
        raise Invalid("Invalid selection", {"json": {"selected": problems}})
    if not chosen:
        raise Invalid("Select at least one item", {"json": {"selected": ["Nothing selected"]}})
    name = name.strip()
    if session.scalar(select(Dataset.id).where(Dataset.project_id == project.id,
                                               Dataset.name == name)) is not None:
        raise name_taken()
    model = session.get(ModelConfig, state["model_id"])
    generator = generation_metadata(
        state["model_id"], model.name if model and model.project_id == project.id else None,
        job_id)
    cases = dataset_cases(state["kind"], state["spec"], [items[i] for i in chosen], generator)
    if state["kind"] == "conversations":
        _record_sources(session, project, int(state["spec"]["document_id"]), cases)
    check_cases(state["kind"], cases, "selected")
    dataset = create_dataset(session, actor, project, name, state["kind"], cases,
                             origin=_origin(session, project, state, model, len(cases)))
    audit.record(session, actor, "generation.accepted", "generation", job_id, project.id,
                 {"dataset_id": dataset.id, "cases": len(cases), "of": len(items)})
    return dataset, len(cases)


def _record_sources(session: Session, project: Project, document_id: int,
                    cases: list[dict[str, Any]]) -> None:
    """Each turn's ground truth with the chunks of the document it was drawn from (those
    that rank best for it), so a RAG run's retrieval can be measured against them."""
    from assay.core.datasets.models import Document
    from assay.core.retrieval.service import source_chunks

    document = session.get(Document, document_id)
    if document is None or document.project_id != project.id:
        return
    for case in cases:
        truths = (case.get("expected") or {}).get("turns") or []
        found = [source_chunks(session, document.id, str(truth)) for truth in truths]
        if any(found):
            case["expected"] = {**case["expected"], "source_chunks": found}


def _origin(session: Session, project: Project, state: dict[str, Any],
            model: ModelConfig | None, accepted: int) -> dict[str, Any]:
    """What the dataset keeps about the job that wrote it (origin.py)."""
    from assay.core.datasets.models import Document

    mine = model if model is not None and model.project_id == project.id else None
    params = _params(mine, state["kind"], state["spec"]) if mine else {}
    document = (session.get(Document, int(state["spec"]["document_id"]))
                if state["kind"] == "conversations" else None)
    name = document.name if document is not None and document.project_id == project.id \
        else None
    return generation_origin(state, mine.name if mine else None, params, name, accepted)


def name_taken() -> Conflict:
    return Conflict("A dataset with this name already exists in the project",
                    {"json": {"dataset_name": ["Name already in use"]}}, code="NAME_TAKEN")


def record_accepted(conn: redis.Redis, prefix: str, project: Project, job_id: int,
                    dataset_id: int) -> None:
    """After the commit: the job remembers the datasets made from it."""
    state = store.get(conn, prefix, project.id, job_id)
    state["dataset_ids"] = [*state.get("dataset_ids", []), dataset_id]
    store.save(conn, prefix, state)


# --- running a job (in the worker) --------------------------------------------------------


@dataclass(frozen=True)
class Call:
    """What a worker needs to run a job's batches; the key stays in the worker."""

    endpoint: Endpoint
    model: str
    params: dict[str, Any]
    price_in: int | None
    price_out: int | None
    batches: list[Batch]
    budget: int | None


@dataclass(frozen=True)
class BatchResult:
    index: int
    text: str | None
    error: str | None
    tokens_in: int = 0
    tokens_out: int = 0
    cost_micros: int | None = None
    calls: int = 0  # requests sent for it (retries included): what the ledger counts


def _params(model: ModelConfig, kind: str, spec: dict[str, Any]) -> dict[str, Any]:
    params = dict(model.params or {})
    if kind == "cases":  # diversity 1..10 -> temperature 0.1..1.0
        params["temperature"] = round(int(spec.get("diversity", 5)) / 10, 2)
    return params


def _with_cap(params: dict[str, Any], cap: int) -> dict[str, Any]:
    name = "max_completion_tokens" if "max_completion_tokens" in params else "max_tokens"
    return {**params, name: cap}


def prepare(session: Session, secret_key: str, state: dict[str, Any]) -> Call:
    """The job planned again (as when it started) with the model's endpoint and key."""
    project = session.get(Project, state["project_id"])
    if project is None:
        raise NotFound("Project not found")
    kind, spec = state["kind"], state["spec"]
    model = _model(session, project, int(state["model_id"]))
    document = _document_for(session, project, kind, spec)
    credential = model.credential
    key = credential_key(secret_key, credential)
    endpoint = Endpoint(credential.kind, credential.base_url, api_key_for(credential.kind, key),
                        dict(credential.config or {}), credential.id)
    return Call(endpoint, model.model, _params(model, kind, spec),
                model.input_price_per_mtok_micros, model.output_price_per_mtok_micros,
                plan(kind, spec, model, document).batches, spec.get("max_cost_micros"))


async def run_batches(client: LLMClient, call: Call,
                      on_result: Callable[[BatchResult], None]) -> list[BatchResult]:
    """Every batch through the client, a few at once; a batch that would take the spend
    past the budget is skipped. `on_result` sees each result as it comes."""
    slots = asyncio.Semaphore(PARALLEL_BATCHES)
    spent = 0

    async def one(index: int, batch: Batch) -> BatchResult:
        nonlocal spent
        async with slots:
            worst = cost_micros(batch.input_tokens, batch.max_tokens, call.price_in,
                                call.price_out)
            if call.budget is not None and worst is not None and spent + worst > call.budget:
                result = BatchResult(index, None, "skipped: the budget would be exceeded")
            else:
                request = ChatRequest(call.model, batch.messages,
                                      _with_cap(call.params, batch.max_tokens))
                reply = await client.chat(call.endpoint, request)
                if reply.error is not None or reply.response is None:
                    error = reply.error
                    result = BatchResult(index, None, f"{error.error_class}: {error.message}"
                                         if error else "no reply", calls=reply.attempts)
                else:
                    response = reply.response
                    cost = cost_micros(response.tokens_in, response.tokens_out, call.price_in,
                                       call.price_out)
                    spent += cost or 0
                    result = BatchResult(index, response.text, None, response.tokens_in or 0,
                                         response.tokens_out or 0, cost, reply.attempts)
            on_result(result)
            return result

    outcomes = await asyncio.gather(*(one(i, b) for i, b in enumerate(call.batches)),
                                    return_exceptions=True)
    for outcome in outcomes:  # a batch a stop cut is left out; anything else is a failure
        if isinstance(outcome, BaseException) and not isinstance(
                outcome, asyncio.CancelledError):
            raise outcome
    return [o for o in outcomes if isinstance(o, BatchResult)]


def apply_result(state: dict[str, Any], result: BatchResult) -> None:
    state["batches_done"] += 1
    state["calls"] = state.get("calls", 0) + result.calls
    state["tokens_in"] += result.tokens_in
    state["tokens_out"] += result.tokens_out
    if state["cost_micros"] is not None and result.text is not None:
        state["cost_micros"] = None if result.cost_micros is None \
            else state["cost_micros"] + result.cost_micros


def conclude(state: dict[str, Any], counts: list[int], results: list[BatchResult],
             failure: str | None = None) -> None:
    """The job's final state: the items of every batch (`counts[i]` asked of batch i)
    combined, and what went wrong said."""
    kind, spec = state["kind"], state["spec"]
    warnings = list(state["warnings"])
    parts = []
    for result in results:
        if result.text is None:
            warnings.append(f"batch {result.index + 1} failed: {result.error}")
            continue
        parts.append(parsing.parse(kind, result.text, spec, counts[result.index]))
    combined = parsing.combine(kind, parts, state["requested"], warnings)
    state["items"], state["received"] = combined.items, combined.received
    state["warnings"] = combined.warnings
    state["finished_at"] = utcnow().isoformat()
    if failure is not None:
        state["status"], state["error"] = store.FAILED, failure
    elif results and all(r.text is None for r in results):
        state["status"] = store.FAILED
        state["error"] = f"every batch failed; the first: {results[0].error}"
    elif combined.received < state["requested"]:
        # fewer items than asked is never a success: say how many and why
        state["status"] = store.FAILED if combined.received == 0 else store.PARTIAL
        state["error"] = shortfall(kind, combined.received, state["requested"],
                                   combined.warnings)
    else:
        state["status"] = store.SUCCEEDED


def cancelled(state: dict[str, Any]) -> None:
    """The job was cancelled: what its batches done brought is kept (and can be accepted),
    the rest was never answered."""
    state["status"] = store.CANCELLED
    state["error"] = (f"Cancelled after {state['batches_done']} of {state['batches']} "
                      f"batches: {state['received']} of {state['requested']} "
                      f"{parsing.NOUNS[state['kind']]}s")


def shortfall(kind: str, received: int, requested: int, warnings: list[str]) -> str:
    """Why a job has fewer items than asked, e.g. "4 of 6 questions: 2 item(s) without a
    question dropped"."""
    why = [w for w in warnings if not parsing.counting(w)]
    return (f"{received} of {requested} {parsing.NOUNS[kind]}s: "
            + ("; ".join(why) if why else "the model's replies held fewer items than asked"))


def failure_text(exc: BaseException) -> str:
    if isinstance(exc, DomainError):
        return exc.message
    return f"internal error: {type(exc).__name__}"


def progress(state: dict[str, Any]) -> dict[str, Any]:
    return {"job_id": state["id"], "status": state["status"], "batches": state["batches"],
            "batches_done": state["batches_done"], "requested": state["requested"],
            "received": state["received"], "cost_micros": state["cost_micros"]}
