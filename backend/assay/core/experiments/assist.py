"""AI assist in the wizard (edison §7.2 AI Assist router, FR-EC-001…003): draft objectives,
improve an objective or add details to it, draft a rubric from the objective, draft seed
prompts, improve a prompt. One call to a model of the project the user picks, through
LLMClient, while the user waits.

The reply must be the JSON the system prompt asks for (a single ```json fence around it is
tolerated), checked against a schema: anything else is a 502 ASSIST_BAD_REPLY saying what
was wrong. The call is paid either way, so its cost is charged to the project (cost report
kind "assist") and, when the call is for an experiment, to that experiment's assist phase.
Before the call its maximum cost is held against the project's and the experiment's caps
(core/experiments/spend.py, the runs' reserve -> settle protocol): a cap that cannot cover
it refuses the call (409 BUDGET_EXCEEDED) before anything is sent; the hold is settled to
the actual cost after the call, and released when no reply came."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import jsonschema_rs
from sqlalchemy.orm import Session

from assay.core import ledger
from assay.core.errors import DomainError, Invalid
from assay.core.experiments import spend
from assay.core.experiments.assist_prompts import (
    HOW,
    IMPROVE_SYSTEM,
    IMPROVE_USER,
    OBJECTIVE_SYSTEM,
    OBJECTIVES_SYSTEM,
    OBJECTIVES_USER,
    PROMPTS_SYSTEM,
    PROMPTS_USER,
    RUBRIC_SYSTEM,
    RUBRIC_USER,
)
from assay.core.experiments.models import Experiment
from assay.core.projects.models import Project
from assay.core.runs.budget import max_call_cost
from assay.core.scoring.judge_calls import ModelJudge, judge_models
from assay.providers.client import LLMClient, RetryPolicy
from assay.providers.ssrf import UrlPolicy
from assay.scorers.judging import FieldErrors
from assay.scorers.rubric import parse_rubric

KIND = "assist"
CALL_TIMEOUT_S, DEADLINE_S, MAX_TOKENS = 60.0, 90.0, 3000
_FENCE = re.compile(r"^\s*```(?:json)?\s*\n(.*)\n\s*```\s*$", re.S)
_TEXT = {"type": "string", "minLength": 1}



def _list_of(key: str, item: dict[str, Any], count: int | None = None) -> dict[str, Any]:
    items: dict[str, Any] = {"type": "array", "minItems": 1, "items": item}
    if count is not None:
        items["minItems"] = items["maxItems"] = count
    return {"type": "object", "required": [key], "properties": {key: items}}


def _object(*required: str, **optional: Any) -> dict[str, Any]:
    return {"type": "object", "required": list(required),
            "properties": {**{k: _TEXT for k in required}, **optional}}


class AssistBadReply(DomainError):
    status, code = 502, "ASSIST_BAD_REPLY"


@dataclass
class Reply:
    result: dict[str, Any]
    model: str
    cost_micros: int
    tokens_in: int
    tokens_out: int


def parse(text: str | None, schema: dict[str, Any]) -> dict[str, Any]:
    """The reply's JSON object, checked; AssistBadReply with the reason otherwise."""
    body = (text or "").strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1)
    try:
        data = json.loads(body)
    except json.JSONDecodeError as exc:
        raise AssistBadReply(f"The model did not answer with JSON ({exc.msg} at character "
                             f"{exc.pos}); try again or pick another model") from exc
    problems = [f"{'/'.join(map(str, e.instance_path)) or 'reply'}: {e.message}"
                for e in jsonschema_rs.validator_for(schema).iter_errors(data)]
    if problems:
        raise AssistBadReply("The model's JSON is not what was asked: "
                             + "; ".join(problems[:5]), {"reply": problems[:20]})
    return dict(data)


def _rubric(data: dict[str, Any]) -> dict[str, Any]:
    """Weights put back to sum to 1 (models round); any other rubric problem is the
    model's."""
    criteria = data["criteria"]
    total = sum(float(c.get("weight") or 0) for c in criteria if isinstance(c, dict))
    if total > 0:
        for c in criteria:
            c["weight"] = round(float(c["weight"]) / total, 4)
        criteria[-1]["weight"] = round(1 - sum(c["weight"] for c in criteria[:-1]), 4)
    errors = FieldErrors()
    parse_rubric({"criteria": criteria}, errors, "criteria")
    if errors.errors:
        raise AssistBadReply("The model's rubric is not valid: " + "; ".join(
            f"{k}: {', '.join(v)}" for k, v in errors.errors.items()), {"reply": errors.errors})
    return {"criteria": criteria}


def request_for(kind: str, data: Mapping[str, Any]) -> tuple[str, str, dict[str, Any]]:
    """(system, user, reply schema) of one kind of assist."""
    count = int(data.get("count") or 3)
    if kind == "objectives":
        return (OBJECTIVES_SYSTEM.format(count=count),
                OBJECTIVES_USER.format(hints=data["hints"], count=count),
                _list_of("options", _object("title", "text"), count))
    if kind == "objective":
        return (OBJECTIVE_SYSTEM.format(how=HOW[data["mode"]]), data["objective"],
                _object("text", "changes"))
    if kind == "rubric":
        return (RUBRIC_SYSTEM, RUBRIC_USER.format(objective=data["objective"]),
                _list_of("criteria", {"type": "object"}))
    if kind == "prompts":
        return (PROMPTS_SYSTEM.format(count=count), PROMPTS_USER.format(
            objective=data["objective"], rubric_json=json.dumps(data["rubric"], indent=2),
            count=count), _list_of("prompts", _object(
                "name", "text", "rationale", systemText={"type": ["string", "null"]}), count))
    focus = data.get("focus") or []
    return (IMPROVE_SYSTEM.format(focus=f", focusing on: {', '.join(focus)}" if focus else ""),
            IMPROVE_USER.format(objective=data["objective"], prompt=data["prompt"]),
            _object("improved", "changes"))


def assist(session: Session, project: Project, kind: str, data: Mapping[str, Any],
           secret_key: str, url_policy: UrlPolicy,
           experiment: Experiment | None = None) -> Reply:
    """One assist call, charged; the caller commits (also when it raises AssistBadReply:
    see `charge_failed`)."""
    ref = str(data["model_id"])
    model = judge_models(session, project.id, [ref], secret_key).get(ref)
    if model is None:
        raise Invalid("Unknown model", {"json": {"model_id": ["No such model in this project"]}})
    if model.key_error is not None:
        raise Invalid("The model cannot be called", {"json": {"model_id": [model.key_error]}})
    system, user, schema = request_for(kind, data)
    messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
    most = max_call_cost(messages, model.model, {"max_tokens": MAX_TOKENS}, model.price_in,
                         model.price_out)
    hold = spend.reserve(session, project.id, experiment.id if experiment else None, most,
                         "this assist call")
    session.commit()  # the hold is visible to every other spender; no transaction held
    # while the model thinks

    async def ask() -> Any:
        async with LLMClient(timeout_s=CALL_TIMEOUT_S, retry=RetryPolicy(attempts=2),
                             max_connections=2, url_policy=url_policy) as client:
            return await asyncio.wait_for(ModelJudge(client, {ref: model})(
                ref, messages, {"max_tokens": MAX_TOKENS}), DEADLINE_S)

    try:
        answer = asyncio.run(ask())
    except BaseException as exc:  # no reply to pay for: the hold goes back
        session.rollback()
        spend.release(session, hold)
        session.commit()
        if isinstance(exc, TimeoutError):
            raise AssistBadReply(f"{model.name!r} did not answer within {DEADLINE_S:g} s",
                                 code="ASSIST_TIMEOUT") from exc
        raise
    reply = Reply({}, model.name, answer.cost_micros or 0, answer.tokens_in or 0,
                  answer.tokens_out or 0)
    tab = ledger.Tab()
    tab.add(answer.model_id, answer.calls, answer.cost_micros, answer.tokens_in,
            answer.tokens_out)
    spend.settle(session, hold, "assist", tab)
    session.commit()  # paid: charged even when the reply is unusable
    if answer.text is None:
        raise AssistBadReply(f"{model.name!r} failed: {answer.error or 'no reply'}",
                             code="ASSIST_FAILED")
    reply.result = parse(answer.text, schema)
    if kind == "rubric":
        reply.result = _rubric(reply.result)
    if kind == "prompts":
        for item in reply.result["prompts"]:
            item.setdefault("systemText", None)
    return reply
