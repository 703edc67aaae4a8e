"""The `rules` scorer: the EvalArena YAML rules (see rules_dsl) checked against a
conversation or agent trace.

A rule is triggered by every message of its role that its `when` pattern matches
(agent_says: assistant messages, user_requests: user messages). A triggered rule is violated
when it has no `require` (`action: fail`), or when none of the tools its `tool_called`
names was called anywhere in the trace. The output passes when no rule is violated; its
value is the share of rules not violated, its severity the worst violated rule's, and its
evidence the triggering messages of each violated rule (evalarena §9 "Evidence mapping").
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from assay.scorers.base import Context, Evidence, ParamsError, ScoreResult, Subject
from assay.scorers.rules_dsl import (
    MAX_TEXT,
    SEVERITIES,
    Rule,
    RuleProblem,
    RulesError,
    RuleSet,
    parse_rules,
)

__all__ = [
    "SCORERS",
    "PatternTimeout",
    "RuleOutcome",
    "RuleProblem",
    "RuleSet",
    "RulesError",
    "RulesScorer",
    "conversation",
    "evaluate",
    "parse_rules",
    "tools_called",
]

MATCH_BUDGET_S = 2.0  # all patterns of one score: a runaway regex fails the score, not a worker
MAX_SHOWN = 80  # characters of matched text quoted in a message
MAX_EVIDENCE_TEXT = 200


class PatternTimeout(Exception):
    def __init__(self, rule: Rule, message_index: int):
        super().__init__(f"rule '{rule.id}': matching {rule.when.pattern.source!r} against "
                         f"message {message_index} ran past the {MATCH_BUDGET_S:g} s the rules "
                         "may take; simplify the regular expression")


@dataclass(frozen=True)
class RuleOutcome:
    rule: Rule
    passed: bool
    triggers: tuple[Evidence, ...]  # the first match in each triggering message
    satisfied_by: tuple[int, ...]  # messages calling a required tool
    message: str  # what matched and what was missing

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.rule.id, "passed": self.passed, "triggered": bool(self.triggers),
                "severity": self.rule.severity, "message": self.message,
                "notes": self.rule.notes,
                "triggers": [{"message_index": e.message_index, "start": e.start,
                              "end": e.end, "text": e.text} for e in self.triggers],
                "satisfied_by": list(self.satisfied_by)}


def conversation(subject: Subject) -> list[Mapping[str, Any]] | None:
    """The messages to check: the recorded trace, else the case's input messages (or its
    question as a user message) followed by the output. None when there is no output."""
    if subject.messages is not None:
        return list(subject.messages)
    if subject.output is None:
        return None
    given = subject.input.get("messages")
    question = subject.input.get("question")
    if isinstance(given, list):
        before = [m for m in given if isinstance(m, Mapping)]
    elif isinstance(question, str):
        before = [{"role": "user", "content": question}]
    else:
        before = []
    return [*before, {"role": "assistant", "content": subject.output}]


def tools_called(messages: Sequence[Mapping[str, Any]]) -> dict[str, list[int]]:
    """Tool name -> indices of the messages that call it: assistant `tool_calls`
    ({name} or {function: {name}}) and tool results named by `name`, `metadata.name` or
    `metadata.tool_name`, or through `tool_call_id` to the call they answer."""
    found: dict[str, list[int]] = {}
    by_call_id: dict[str, str] = {}

    def note(name: Any, index: int) -> None:
        if isinstance(name, str) and name and index not in found.setdefault(name, []):
            found[name].append(index)

    for index, message in enumerate(messages):
        calls = message.get("tool_calls")
        for call in calls if isinstance(calls, list) else []:
            if not isinstance(call, Mapping):
                continue
            function = call.get("function")
            name = call.get("name") or (function.get("name")
                                        if isinstance(function, Mapping) else None)
            note(name, index)
            if isinstance(call.get("id"), str) and isinstance(name, str):
                by_call_id[call["id"]] = name
        if message.get("role") == "tool":
            metadata = message.get("metadata")
            meta = metadata if isinstance(metadata, Mapping) else {}
            note(message.get("name") or meta.get("name") or meta.get("tool_name")
                 or by_call_id.get(str(message.get("tool_call_id"))), index)
    return found


def _content(message: Mapping[str, Any]) -> str:
    content = message.get("content")
    return content if isinstance(content, str) else ""


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _triggers(rule: Rule, messages: Sequence[Mapping[str, Any]],
              deadline: float) -> tuple[Evidence, ...]:
    found = []
    for index, message in enumerate(messages):
        if message.get("role") != rule.when.role:
            continue
        text = _content(message)
        try:
            left = max(deadline - time.monotonic(), 0.001)
            match = rule.when.pattern.compiled.search(text, timeout=left)
        except TimeoutError:
            raise PatternTimeout(rule, index) from None
        if match is not None:
            found.append(Evidence(index, match.start(), match.end(),
                                  _shorten(match.group(), MAX_EVIDENCE_TEXT), rule.id))
    return tuple(found)


def _judge(rule: Rule, triggers: tuple[Evidence, ...],
           called: Mapping[str, list[int]]) -> RuleOutcome:
    pattern = rule.when.pattern.source
    if not triggers:
        return RuleOutcome(rule, True, (), (), f"not triggered: no {rule.when.role} message "
                                                 f"matches \"{pattern}\"")
    first = triggers[0]
    more = f" (and {len(triggers) - 1} more)" if len(triggers) > 1 else ""
    matched = (f"{rule.when.role} message {first.message_index}{more} matches \"{pattern}\": "
               f"\"{_shorten(first.text, MAX_SHOWN)}\"")
    if rule.require is None:
        return RuleOutcome(rule, False, triggers, (), matched)
    tools = rule.require.tools
    satisfied = tuple(sorted({i for tool in tools for i in called.get(tool, [])}))
    if satisfied:
        names = ", ".join(tool for tool in tools if tool in called)
        return RuleOutcome(rule, True, triggers, satisfied,
                           f"{matched}; {names} called in message {satisfied[0]}")
    wanted = tools[0] if len(tools) == 1 else "any of " + ", ".join(tools)
    return RuleOutcome(rule, False, triggers, (),
                       f"{matched}, but {wanted} was never called")


def evaluate(rules: RuleSet, messages: Sequence[Mapping[str, Any]]) -> list[RuleOutcome]:
    """Each rule's outcome on `messages`, in the order the rules are written. Raises
    PatternTimeout when a regular expression runs away."""
    messages = [m if isinstance(m, Mapping) else {} for m in messages]
    called = tools_called(messages)
    deadline = time.monotonic() + MATCH_BUDGET_S
    return [_judge(rule, _triggers(rule, messages, deadline), called) for rule in rules.rules]


def _result(outcomes: list[RuleOutcome]) -> ScoreResult:
    failed = [o for o in outcomes if not o.passed]
    severity = max((o.rule.severity for o in failed), key=SEVERITIES.index, default=None)
    if failed:
        rationale = f"{len(failed)} of {len(outcomes)} rules failed: " + "; ".join(
            f"{o.rule.id} ({o.rule.severity}): {o.message}" for o in failed)
    else:
        rationale = f"All {len(outcomes)} rules passed."
    return ScoreResult(
        value=(len(outcomes) - len(failed)) / len(outcomes),
        passed=not failed,
        criteria={o.rule.id: 1.0 if o.passed else 0.0 for o in outcomes},
        rationale=rationale,
        evidence=tuple(e for o in failed for e in o.triggers),
        severity=severity,
        details={"rules": [o.as_dict() for o in outcomes]},
    )


class RulesScorer:
    """params: {"yaml": the rules text}. Building it parses and checks the rules."""

    kind: ClassVar[str] = "rules"
    # The schema says "YAML text"; the rules inside it are checked by parse_rules, whose
    # problems carry their line and column.
    params_schema: ClassVar[dict[str, Any]] = {
        "type": "object", "additionalProperties": False, "required": ["yaml"],
        "description": "Rules in the EvalArena YAML language, checked against the "
                       "conversation or agent trace",
        "properties": {"yaml": {"type": "string", "maxLength": MAX_TEXT,
                                "description": "The rules, as YAML text (application/yaml)"}}}

    def __init__(self, params: Mapping[str, Any]) -> None:
        if unknown := sorted(set(params) - {"yaml"}):
            raise ParamsError({key: ["unknown parameter; the rules scorer takes only 'yaml'"]
                               for key in unknown})
        text = params.get("yaml")
        if not isinstance(text, str):
            raise ParamsError({"yaml": ["required: the rules as YAML text"]})
        self.ruleset = parse_rules(text)

    @property
    def judges(self) -> tuple[str, ...]:
        return ()

    async def score(self, subject: Subject, ctx: Context) -> list[ScoreResult]:
        messages = conversation(subject)
        if messages is None:
            return [ScoreResult.failed("There is no output to check: the call failed.")]
        try:
            outcomes = evaluate(self.ruleset, messages)
        except PatternTimeout as error:
            return [ScoreResult.failed(str(error))]
        return [_result(outcomes)]


SCORERS: dict[str, type] = {"rules": RulesScorer}
