"""The meta-judge on demand (evalarena §10 "Judge the judge"): one model of the project
critiques a rubric against an agent's contract while someone waits for the answer.

Problems the user can fix are a 422 naming the field (an empty rubric, a judge that is no
model of the project or has no API key); a judge that fails, answers with something other
than the critique, or takes too long is a 502 saying so."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from sqlalchemy.orm import Session

from assay.core import ledger
from assay.core.errors import DomainError, Invalid
from assay.core.experiments import spend
from assay.core.projects.models import Project
from assay.core.runs.budget import max_call_cost
from assay.core.scoring.judge_calls import ModelJudge, judge_models
from assay.providers.client import LLMClient, RetryPolicy
from assay.providers.ssrf import UrlPolicy
from assay.scorers.judge_guard import new_nonce
from assay.scorers.metajudge import Critique, critique_messages, critique_rubric

CALL_TIMEOUT_S = 60.0  # one judge call
DEADLINE_S = 90.0  # the whole critique, retries included: someone is waiting


class JudgeFailed(DomainError):
    """The judge model was called but gave no usable critique."""

    status, code = 502, "JUDGE_FAILED"


def critique(session: Session, project: Project, rubric_text: str, contract: Sequence[str],
             judge: str, secret_key: str, url_policy: UrlPolicy) -> Critique:
    if not rubric_text.strip():
        raise Invalid("The rubric is empty", {"json": {"rubric_text": [
            "Write what a passing conversation must do, against the contract, before asking "
            "for a critique"]}})
    models = judge_models(session, project.id, [judge], secret_key)
    model = models.get(judge)
    if model is None:
        raise Invalid("Unknown judge", {"json": {"judge": [
            f"No model {judge!r} in this project (give a model config's id or name)"]}})
    if model.key_error is not None:
        raise Invalid("The judge cannot be called", {"json": {"judge": [model.key_error]}})
    most = max_call_cost(critique_messages(rubric_text, contract, new_nonce()), model.model,
                         dict(model.params), model.price_in, model.price_out)
    try:
        hold = spend.reserve(session, project.id, None, most, "this critique")
    except spend.BudgetExceeded:
        session.rollback()  # on SQLite the lock is an open write transaction
        raise
    session.commit()
    session.close()  # hold no connection while the model thinks
    tab = ledger.Tab()

    async def ask() -> Critique:
        async with LLMClient(timeout_s=CALL_TIMEOUT_S, retry=RetryPolicy(attempts=2),
                             max_connections=4, url_policy=url_policy) as client:
            meter = ledger.Metered(ModelJudge(client, models), tab)
            return await asyncio.wait_for(
                critique_rubric(rubric_text, contract, meter, judge), DEADLINE_S)

    try:
        result = asyncio.run(ask())
    except TimeoutError as exc:
        raise JudgeFailed(f"The judge {model.name!r} did not answer within {DEADLINE_S:g} s; "
                          "try again, or choose a faster judge model",
                          code="JUDGE_TIMEOUT") from exc
    finally:  # what was sent is the project's spend; the rest of the hold goes back
        spend.settle(session, hold, "critique", tab)
        session.commit()
    if result.error is not None:
        raise JudgeFailed(result.error, {"judge": [judge]})
    return result
