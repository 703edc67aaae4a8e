"""What every LLM-judge kind shares: parameter checks, the messages a judge receives, the
call parameters (temperature and seed fixed, a strict JSON response format), and the
strict reading of the reply against a JSON schema.

Replies: the judge must answer with exactly one JSON object matching the schema. One
leniency is deliberate: a reply that is *entirely* one markdown fence (```json ... ```)
is unwrapped, because providers without a schema mode (Anthropic here) often fence JSON
by habit, and the fence carries no content. Prose before or after the object, NaN or
Infinity, duplicate keys, extra fields or out-of-range values are all rejected with a
message that says what was wrong.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeGuard, TypeVar

import jsonschema_rs

from assay.scorers.base import JudgeCall, JudgeReply, ParamsError, ScoreResult
from assay.scorers.judge_guard import data_block, new_nonce
from assay.scorers.judge_prompts import SYSTEM

TEMPERATURE = 0.3  # fixed for every judge call (edison FR-EC-006)
SEED = 42
MAX_JUDGES = 5
MAX_PROBLEMS = 6  # schema problems quoted in one error; the raw reply has the rest
MAX_QUOTE = 80  # characters of a bad value quoted in an error
MAX_RAW_REPLY = 20_000  # characters of a rejected reply kept in details
NO_JUDGE = ("LLM judges cannot be called here: this scorer needs the run engine's judge "
            "calls. Score it inside a run (or `assay eval`) with judge model(s) {judges} "
            "configured in the project.")
NO_OUTPUT = "There is no output to judge: the model call for this cell failed."


class FieldErrors:
    """Collects parameter problems by field path, to raise them all at once."""

    def __init__(self) -> None:
        self.errors: dict[str, list[str]] = {}

    def add(self, path: str, message: str) -> None:
        self.errors.setdefault(path, []).append(message)

    def raise_any(self) -> None:
        if self.errors:
            raise ParamsError(self.errors)


def is_number(value: Any) -> TypeGuard[float]:
    return (isinstance(value, int | float) and not isinstance(value, bool)
            and math.isfinite(value))


def check_keys(raw: Mapping[str, Any], allowed: Sequence[str], path: str,
               errors: FieldErrors) -> None:
    """A field not in `allowed` is an error (a typo must not be silently ignored)."""
    for key in raw:
        if key not in allowed:
            where = f"{path}.{key}" if path else str(key)
            errors.add(where, f"unknown field; allowed: {', '.join(allowed)}")


def parse_judges(raw: Any, errors: FieldErrors, path: str = "judges") -> tuple[str, ...]:
    """1 to 5 distinct judge model references (model config ids or names)."""
    if not isinstance(raw, list) or not 1 <= len(raw) <= MAX_JUDGES:
        errors.add(path, f"give 1 to {MAX_JUDGES} judge models (model config ids or names)")
        return ()
    judges: list[str] = []
    for i, ref in enumerate(raw):
        if not isinstance(ref, str) or not ref.strip():
            errors.add(f"{path}[{i}]", "must be a model config id or name (non-empty text)")
        elif ref.strip() in judges:
            # The same model with the same seed would repeat its scores, and a score is
            # keyed by its judge model.
            errors.add(f"{path}[{i}]", f"{ref.strip()!r} is listed twice; list each judge once")
        else:
            judges.append(ref.strip())
    return tuple(judges)


def parse_threshold(raw: Any, errors: FieldErrors,
                    path: str = "pass_threshold") -> float | None:
    if raw is None:
        return None
    if not is_number(raw) or not 0 <= raw <= 1:
        errors.add(path, "must be a number from 0 to 1 (the composite score needed to pass)")
        return None
    return float(raw)


def parse_text(raw: Any, errors: FieldErrors, path: str, max_chars: int,
               min_chars: int = 0) -> str | None:
    """Optional text (None when absent); `min_chars` > 0 makes it required."""
    if raw is None and min_chars == 0:
        return None
    if not isinstance(raw, str) or not min_chars <= len(raw.strip()) <= max_chars:
        size = f"{min_chars} to {max_chars}" if min_chars else f"at most {max_chars}"
        errors.add(path, f"must be text of {size} characters")
        return None
    return raw.strip() or None


# --- the JSON Schemas of the parameters (what the API shows the scorer editor) ----------

JUDGES_SCHEMA = {"type": "array", "minItems": 1, "maxItems": MAX_JUDGES, "uniqueItems": True,
                 "items": {"type": "string", "minLength": 1},
                 "description": "Judge models: model config ids or names in the project"}
THRESHOLD_SCHEMA = {"type": "number", "minimum": 0, "maximum": 1,
                    "description": "The composite score (0..1) needed to pass"}


def text_schema(max_chars: int, description: str, min_chars: int = 0) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string", "maxLength": max_chars,
                              "description": description}
    if min_chars:
        schema["minLength"] = min_chars
    return schema


def kind_schema(description: str, properties: dict[str, Any],
                required: Sequence[str]) -> dict[str, Any]:
    return {"type": "object", "description": description, "properties": properties,
            "required": list(required), "additionalProperties": False}


# --- the messages a judge receives -----------------------------------------------------

def judge_messages(nonce: str, task: str) -> list[dict[str, Any]]:
    """The system message (naming this call's block id) and the user message `task`."""
    return [{"role": "system", "content": SYSTEM.format(nonce=nonce)},
            {"role": "user", "content": task}]


def blocks(nonce: str, items: Sequence[tuple[str, str | None]]) -> str:
    """Labelled data blocks for the items that have text, in order."""
    return "\n\n".join(data_block(nonce, label, text) for label, text in items
                       if text is not None)


def as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, indent=2, default=str)


def message_text(message: Mapping[str, Any]) -> str:
    """A message's content as text (content parts joined)."""
    content = message.get("content")
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return "" if content is None else as_text(content)


def render_messages(messages: Sequence[Mapping[str, Any]]) -> str:
    """A conversation or trace as numbered lines: `[i] role: content`, tool calls after."""
    lines = []
    for i, message in enumerate(messages):
        name = message.get("name") or message.get("tool_name")
        head = f"[{i}] {message.get('role', '?')}" + (f" ({name})" if name else "")
        text = message_text(message)
        if message.get("tool_calls"):
            text += ("\n" if text else "") + "tool calls: " + as_text(message["tool_calls"])
        lines.append(f"{head}: {text}")
    return "\n".join(lines)


def render_input(value: Mapping[str, Any], has_messages: bool) -> str | None:
    """The case's input for the judge (its `messages` are left out when the conversation
    is shown on its own)."""
    shown = {k: v for k, v in value.items() if not (has_messages and k == "messages")}
    return as_text(shown) if shown else None


# --- the reply -------------------------------------------------------------------------

class ReplyError(ValueError):
    """A judge reply that is not the JSON object asked for; the message says why."""


_FENCE = re.compile(r"\A```(?:json)?[ \t]*\r?\n(.*?)\r?\n?```\Z", re.DOTALL | re.IGNORECASE)
_Kind = jsonschema_rs.ValidationErrorKind
_LOCAL_ONLY = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength",
               "maxLength", "minItems", "maxItems", "pattern")


def wire_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The schema as sent to providers' strict modes, which accept a subset: no numeric or
    length bounds, every property required. Assay checks the full schema on the reply."""
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _LOCAL_ONLY:
            continue
        if key == "properties":
            out[key] = {name: wire_schema(sub) for name, sub in value.items()}
        elif key == "items":
            out[key] = wire_schema(value)
        else:
            out[key] = value
    if "properties" in out:
        out["required"] = list(out["properties"])
    return out


def _no_constants(name: str) -> Any:
    raise ReplyError(f"the reply contains {name}, which is not a JSON number")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise ReplyError(f"the field {key!r} appears twice")
        seen[key] = value
    return seen


def parse_json(text: str) -> tuple[Any, bool]:
    """The reply's JSON value and whether it came fenced, or ReplyError."""
    stripped = text.strip()
    if not stripped:
        raise ReplyError("the reply is empty")
    match = _FENCE.match(stripped)
    body = match.group(1).strip() if match else stripped
    try:
        return json.loads(body, parse_constant=_no_constants,
                          object_pairs_hook=_unique_keys), match is not None
    except json.JSONDecodeError as exc:
        hint = ""
        if not body.startswith("{"):
            hint = "; it must start with '{' (no text or markdown before the object)"
        elif exc.msg == "Extra data":
            hint = "; there is text after the JSON object"
        raise ReplyError(f"the reply is not JSON ({exc.msg} at line {exc.lineno}, "
                         f"column {exc.colno}){hint}") from None


def _where(path: Sequence[str | int]) -> str:
    where = ""
    for part in path:
        where += f"[{part}]" if isinstance(part, int) else (f".{part}" if where else part)
    return where or "reply"


def _schema_at(schema: Mapping[str, Any], path: Sequence[str | int]) -> Mapping[str, Any]:
    node: Any = schema
    for part in path:
        node = node[part]
    return node if isinstance(node, Mapping) else {}


def _quote(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= MAX_QUOTE else text[:MAX_QUOTE - 1] + "…"


def _number(value: Any) -> str:
    return str(int(value)) if is_number(value) and float(value).is_integer() else str(value)


def describe(error: jsonschema_rs.ValidationError, schema: Mapping[str, Any]) -> str:
    """One schema violation in words: where, and what was wrong."""
    where = _where(list(error.instance_path))
    match error.kind:
        case _Kind.Required(prop):
            return f"{where}: {prop!r} missing"
        case _Kind.AdditionalProperties(unexpected):
            plural = "s" if len(unexpected) > 1 else ""
            return f"{where}: unexpected field{plural} {', '.join(map(repr, sorted(unexpected)))}"
        case _Kind.Minimum() | _Kind.Maximum():
            node = _schema_at(schema, list(error.schema_path)[:-1])
            return (f"{where}: {_number(error.instance)} outside "
                    f"{_number(node.get('minimum'))}-{_number(node.get('maximum'))}")
        case _Kind.Type(types):
            return f"{where}: expected {' or '.join(types)}, got {_quote(error.instance)}"
        case _Kind.Enum(options):
            listed = ", ".join(json.dumps(o) for o in options)
            return f"{where}: {_quote(error.instance)} is not one of {listed}"
        case _Kind.MinLength():
            return f"{where}: must not be empty"
    return f"{where}: {error.message}"


class ReplyFormat:
    """The JSON object a judge must return: its schema (checked here in full) and the call
    parameters that ask for it."""

    def __init__(self, name: str, schema: dict[str, Any]):
        self.name = name
        self.schema = schema
        self.validator = jsonschema_rs.validator_for(schema)
        self.params: dict[str, Any] = {
            "temperature": TEMPERATURE,
            "seed": SEED,
            "response_format": {"type": "json_schema", "json_schema": {
                "name": name, "strict": True, "schema": wire_schema(schema)}},
        }

    def read(self, text: str) -> tuple[dict[str, Any], bool]:
        """The reply's object and whether it was fenced, or ReplyError naming each
        problem."""
        data, fenced = parse_json(text)
        problems = sorted(describe(e, self.schema) for e in self.validator.iter_errors(data))
        if problems:
            more = len(problems) - MAX_PROBLEMS
            raise ReplyError("; ".join(problems[:MAX_PROBLEMS])
                             + (f"; and {more} more" if more > 0 else ""))
        return data, fenced


@dataclass(frozen=True)
class Answer:
    """A judge's reply, read: `data` when valid, else `error`. `details` keeps what a
    reviewer needs (the raw reply, usage, the call's error class)."""

    judge: str
    data: dict[str, Any] | None = None
    error: str | None = None
    details: dict[str, Any] = field(default_factory=dict)
    rejected: bool = False  # the call worked but the reply was not the object asked for


def _usage(reply: JudgeReply) -> dict[str, Any]:
    return {"model": reply.model, "model_id": reply.model_id, "calls": reply.calls,
            "tokens_in": reply.tokens_in, "tokens_out": reply.tokens_out,
            "cost_micros": reply.cost_micros}


async def ask(call: JudgeCall, judge: str, messages: list[dict[str, Any]],
              reply_format: ReplyFormat) -> Answer:
    """Send `messages` to `judge` and read its reply strictly; never raises for a failed
    call or a bad reply (one judge's failure must not lose the others' scores)."""
    try:
        reply = await call(judge, messages, reply_format.params)
    except Exception as exc:  # the call layer's bug or outage: report it on this score
        return Answer(judge, error=f"Judge {judge!r} could not be called: "
                                   f"{type(exc).__name__}: {exc}",
                      details={"error_class": type(exc).__name__})
    details: dict[str, Any] = {"usage": _usage(reply)}
    if reply.error is not None or reply.text is None:
        what = reply.error or "no text in the reply"
        return Answer(judge, error=f"Judge {judge!r} call failed "
                                   f"({reply.error_class or 'error'}): {what}",
                      details={**details, "error_class": reply.error_class})
    try:
        data, fenced = reply_format.read(reply.text)
    except ReplyError as exc:
        error = (f"Judge {judge!r} reply rejected: {exc}. The judge must answer with only "
                 "the JSON object the prompt describes; if this repeats, choose a judge "
                 "model that follows JSON output formats.")
        return Answer(judge, error=error, rejected=True,
                      details={**details, "raw_reply": reply.text[:MAX_RAW_REPLY]})
    if fenced:
        details["reply_fenced"] = True
    return Answer(judge, data=data, details=details)


T = TypeVar("T")


async def all_settled(*calls: Awaitable[T]) -> list[T]:
    """`asyncio.gather` that never leaves a sibling behind: when a stop cuts one judge
    call, the others are awaited to their end before the cut is raised, so a reply the
    provider gave (and bills) has been counted (`ledger.Metered`) by the time the caller
    settles; a bug is raised the same way, after them."""
    outcomes = await asyncio.gather(*calls, return_exceptions=True)
    for outcome in outcomes:
        if isinstance(outcome, BaseException) and not isinstance(
                outcome, asyncio.CancelledError):
            raise outcome
    for outcome in outcomes:
        if isinstance(outcome, asyncio.CancelledError):
            raise outcome
    return outcomes  # type: ignore[return-value]  # no exception left


async def ask_judges(call: JudgeCall, judges: Sequence[str],
                     build: Callable[[str], list[dict[str, Any]]],
                     reply_format: ReplyFormat) -> list[Answer]:
    """Every judge at once, each with messages built around a block id of its own."""
    async def one(judge: str) -> Answer:
        return await ask(call, judge, build(new_nonce()), reply_format)
    return await all_settled(*(one(judge) for judge in judges))


def cannot_judge(missing_output: bool, judges: Sequence[str]) -> list[ScoreResult]:
    """One failed result per judge: there is no output to judge, or (else) no way to call
    a judge."""
    error = NO_OUTPUT if missing_output else \
        NO_JUDGE.format(judges=", ".join(repr(j) for j in judges))
    return [ScoreResult.failed(error, judge_model=judge) for judge in judges]
