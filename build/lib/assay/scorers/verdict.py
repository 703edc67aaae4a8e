"""EvalArena's LLM judge (kind "verdict_judge", evalarena §10): the user's free-text
rubric decides whether an agent's conversation passes, and the judge answers with
EvalArena's verdict object {pass, severity, cluster, reason, evidence}.

Params:
    rubric: the rubric text (10 to 20,000 characters), shown to the judge as its criteria
    judges: [model config id or name] (1 to 5, distinct)
    agent_context?: {system_prompt?: text, tools?: [tool definitions], contract?: [text]}
      the challenge's ground truth, shown to the judge as data

Results: value 1 (pass) or 0 (fail); evidence points at messages by index. Severity in
Assay's words: low -> warning, high -> error, critical -> critical, set on failures only
(EvalArena's own word stays in details). As evalarena §10 asks, a reply that is not a
valid verdict counts as a fail of high severity with an actionable error (value None: it
is the judgement that failed); a judge call that fails is only an error.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from assay.scorers.base import Context, Evidence, ScoreResult, Subject
from assay.scorers.judge_guard import injection_report
from assay.scorers.judge_prompts import VERDICT_TASK
from assay.scorers.judging import (
    JUDGES_SCHEMA,
    Answer,
    FieldErrors,
    ReplyFormat,
    as_text,
    ask_judges,
    blocks,
    cannot_judge,
    check_keys,
    judge_messages,
    kind_schema,
    parse_judges,
    parse_text,
    render_input,
    render_messages,
    text_schema,
)

PARAM_FIELDS = ("rubric", "judges", "agent_context")
CONTEXT_FIELDS = ("system_prompt", "tools", "contract")
SEVERITIES = {"low": "warning", "high": "error", "critical": "critical"}


def verdict_format(messages: int) -> ReplyFormat:
    """EvalArena's verdict; evidence (optional, as in its MVP) must point at one of the
    `messages` messages shown."""
    evidence = {"type": "object", "additionalProperties": False,
                "required": ["idx", "label", "detail"],
                "properties": {"idx": {"type": "integer", "minimum": 0,
                                       "maximum": max(messages - 1, 0)},
                               "label": {"type": "string"}, "detail": {"type": "string"}}}
    return ReplyFormat("assay_verdict", {
        "type": "object", "additionalProperties": False,
        "required": ["pass", "severity", "cluster", "reason"],
        "properties": {"pass": {"type": "boolean"},
                       "severity": {"enum": list(SEVERITIES)},
                       "cluster": {"type": "string", "minLength": 1},
                       "reason": {"type": "string", "minLength": 1},
                       "evidence": {"type": "array", "items": evidence}},
    })


def _agent_context(raw: Any, errors: FieldErrors) -> dict[str, Any]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        errors.add("agent_context", "must be an object with system_prompt, tools, contract")
        return {}
    check_keys(raw, CONTEXT_FIELDS, "agent_context", errors)
    context: dict[str, Any] = {}
    prompt = parse_text(raw.get("system_prompt"), errors, "agent_context.system_prompt",
                        20_000)
    if prompt:
        context["system_prompt"] = prompt
    tools = raw.get("tools")
    if tools is not None and not (isinstance(tools, list)
                                  and all(isinstance(t, Mapping) for t in tools)):
        errors.add("agent_context.tools", "must be a list of tool definitions (objects)")
    elif tools:
        context["tools"] = tools
    contract = raw.get("contract")
    if contract is not None and not (isinstance(contract, list) and all(
            isinstance(c, str) and c.strip() for c in contract)):
        errors.add("agent_context.contract", "must be a list of clauses (non-empty text)")
    elif contract:
        context["contract"] = [c.strip() for c in contract]
    return context


class VerdictJudge:
    kind: ClassVar[str] = "verdict_judge"
    params_schema: ClassVar[dict[str, Any]] = kind_schema(
        "Judge models decide whether an agent's conversation passes a written rubric",
        {"rubric": text_schema(20_000, "The rubric: what passes and what fails", 10),
         "judges": JUDGES_SCHEMA,
         "agent_context": {
             "type": "object", "additionalProperties": False,
             "description": "The agent's ground truth, shown to the judges as data",
             "properties": {
                 "system_prompt": text_schema(20_000, "The agent's system prompt"),
                 "tools": {"type": "array", "items": {"type": "object"}},
                 "contract": {"type": "array", "items": {"type": "string", "minLength": 1},
                              "description": "Must-dos and must-nots"}}}},
        ("rubric", "judges"))

    def __init__(self, params: Mapping[str, Any]) -> None:
        errors = FieldErrors()
        check_keys(params, PARAM_FIELDS, "", errors)
        rubric = parse_text(params.get("rubric"), errors, "rubric", 20_000, 10)
        self._judges = parse_judges(params.get("judges"), errors)
        self.agent_context = _agent_context(params.get("agent_context"), errors)
        errors.raise_any()
        assert rubric is not None  # raise_any() raised otherwise
        self.rubric = rubric

    @property
    def judges(self) -> tuple[str, ...]:
        return self._judges

    @staticmethod
    def transcript(subject: Subject) -> list[dict[str, Any]]:
        """The conversation judged: the trace, or the output as the one message."""
        if subject.messages:
            return list(subject.messages)
        return [{"role": "assistant", "content": subject.output}]

    def messages(self, subject: Subject, nonce: str) -> list[dict[str, Any]]:
        contract = self.agent_context.get("contract")
        tools = self.agent_context.get("tools")
        material = blocks(nonce, [
            ("agent system prompt", self.agent_context.get("system_prompt")),
            ("agent tools", as_text(tools) if tools else None),
            ("agent contract", "\n".join(f"- {c}" for c in contract) if contract else None),
            ("case input", None if subject.messages
             else render_input(subject.input, False)),
            ("conversation", render_messages(self.transcript(subject))),
        ])
        return judge_messages(nonce, VERDICT_TASK.format(rubric=self.rubric, blocks=material))

    async def score(self, subject: Subject, ctx: Context) -> list[ScoreResult]:
        missing = subject.output is None and not subject.messages
        if ctx.judge is None or missing:
            return cannot_judge(missing, self._judges)
        reply_format = verdict_format(len(self.transcript(subject)))
        answers = await ask_judges(ctx.judge, self._judges,
                                   lambda nonce: self.messages(subject, nonce), reply_format)
        return [_result(answer, _judged_text(subject)) for answer in answers]


def _judged_text(subject: Subject) -> str:
    """The text checked for judge-directed instructions: the output, else the trace's."""
    if subject.output is not None:
        return subject.output
    return "\n".join(as_text(m.get("content") or "") for m in subject.messages or ())


def _result(answer: Answer, judged: str) -> ScoreResult:
    injection, flags = injection_report(judged)
    details = {**answer.details, **injection}
    if answer.data is None:
        if answer.rejected:
            return ScoreResult(None, False, severity=SEVERITIES["high"], error=answer.error,
                               judge_model=answer.judge, flags=flags,
                               details={**details, "severity": "high"})
        return ScoreResult(None, error=answer.error, judge_model=answer.judge, flags=flags,
                           details=details)
    data = answer.data
    passed = bool(data["pass"])
    evidence = tuple(Evidence(message_index=e["idx"], text=e["detail"], label=e["label"])
                     for e in data.get("evidence", ()))
    return ScoreResult(1.0 if passed else 0.0, passed,
                       rationale=data["reason"], evidence=evidence,
                       severity=None if passed else SEVERITIES[data["severity"]],
                       flags=flags, judge_model=answer.judge,
                       details={**details, "cluster": data["cluster"],
                                "severity": data["severity"]})
