"""Parameters of the code_execution scorer, checked field by field (ParamsError names the
field: `timeout_s`, `tests[2].call`, ...)."""

from __future__ import annotations

import ast
import keyword
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from assay.scorers.base import ParamsError
from assay.scorers.param_fields import Field, params_schema, read_fields

MAX_TESTS = 100
# The languages the sandbox really runs, with the fence labels that mark their code in an
# answer. Another language needs its compiler or runtime inside the sandbox (bubblewrap's
# read-only system, seccomp, Landlock, rlimits) and a harness of its own: until then
# params naming one are refused, listing these.
FENCES: dict[str, tuple[str, ...]] = {"python": ("python", "python3", "py")}
LANGUAGES = tuple(FENCES)
SCALARS = (
    Field("language", "choice", "The language the code must be in; an answer whose code is "
          "in another language scores 0", default="python", choices=LANGUAGES),
    Field("must_compile", "boolean", "The code must compile: checked in the sandbox before "
          "any test; code that does not compile scores 0 with the compiler's message and no "
          "test runs. Without tests (here or in the case) the scorer is then a compile check",
          default=False),
    Field("entrypoint", "string", "A function the code must define (checked before calls)"),
    Field("timeout_s", "number", "Seconds per test, of wall clock and (rounded up) of CPU",
          default=5.0, minimum=0.1, maximum=30),
    Field("memory_mb", "integer", "Address space of the code, in MB", default=256,
          minimum=32, maximum=1024),
)
NAMES = ("language", "must_compile", "tests", "entrypoint", "timeout_s", "memory_mb")
CALL_FIELDS = frozenset({"call", "expected"})
PROGRAM_FIELDS = frozenset({"stdin", "expected_stdout"})
TEST_SCHEMA = {"oneOf": [
    {"type": "object", "description": "Call a function; compare its value as JSON",
     "properties": {"call": {"type": "string", "minLength": 1}, "expected": {}},
     "required": ["call", "expected"], "additionalProperties": False},
    {"type": "object", "description": "Run the code as a program; compare its stdout",
     "properties": {"stdin": {"type": "string"}, "expected_stdout": {"type": "string"}},
     "required": ["expected_stdout"], "additionalProperties": False},
]}


@dataclass(frozen=True)
class CallTest:
    call: str  # a Python expression evaluated in the code's namespace
    expected: Any  # a JSON value


@dataclass(frozen=True)
class ProgramTest:
    stdin: str
    expected_stdout: str


@dataclass(frozen=True)
class CodeParams:
    tests: tuple[CallTest | ProgramTest, ...] | None  # None: each case's expected.tests
    entrypoint: str | None
    timeout_s: float
    memory_mb: int
    language: str = "python"
    must_compile: bool = False


def schema(description: str) -> dict[str, Any]:
    """The JSON Schema of the kind's parameters (what the API shows the scorer editor)."""
    result = params_schema(SCALARS, description)
    result["properties"]["tests"] = {
        "type": "array", "items": TEST_SCHEMA, "minItems": 1, "maxItems": MAX_TESTS,
        "description": "Test cases; without them, each case's expected.tests"}
    return result


def parse_params(params: Any) -> CodeParams:
    if not isinstance(params, Mapping):
        raise ParamsError({"params": ["must be an object"]})
    errors: dict[str, list[str]] = {
        str(name): [f"Unknown field; this kind takes: {', '.join(NAMES)}"]
        for name in params if name not in NAMES}
    language = params.get("language")
    scalars = {k: v for k, v in params.items() if k in NAMES and k != "tests"}
    if language is not None and language not in LANGUAGES:
        scalars.pop("language")
        what = f"{language!r} cannot run in Assay's code sandbox" if isinstance(
            language, str) else "Must be the name of one language"
        errors["language"] = [f"{what}; supported languages: {', '.join(LANGUAGES)}"]
    values: dict[str, Any] = {}
    try:
        values = read_fields(SCALARS, scalars)
    except ParamsError as exc:
        errors.update(exc.errors)
    entrypoint = params.get("entrypoint")
    if isinstance(entrypoint, str) and entrypoint.strip() and not (
            entrypoint.isidentifier() and not keyword.iskeyword(entrypoint)):
        errors["entrypoint"] = ["Must be the name of a Python function"]
    tests = None
    if params.get("tests") is not None:
        try:
            tests = parse_tests(params["tests"], "tests")
        except ParamsError as exc:
            errors.update(exc.errors)
    if errors:
        raise ParamsError(errors)
    return CodeParams(tests, values["entrypoint"], float(values["timeout_s"]),
                      values["memory_mb"], values["language"], values["must_compile"])


def parse_tests(raw: Any, where: str) -> tuple[CallTest | ProgramTest, ...]:
    """The test cases in `raw`, or ParamsError with paths under `where`."""
    if not isinstance(raw, list) or not raw:
        raise ParamsError({where: ["Must be a non-empty list of test cases"]})
    if len(raw) > MAX_TESTS:
        raise ParamsError({where: [f"At most {MAX_TESTS} test cases"]})
    errors: dict[str, list[str]] = {}
    tests: list[CallTest | ProgramTest] = []
    for index, item in enumerate(raw):
        test = _parse_test(item, f"{where}[{index}]", errors)
        if test is not None:
            tests.append(test)
    if errors:
        raise ParamsError(errors)
    return tuple(tests)


def _parse_test(item: Any, where: str,
                errors: dict[str, list[str]]) -> CallTest | ProgramTest | None:
    shape = ('Must be {"call": "f(1)", "expected": <JSON value>} or '
             '{"stdin": "...", "expected_stdout": "..."}')
    if not isinstance(item, Mapping):
        errors[where] = [shape]
        return None
    keys = set(item)
    if "call" in keys and keys <= CALL_FIELDS:
        call = item["call"]
        if "expected" not in keys:
            errors[f"{where}.expected"] = ["Missing: the value the call must return"]
        elif not isinstance(call, str) or not _is_expression(call):
            errors[f"{where}.call"] = ["Must be a Python expression, such as f(1, 2)"]
        else:
            return CallTest(call, item["expected"])
        return None
    if "expected_stdout" in keys and keys <= PROGRAM_FIELDS:
        stdin, expected = item.get("stdin", ""), item["expected_stdout"]
        if not isinstance(stdin, str):
            errors[f"{where}.stdin"] = ["Must be text"]
        elif not isinstance(expected, str):
            errors[f"{where}.expected_stdout"] = ["Must be text"]
        else:
            return ProgramTest(stdin, expected)
        return None
    errors[where] = [shape]
    return None


def _is_expression(text: str) -> bool:
    try:
        ast.parse(text, mode="eval")
    except (SyntaxError, ValueError):
        return False
    return True
