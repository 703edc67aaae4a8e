"""The judge tab of a challenge: the learner's rubric, through the verdict judge
(scorers/verdict.py), on every trace of one set, and the meta-judge's critique of the
rubric (scorers/metajudge.py) on every judge run. Calls go through LLMClient on a judge
model of a project where the learner is an editor (or below, within the arena allowance an
admin set); the project pays, reserved before the calls against its cap and settled to the
actual cost after (DESIGN §4 "Budget", through experiments/spend.py).

The allowance is what every judge attempt paid by the project may cost in all. Its check
and the hold happen in one transaction with the project row locked: the attempt's row is
written there, holding the run's bound as its cost, so a run that checks next counts it;
settling swaps the bound for the actual cost, kept on the row even when the run fails."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from assay.core import ledger
from assay.core.base import utcnow
from assay.core.challenges.grading import Verdict
from assay.core.challenges.models import FAILED, HELD, SETTLED, Attempt
from assay.core.errors import DomainError, Forbidden, Invalid
from assay.core.experiments import spend
from assay.core.projects.models import Project
from assay.core.runs.budget import max_call_cost
from assay.core.runs.judge_budget import max_judge_cost
from assay.core.runs.locks import lock_project
from assay.core.scoring.judge_calls import JudgeModel, ModelJudge, judge_models
from assay.providers.client import LLMClient, RetryPolicy
from assay.providers.ssrf import UrlPolicy
from assay.scorers.base import Context, ParamsError, ScoreResult, Subject
from assay.scorers.judge_guard import new_nonce
from assay.scorers.metajudge import critique_messages, critique_rubric
from assay.scorers.verdict import VerdictJudge

CALL_TIMEOUT_S = 60.0
DEADLINE_S = 120.0  # the whole run: someone is waiting for it
STALE_S = 15 * 60  # a hold this old belongs to a request that died before settling
NO_ALLOWANCE = ("A judge run paid by this project needs the editor role, or an arena "
                "allowance set by one of its admins")
SEVERITY_WORDS = {"warning": "low", "error": "high", "critical": "critical"}


class JudgeRunFailed(DomainError):
    status, code = 502, "JUDGE_FAILED"


@dataclass
class JudgeOutcome:
    verdicts: list[Verdict]
    critique: dict[str, Any]
    cost_micros: int
    attempt_id: int  # the attempt's row, settled, to grade


@dataclass(frozen=True)
class Hold:
    project_id: int
    attempt_id: int
    micros: int


def build_judge(rubric: str, judge: str, context: Mapping[str, Any]) -> VerdictJudge:
    try:
        return VerdictJudge({"rubric": rubric, "judges": [judge],
                             "agent_context": dict(context)})
    except ParamsError as error:
        raise Invalid("The rubric cannot be used", {"json": {"text": [
            f"{k}: {'; '.join(v) if isinstance(v, list) else v}"
            for k, v in error.errors.items()]}}) from None


def _verdict(result: ScoreResult) -> Verdict:
    evidence = tuple({"message_index": e.message_index, "start": e.start, "end": e.end,
                      "label": e.label, "detail": e.text, "level": "bad"}
                     for e in result.evidence)
    severity = result.details.get("severity") or SEVERITY_WORDS.get(result.severity or "")
    if result.passed:
        return Verdict(True, None, str(result.details.get("cluster") or "ok"), evidence,
                       result.rationale)
    if result.error is not None:  # §10: an invalid verdict is a fail of high severity
        return Verdict(False, severity or "high", "invalid judge reply", evidence,
                       result.rationale, error=result.error)
    return Verdict(False, severity or "high", str(result.details.get("cluster") or "fail"),
                   evidence, result.rationale)


def _bound(verdict: VerdictJudge, models: Mapping[str, JudgeModel], judge: str,
           subjects: Sequence[Subject], rubric: str, contract: Sequence[str]) -> int:
    total = sum(max_judge_cost([(verdict.messages, verdict.judges)], models, s, 0)
                for s in subjects)
    model = models[judge]
    return total + max_call_cost(critique_messages(rubric, contract, new_nonce()), model.model,
                                 dict(model.params), model.price_in, model.price_out)


def _allowance_left(session: Session, project_id: int) -> int:
    """What the arena allowance has left, read under the project's lock: every judge
    attempt paid by the project counts, those in flight at their hold."""
    settings = session.scalar(select(Project.settings).where(Project.id == project_id)) or {}
    allowance = settings.get("arena_allowance_micros")
    if allowance is None:
        raise Forbidden(NO_ALLOWANCE)
    used = session.scalar(select(func.coalesce(func.sum(Attempt.cost_micros), 0)).where(
        Attempt.project_id == project_id, Attempt.tab == "judge")) or 0
    return max(int(allowance) - int(used), 0)


def _release_stale(session: Session, project_id: int) -> None:
    """Holds of runs whose request died before settling: given back to the project; their
    attempts fail, still counting their bound against the allowance (what they spent is
    unknown). Under the project's lock."""
    stale = session.execute(select(Attempt.id, Attempt.cost_micros).where(
        Attempt.project_id == project_id, Attempt.summary["state"].as_string() == HELD,
        Attempt.created_at < utcnow() - timedelta(seconds=STALE_S))).all()
    for attempt_id, micros in stale:
        spend.release(session, spend.Hold(project_id, None, micros))
        session.execute(update(Attempt).where(Attempt.id == attempt_id).values(
            summary={"state": FAILED}))


def _reserve(session: Session, pending: Attempt, bound: int, limited: bool) -> Hold:
    """Check the allowance (when `limited`) and the project's budget, and hold `bound`
    with the pending attempt, in one transaction under the project's lock."""
    project_id = pending.project_id
    assert project_id is not None
    try:
        lock_project(session, project_id)
        _release_stale(session, project_id)
        if limited:
            left = _allowance_left(session, project_id)
            if bound > left:
                raise Invalid("This judge run could cost more than the arena allowance has "
                              "left", {"json": {"project_id": [
                                  f"At most {bound} micro-dollars needed, {left} left"]}},
                              code="ARENA_ALLOWANCE_EXCEEDED")
        spend.reserve(session, project_id, None, bound, "this judge run")
    except spend.BudgetExceeded:
        session.rollback()
        raise Invalid("This judge run could take the project past its budget",
                      {"json": {"project_id": ["Not enough of the project budget is left "
                                               "for a judge run over this set"]}},
                      code="BUDGET_EXCEEDED") from None
    except BaseException:
        session.rollback()  # on SQLite the lock is an open write transaction
        raise
    pending.cost_micros, pending.summary = bound, {"state": HELD}
    session.add(pending)
    session.commit()
    return Hold(project_id, pending.id, bound)


def _settle(session: Session, hold: Hold, counter: ledger.Metered | None,
            failed: bool) -> None:
    """The hold swapped for what the calls cost, on the project and on the attempt."""
    tab = counter.tab if counter else ledger.Tab()
    spent = tab.spent_micros
    spend.settle(session, spend.Hold(hold.project_id, None, hold.micros), "arena", tab)
    session.execute(update(Attempt).where(Attempt.id == hold.attempt_id).values(
        cost_micros=spent, summary={"state": FAILED if failed else SETTLED}))
    session.commit()


def project_judge(session: Session, project_id: int, judge: str,
                  secret_key: str) -> JudgeModel:
    """`judge` (a model config's id or name) of the project, for the dev set."""
    model = judge_models(session, project_id, [judge], secret_key).get(judge)
    if model is None:
        raise Invalid("Unknown judge", {"json": {"judge": [
            f"No model {judge!r} in this project (give a model config's id or name)"]}})
    return model


def run_judge(session: Session, pending: Attempt, limited: bool, model: JudgeModel,
              rubric: str, context: Mapping[str, Any],
              traces: Sequence[Sequence[Mapping[str, Any]]],
              url_policy: UrlPolicy) -> JudgeOutcome:
    """Judge `traces` with `model` and critique the rubric, paid by `pending.project_id`
    (within its arena allowance when `limited`). `pending` (not yet added) becomes the
    attempt's row; the caller grades it (outcome.attempt_id) once this returns."""
    project_id = pending.project_id
    assert project_id is not None
    judge = model.name
    verdict = build_judge(rubric, judge, context)
    models = {judge: model}
    if model.key_error is not None:
        raise Invalid("The judge cannot be called", {"json": {"judge": [model.key_error]}})
    contract = list(context.get("contract") or [])
    subjects = [Subject(output=None, messages=[dict(m) for m in t]) for t in traces]
    bound = _bound(verdict, models, judge, subjects, rubric, contract)
    hold = _reserve(session, pending, bound, limited)
    session.close()  # hold no connection while the models think
    counter: ledger.Metered | None = None

    async def ask() -> tuple[list[list[ScoreResult]], Any]:
        nonlocal counter
        async with LLMClient(timeout_s=CALL_TIMEOUT_S, retry=RetryPolicy(attempts=2),
                             max_connections=16, url_policy=url_policy) as client:
            counter = ledger.Metered(ModelJudge(client, models))
            ctx = Context(judge=counter)
            scored = asyncio.gather(*(verdict.score(s, ctx) for s in subjects))
            critiqued = critique_rubric(rubric, contract, counter, judge)
            return await asyncio.wait_for(asyncio.gather(scored, critiqued), DEADLINE_S)

    try:
        results, critique = asyncio.run(ask())
    except TimeoutError as exc:
        _settle(session, hold, counter, failed=True)
        raise JudgeRunFailed(f"The judge {model.name!r} did not answer within "
                             f"{DEADLINE_S:g} s; try again, or choose a faster judge model",
                             code="JUDGE_TIMEOUT") from exc
    except BaseException:
        _settle(session, hold, counter, failed=True)
        raise
    verdicts = [_verdict(r[0]) for r in results]
    failed = all(v.error is not None and not r[0].details.get("severity")
                 for v, r in zip(verdicts, results, strict=True))
    _settle(session, hold, counter, failed)
    if failed:
        # its errors are not quoted: they may echo a hidden trace
        raise JudgeRunFailed(f"The judge {model.name!r} failed on every trace; check that "
                             "the model answers, then run again")
    found = asdict(critique)
    found.pop("details", None)
    found["judge"] = found.pop("judge_model")
    spent = counter.tab.spent_micros if counter else 0
    return JudgeOutcome(verdicts, found, spent, hold.attempt_id)
