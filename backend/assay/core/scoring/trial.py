"""Trying a scorer before saving it: the judge prompt it would send for a sample, and one
real scoring of one output (a run's, or pasted text). A trial records no score, but every
judge call it makes is charged to the project's spend, like any other judge call."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from assay.core import audit, ledger
from assay.core.auth.models import User
from assay.core.datasets.models import Case
from assay.core.errors import Invalid, NotFound
from assay.core.experiments import spend
from assay.core.projects.models import Project
from assay.core.runs.judge_budget import max_judge_cost
from assay.core.runs.models import Output, Run
from assay.core.scoring.apply import PAIR_KINDS
from assay.core.scoring.backfill import SUBJECT_COLUMNS, subject_of
from assay.core.scoring.judge_calls import JudgeModel, ModelJudge, judge_models
from assay.core.scoring.service import check_params
from assay.providers.client import LLMClient, RetryPolicy
from assay.providers.ssrf import UrlPolicy
from assay.scorers.base import Context, ScoreResult, Subject
from assay.scorers.judge_guard import new_nonce

TRIAL_TIMEOUT_S = 60.0  # one judge call; the whole trial has its deadline (try_scorer)
NO_JUDGE = "This kind calls no judge model, so it has no judge prompt to show"


def out_of_time(deadline_s: float) -> str:
    return (f"The trial took longer than {deadline_s:g} s and was stopped; a judge that "
            "answers slowly or many long tests may need a run instead")


def sample_subject(sample: Mapping[str, Any]) -> Subject:
    """A subject from pasted text: the output, and optionally the case's input, a
    reference answer and grounding context."""
    return Subject(output=sample["output"], input=dict(sample.get("input") or {}),
                   reference=sample.get("reference"), context=sample.get("context"),
                   messages=None)


def output_subject(session: Session, project: Project, output_id: int) -> Subject:
    """What the run's scorers saw of one recorded output of the project."""
    row = session.execute(
        select(*SUBJECT_COLUMNS)
        .join(Run, Run.id == Output.run_id).join(Case, Case.id == Output.case_id)
        .where(Output.id == output_id, Run.project_id == project.id)).first()
    if row is None:
        raise NotFound("Output not found in this project")
    if row.text is None:
        raise Invalid("That output has no text to score (its call failed)",
                      {"json": {"output_id": ["The call of this output failed"]}})
    return subject_of(row)


def preview(kind: str, params: Mapping[str, Any], subject: Subject,
            second: Subject | None = None) -> dict[str, Any]:
    """The messages each judge call of this scorer would send for `subject` (pairwise:
    `subject` as Response 1 and `second` as Response 2), built by the scorer itself."""
    scorer: Any = check_params(kind, params)
    if not hasattr(scorer, "messages"):
        raise Invalid(NO_JUDGE, {"json": {"kind": [NO_JUDGE]}})
    nonce = new_nonce()  # each real call gets a fresh one; the preview shows one
    if kind in PAIR_KINDS:
        messages = scorer.messages(subject, second or subject, nonce)
    else:
        messages = scorer.messages(subject, nonce)
    return {"judges": list(scorer.judges), "messages": messages}


def _result_view(result: ScoreResult) -> dict[str, Any]:
    return {"value": result.value, "passed": result.passed,
            "criteria": dict(result.criteria), "rationale": result.rationale,
            "severity": result.severity, "flags": list(result.flags), "error": result.error,
            "judge_model": result.judge_model,
            "evidence": [asdict(e) for e in result.evidence]}


def _hold(session: Session, project: Project, scorer: Any,
          models: Mapping[str, JudgeModel], subject: Subject) -> spend.Hold:
    """Hold the most these judge calls can cost (their verdicts bounded by each judge's
    max_tokens) against the project's cap, and commit; refused when it cannot cover it."""
    build = getattr(scorer, "messages", None)
    bound = (max_judge_cost([(build, scorer.judges)], models, subject, 0)
             if callable(build) and scorer.kind not in PAIR_KINDS else 0)
    used = project.spent_micros + project.reserved_micros
    try:
        if project.budget_micros is not None and used >= project.budget_micros:
            raise spend.BudgetExceeded("nothing left")  # even a free-looking call
        hold = spend.reserve(session, project.id, None, bound, "trying these judges")
    except spend.BudgetExceeded:
        session.rollback()  # on SQLite the lock is an open write transaction
        raise Invalid("Trying these judges could take the project past its budget",
                      {"json": {"budget": ["Not enough of the project budget is left"]}},
                      code="BUDGET_EXCEEDED") from None
    session.commit()
    return hold


def try_scorer(session: Session, actor: User, project: Project, kind: str,
               params: Mapping[str, Any], subject: Subject, secret_key: str,
               url_policy: UrlPolicy, output_id: int | None = None,
               deadline_s: float = 90.0) -> dict[str, Any]:
    """Score `subject` once through the real LLM client; record no score, charge the
    judges' cost to the project and audit it. Pairwise kinds compare two outputs and
    cannot be tried on one. A person waits for it: past `deadline_s` its judge calls are
    closed and its tests stop, and it answers with what it has (charging the replies that
    came back)."""
    if kind in PAIR_KINDS:
        raise Invalid("A pairwise judge compares two outputs; try it from a run",
                      {"json": {"kind": ["Pairwise judges cannot be tried on one output"]}})
    scorer = check_params(kind, params)
    settings = project.settings or {}
    if kind == "code_execution" and not settings.get("code_execution"):
        raise Invalid("This project does not allow code execution",
                      {"json": {"kind": ["Code execution is off for this project"]}})
    models = judge_models(session, project.id, scorer.judges, secret_key)
    hold = _hold(session, project, scorer, models, subject) if scorer.judges else None
    meter: ledger.Metered | None = None

    async def go() -> list[ScoreResult]:
        nonlocal meter
        async with LLMClient(timeout_s=min(TRIAL_TIMEOUT_S, deadline_s),
                             retry=RetryPolicy(attempts=1), max_connections=4,
                             url_policy=url_policy) as client:
            meter = ledger.Metered(ModelJudge(client, models))
            ctx = Context(judge=meter, code_execution=bool(settings.get("code_execution")),
                          deadline=time.monotonic() + deadline_s)
            try:
                return await asyncio.wait_for(scorer.score(subject, ctx), deadline_s)
            except TimeoutError:
                return [ScoreResult.failed(out_of_time(deadline_s))]

    # The hold is committed, and ending the read transaction gives its connection back to
    # the pool while the judges work (a minute of model calls held one per trial).
    session.commit()
    try:
        results = asyncio.run(go())
    finally:  # what was sent is the project's spend, on the ledger by judge model
        tab = meter.tab if meter is not None else ledger.Tab()
        if hold is not None:
            spend.settle(session, hold, "trial", tab)
            session.commit()
    audit.record(session, actor, "scorer.tried", "project", project.id, project.id,
                 {"kind": kind, "output_id": output_id, "judge_calls": tab.calls,
                  "cost_micros": tab.spent_micros})
    return {"results": [_result_view(r) for r in results], "cost_micros": tab.spent_micros,
            "judge_calls": tab.calls}
