"""The shape of a case for each dataset kind, checked before anything is written.

questions:      input {question}
cases:          input {<variable>: text...}, expected {output?}
conversations:  input {messages: [{role, content}...]}, expected {turns: [one ground truth per
                user turn]}, 1-10 user turns
traces:         trace {messages: [{role: system|user|assistant|tool, content, tool_calls?,
                tool_call_id?}]}
"""

from __future__ import annotations

import re
from typing import Any

KINDS = ("questions", "cases", "conversations", "traces")
DIFFICULTIES = ("easy", "medium", "hard")
SPLITS = ("dev", "test")
VARIABLE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
MAX_TEXT = 100_000
MAX_TAGS = 20
MAX_TAG = 50
MAX_TURNS = 10
TRACE_ROLES = ("system", "user", "assistant", "tool")
CHAT_ROLES = ("system", "user", "assistant")

Errors = dict[str, list[str]]


def _text(value: Any, empty_ok: bool = False) -> str | None:
    """The reason `value` is not acceptable text, or None."""
    if not isinstance(value, str):
        return "must be a string"
    if not empty_ok and not value.strip():
        return "must not be empty"
    if len(value) > MAX_TEXT:
        return f"is longer than {MAX_TEXT} characters"
    return None


def _add(errors: Errors, field: str, reason: str) -> None:
    errors.setdefault(field, []).append(reason)


def _questions(case: dict[str, Any], errors: Errors) -> None:
    data = case.get("input")
    if not isinstance(data, dict) or set(data) != {"question"}:
        _add(errors, "input", "must be {\"question\": text}")
        return
    reason = _text(data["question"])
    if reason:
        _add(errors, "input.question", f"question {reason}")
    expected = case.get("expected")
    if expected is not None and not isinstance(expected, dict):
        _add(errors, "expected", "must be text, an object or null")


def _cases(case: dict[str, Any], errors: Errors) -> None:
    data = case.get("input")
    if not isinstance(data, dict) or not data:
        _add(errors, "input", "must be an object of template variables")
        return
    for name, value in data.items():
        if not VARIABLE.match(name):
            _add(errors, "input", f"'{name[:64]}' is not a variable name")
        elif (reason := _text(value, empty_ok=True)) is not None:
            _add(errors, f"input.{name}", f"{name} {reason}")
    expected = case.get("expected")
    if expected is None:
        return
    if not isinstance(expected, dict) or not set(expected) <= {"output"}:
        _add(errors, "expected", "must be text, {\"output\": text} or null")
    elif "output" in expected and (reason := _text(expected["output"], empty_ok=True)):
        _add(errors, "expected.output", f"output {reason}")


def _messages(messages: Any, roles: tuple[str, ...], field: str, errors: Errors,
              tools: bool = False) -> list[dict[str, Any]]:
    if not isinstance(messages, list) or not messages:
        _add(errors, field, "must be a non-empty list of messages")
        return []
    good = []
    for index, message in enumerate(messages):
        where = f"{field}[{index}]"
        if not isinstance(message, dict):
            _add(errors, where, "must be an object")
            continue
        allowed = {"role", "content"} | ({"tool_calls", "tool_call_id", "name"} if tools
                                         else set())
        if extra := set(message) - allowed:
            _add(errors, where, f"unknown keys: {', '.join(sorted(extra))}")
        if message.get("role") not in roles:
            _add(errors, f"{where}.role", f"role must be one of {', '.join(roles)}")
        content = message.get("content")
        has_calls = tools and message.get("tool_calls")
        if not (content is None and has_calls) and (reason := _text(content, empty_ok=tools)):
            _add(errors, f"{where}.content", f"content {reason}")
        if tools and "tool_calls" in message and not isinstance(message["tool_calls"], list):
            _add(errors, f"{where}.tool_calls", "must be a list")
        if tools and message.get("role") == "tool" and not isinstance(
                message.get("tool_call_id"), str):
            _add(errors, f"{where}.tool_call_id", "a tool result needs its tool_call_id")
        good.append(message)
    return good


def _conversations(case: dict[str, Any], errors: Errors) -> None:
    data = case.get("input")
    if not isinstance(data, dict) or set(data) != {"messages"}:
        _add(errors, "input", "must be {\"messages\": [...]}")
        return
    messages = _messages(data["messages"], CHAT_ROLES, "input.messages", errors)
    users = sum(1 for m in messages if m.get("role") == "user")
    if messages and not 1 <= users <= MAX_TURNS:
        _add(errors, "input.messages", f"needs 1 to {MAX_TURNS} user turns, has {users}")
    expected = case.get("expected")
    if not isinstance(expected, dict) or not isinstance(expected.get("turns"), list):
        _add(errors, "expected", "must be {\"turns\": [ground truth per user turn]}")
        return
    turns = expected["turns"]
    if messages and len(turns) != users:
        _add(errors, "expected.turns", f"has {len(turns)} answers for {users} user turns")
    for index, turn in enumerate(turns):
        if reason := _text(turn):
            _add(errors, f"expected.turns[{index}]", f"ground truth {reason}")


def _traces(case: dict[str, Any], errors: Errors) -> None:
    trace = case.get("trace")
    if not isinstance(trace, dict) or "messages" not in trace:
        _add(errors, "trace", "must be {\"messages\": [...]}")
        return
    _messages(trace["messages"], TRACE_ROLES, "trace.messages", errors, tools=True)
    if case.get("input") not in (None, {}) and not isinstance(case.get("input"), dict):
        _add(errors, "input", "must be an object")


CHECKS = {"questions": _questions, "cases": _cases, "conversations": _conversations,
          "traces": _traces}


def spec_expected(kind: str, case: dict[str, Any]) -> dict[str, Any]:
    """The case with edison's `"expected": "text"` (its JSONL format, FR-EC-004) as the
    object this kind stores: {"output": text} ({"answer": text} for questions); blank text
    is no expected value. Any other `expected` is left for case_errors to judge."""
    expected = case.get("expected")
    if not isinstance(expected, str) or kind not in ("cases", "questions"):
        return case
    key = "answer" if kind == "questions" else "output"
    return {**case, "expected": {key: expected} if expected.strip() else None}


def case_errors(kind: str, case: dict[str, Any]) -> Errors:
    """Field -> reasons for one case of a dataset of `kind`; empty when it is valid."""
    errors: Errors = {}
    CHECKS[kind](case, errors)
    if kind != "traces" and case.get("trace") is not None:
        _add(errors, "trace", "only trace datasets hold traces")
    tags = case.get("tags", [])
    if not isinstance(tags, list) or len(tags) > MAX_TAGS or any(
            not isinstance(t, str) or not t.strip() or len(t) > MAX_TAG for t in tags):
        _add(errors, "tags", f"at most {MAX_TAGS} tags of 1 to {MAX_TAG} characters")
    if case.get("difficulty") not in (None, *DIFFICULTIES):
        _add(errors, "difficulty", f"must be one of {', '.join(DIFFICULTIES)} or null")
    if not isinstance(case.get("metadata", {}), dict):
        _add(errors, "metadata", "must be an object")
    return errors


def normalize(case: dict[str, Any]) -> dict[str, Any]:
    """The row values of a valid case."""
    tags = list(dict.fromkeys(t.strip() for t in case.get("tags") or []))
    return {"input": case.get("input") or {}, "expected": case.get("expected"),
            "trace": case.get("trace"), "tags": tags, "difficulty": case.get("difficulty"),
            "meta": case.get("metadata") or {}}


def input_text(kind: str, data: dict[str, Any] | None, trace: dict[str, Any] | None) -> str:
    """The text a case asks about, for search, length buckets and language."""
    if kind == "traces" and trace:
        return "\n".join(str(m.get("content") or "") for m in trace.get("messages", [])
                         if isinstance(m, dict) and m.get("role") == "user")
    data = data or {}
    if kind == "conversations":
        return "\n".join(str(m.get("content") or "") for m in data.get("messages", [])
                         if isinstance(m, dict) and m.get("role") == "user")
    if "question" in data:
        return str(data["question"])
    return "\n".join(str(v) for v in data.values())
