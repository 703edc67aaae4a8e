"""JSON reference checks: is_json (the output parses as strict JSON) and json_schema (it
also validates against a JSON Schema, checked with jsonschema-rs)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from itertools import islice
from typing import Any, NoReturn

import jsonschema_rs

from assay.scorers.base import ScoreResult, Subject
from assay.scorers.deterministic import DeterministicScorer, span, verdict
from assay.scorers.param_fields import Field

# A fenced block with its language (blocks of other languages are skipped whole, so their
# closing fence is never taken for an opening one).
FENCE = re.compile(r"```[ \t]*([\w+.-]*)[ \t]*\r?\n(.*?)```", re.DOTALL)
JSON_LANGUAGES = ("", "json")
MAX_LISTED_ERRORS = 5  # in the rationale; details keep up to MAX_KEPT_ERRORS
MAX_KEPT_ERRORS = 50
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class Parsed:
    value: Any
    start: int  # where the JSON text sits in the output
    end: int
    fenced: bool


def _reject_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not valid JSON")


def _loads(text: str) -> Any:
    """Strict JSON: NaN and Infinity, which Python's parser accepts, are refused."""
    return json.loads(text, parse_constant=_reject_constant)


def _problem(exc: ValueError) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg} (line {exc.lineno}, column {exc.colno})"
    return str(exc)


def parse_json(output: str, allow_fenced: bool) -> Parsed | str:
    """The JSON in the output (the whole output, else with `allow_fenced` the first
    ```json block that parses), or what is wrong with it."""
    start = len(output) - len(output.lstrip())
    end = len(output.rstrip())
    if start == end:
        return "The output is empty"
    try:
        return Parsed(_loads(output[start:end]), start, end, fenced=False)
    except ValueError as exc:
        whole_problem = f"Not JSON: {_problem(exc)}"
    if not allow_fenced:
        return whole_problem
    fence_problem = None
    for block in FENCE.finditer(output):
        if block.group(1).lower() not in JSON_LANGUAGES:
            continue
        body = block.group(2)
        body_start = block.start(2) + len(body) - len(body.lstrip())
        body_end = block.start(2) + len(body.rstrip())
        try:
            return Parsed(_loads(body), body_start, body_end, fenced=True)
        except ValueError as exc:
            fence_problem = fence_problem or f"The fenced JSON block is not JSON: {_problem(exc)}"
    return fence_problem or f"{whole_problem}, and it has no fenced ```json block"


def _describe(value: Any) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean",
            type(None): "null"}.get(type(value), "a number")


def _where(parsed: Parsed) -> str:
    return "in the fenced block" if parsed.fenced else "as the whole output"


_ALLOW_FENCED = Field("allow_fenced", "boolean", "Also accept JSON inside a ```json fenced "
                      "block when the whole output is not JSON", default=False)


class IsJson(DeterministicScorer):
    """The output is valid JSON."""

    kind = "is_json"
    fields = (_ALLOW_FENCED,)

    def configure(self, values: dict[str, Any], errors: dict[str, list[str]]) -> None:
        self.allow_fenced: bool = values["allow_fenced"]

    async def check(self, output: str, subject: Subject) -> ScoreResult:
        parsed = parse_json(output, self.allow_fenced)
        if isinstance(parsed, str):
            return verdict(False, parsed)
        return verdict(True, f"Valid JSON ({_describe(parsed.value)}) {_where(parsed)}",
                       evidence=(span(subject, parsed.start, parsed.end, "json"),))


def json_path(parts: list[str | int]) -> str:
    """`$.items[0]["odd key"]` for the path ["items", 0, "odd key"]."""
    path = "$"
    for part in parts:
        if isinstance(part, int):
            path += f"[{part}]"
        elif _IDENTIFIER.fullmatch(part):
            path += f".{part}"
        else:
            path += f"[{json.dumps(part)}]"
    return path


class JsonSchema(DeterministicScorer):
    """The output is JSON that validates against `schema` (JSON Schema, draft detected from
    $schema, 2020-12 by default; formats are checked; remote $refs are never fetched)."""

    kind = "json_schema"
    fields = (Field("schema", "schema", "The JSON Schema the output must satisfy",
                    required=True), _ALLOW_FENCED)

    def configure(self, values: dict[str, Any], errors: dict[str, list[str]]) -> None:
        self.allow_fenced: bool = values["allow_fenced"]
        try:
            self.validator = jsonschema_rs.validator_for(
                values["schema"], validate_formats=True, offline=True)
        except jsonschema_rs.ValidationError as exc:
            errors["schema"] = [f"Invalid JSON Schema at {json_path(exc.instance_path)}: "
                                f"{exc.message}"]
        except (jsonschema_rs.ReferencingError, ValueError, TypeError) as exc:
            errors["schema"] = [f"Invalid JSON Schema: {exc}"]

    async def check(self, output: str, subject: Subject) -> ScoreResult:
        parsed = parse_json(output, self.allow_fenced)
        if isinstance(parsed, str):
            return verdict(False, parsed)
        problems = [{"path": json_path(error.instance_path), "message": error.message}
                    for error in islice(self.validator.iter_errors(parsed.value),
                                        MAX_KEPT_ERRORS)]
        evidence = (span(subject, parsed.start, parsed.end, "json"),)
        if not problems:
            return verdict(True, f"JSON {_where(parsed)} matches the schema", evidence=evidence)
        listed = "; ".join(f"{p['path']}: {p['message']}" for p in problems[:MAX_LISTED_ERRORS])
        more = len(problems) - MAX_LISTED_ERRORS
        if more > 0:
            listed += f"; and {more}{'+' if len(problems) == MAX_KEPT_ERRORS else ''} more"
        return verdict(False, f"JSON {_where(parsed)} does not match the schema: {listed}",
                       evidence=evidence, details={"errors": problems})


SCORERS: dict[str, type] = {cls.kind: cls for cls in (IsJson, JsonSchema)}
