"""Code execution: the output is Python code, run against test cases in the sandbox.

Opt-in per project (`Context.code_execution`). The code is the output's first ```python
fenced block (else its first unlabelled block, else the whole output). Each test runs in
a sandbox of its own (see sandbox.py and code_harness.py):

- {"call": "f(1, 2)", "expected": <JSON value>}: the code is loaded as a module, the call
  evaluated in it, and its value compared with `expected` as JSON values (tuples equal
  lists, True never equals 1, numbers equal when they agree to 9 significant digits);
- {"stdin": "...", "expected_stdout": "..."}: the code runs as a program; its stdout
  must equal `expected_stdout` up to trailing whitespace on each line and at the end.

Tests come from the params, or, when the params give none, from the case's expected
object (`{"tests": [...]}`, same shape), so a dataset can carry a suite per case.
The score is the share of tests passed; `passed` when all pass. Code that does not
compile fails every test without running them.

Params: `language` (the code's language: "python", the one the sandbox runs; others are
refused naming the supported ones), `must_compile` (the CLI spec's mustCompile: the code
is compiled in the sandbox before any test, and code that does not compile scores 0 with
the compiler's message; with no tests anywhere the scorer is then a compile check), `tests`,
`entrypoint` (a function the code must define), `timeout_s` (per test: the wall clock, and
CPU seconds rounded up; default 5, at most 30), `memory_mb` (address space; default 256,
32 to 1024). An answer whose only code is fenced as another language (```javascript)
scores 0 with that reason, without running anything.
`details.network_isolation` says what kept the code off the network: always the
sandbox's seccomp filter (and the harness's audit hook), plus a network namespace of its
own where the host allows one. Where the operating system offers no isolation at all
(no bubblewrap, no Landlock) the scorer fails with that reason instead of running code.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any, ClassVar

from assay.scorers.base import Context, ParamsError, ScoreResult, Subject
from assay.scorers.code_params import (
    FENCES,
    CallTest,
    CodeParams,
    ProgramTest,
    parse_params,
    parse_tests,
    schema,
)
from assay.scorers.sandbox import (
    Limits,
    SandboxError,
    SandboxResult,
    run_sandboxed,
    sandbox_python,
)

OPT_IN_ERROR = ("Code execution is disabled for this project: enable it in the project "
                "settings to run the code_execution scorer.")
SHOWN_CHARS = 2000  # of an actual value or output kept in the details
BRIEF_CHARS = 60  # of a value quoted in the rationale
FAILURES_NAMED = 5  # failures spelled out in the rationale
REL_TOL = 1e-9
NO_CODE = "the output contains no code"
OUT_OF_TIME = "not run: the time for this scoring ran out before this test"


class CodeExecutionScorer:
    """Runs the output's Python code against test cases in a sandbox (opt-in per project):
    function calls compared as JSON values, or programs compared by their stdout."""

    kind: ClassVar[str] = "code_execution"
    params_schema: ClassVar[dict[str, Any]]

    def __init__(self, params: Mapping[str, Any]) -> None:
        self.params: CodeParams = parse_params(params)

    @property
    def judges(self) -> tuple[str, ...]:
        return ()

    async def score(self, subject: Subject, ctx: Context) -> list[ScoreResult]:
        if not ctx.code_execution:
            return [ScoreResult.failed(OPT_IN_ERROR)]
        if subject.output is None:
            return [ScoreResult.failed("The model call failed: there is no code to run.")]
        tests = self.params.tests
        if tests is None:
            case_tests = (subject.expected or {}).get("tests")
            if case_tests is None and self.params.must_compile:
                tests = ()  # a compile check only
            elif case_tests is None:
                return [ScoreResult.failed(
                    "No test cases: give the scorer `tests`, put `tests` in the case's "
                    "expected object, or set `must_compile` for a compile check only.")]
            else:
                try:
                    tests = parse_tests(case_tests, "expected.tests")
                except ParamsError as exc:
                    return [ScoreResult.failed(f"The case's tests are invalid: {exc}")]
        code, other = find_code(subject.output, self.params.language)
        if other is not None:
            return [self._not_run(tests, f"the code is not {self.params.language}: the "
                                         f"output's code is fenced as {other}")]
        if not code.strip():
            return [self._not_run(tests, NO_CODE)]
        try:
            return [await asyncio.to_thread(self._check, code, tests, ctx.deadline)]
        except SandboxError as exc:
            return [ScoreResult.failed(f"The code sandbox could not run: {exc}")]

    def _check(self, code: str, tests: Sequence[CallTest | ProgramTest],
               deadline: float | None = None) -> ScoreResult:
        """must_compile first (one sandbox run that only compiles), then the tests."""
        if self.params.must_compile:
            compiled = self._compile(code)
            if not compiled.passed:
                reason = f"must_compile: {compiled.error}; no test was run"
                return self._not_run(tests, reason, compiled)
            if not tests:
                return ScoreResult(1.0, True, rationale="the code compiles",
                                   details=self._details(True, 0, [compiled]))
        outcomes = self._run_all(code, tests, deadline)
        compiles = not any(o.stage == "compile" for o in outcomes)
        return _summarise(tests, outcomes, self._details(compiles, len(tests), outcomes))

    def _details(self, compiled: bool, total: int,
                 outcomes: Sequence[Outcome]) -> dict[str, Any]:
        """What every result of this kind carries (_summarise adds the tests run)."""
        return {"language": self.params.language, "must_compile": self.params.must_compile,
                "compiled": compiled, "passed": 0, "total": total,
                **_network_isolation(outcomes), "tests": []}

    def _not_run(self, tests: Sequence[CallTest | ProgramTest], reason: str,
                 compiled: Outcome | None = None) -> ScoreResult:
        """Score 0: the code cannot be tested (no code, another language, no compile)."""
        return ScoreResult(0.0, False, rationale=reason, details=self._details(
            False, len(tests), [compiled] if compiled else []))

    def _compile(self, code: str) -> Outcome:
        result = self._sandbox(code, "compile", {}, "")
        if result.timed_out or result.killed_by_limit == "cpu":
            return Outcome(False, None, f"compiling timed out after "
                                        f"{self.params.timeout_s:g} s", True)
        report = _report(result)
        if report is None:
            outcome = Outcome(False, None, _ended_without_result(result))
        elif report.get("error"):
            outcome = Outcome(False, None, f"the code does not compile: {report['error']}",
                              stage="compile")
        else:
            outcome = Outcome(True, None)
        return replace(outcome, duration_ms=round(result.duration_s * 1000),
                       network_namespace=result.network_namespace)

    def _run_all(self, code: str, tests: Sequence[CallTest | ProgramTest],
                 deadline: float | None = None) -> list[Outcome]:
        """Each test in turn; past the deadline the rest are not run (a thread cannot be
        cancelled, so it stops itself: 100 tests x 30 s would hold it for 50 minutes)."""
        outcomes: list[Outcome] = []
        for index, test in enumerate(tests):
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return [*outcomes, *[Outcome(False, None, OUT_OF_TIME)] * (len(tests) - index)]
            outcome = self._run_one(code, test, left)
            if outcome.stage == "compile":  # the same for every test: run no others
                return [*outcomes, *[outcome] * (len(tests) - len(outcomes))]
            outcomes.append(outcome)
        return outcomes

    def _run_one(self, code: str, test: CallTest | ProgramTest,
                 left: float | None = None) -> Outcome:
        if isinstance(test, CallTest):
            result = self._sandbox(code, "call", {"call": test.call,
                                                  "entrypoint": self.params.entrypoint}, "",
                                   left)
        else:
            result = self._sandbox(code, "program", {}, test.stdin, left)
        return _judge(test, result, self.params)

    def _sandbox(self, code: str, mode: str, request: dict[str, Any],
                 stdin: str, left: float | None = None) -> SandboxResult:
        """One run of the harness in `mode` (compile, call, program) in a sandbox, for at
        most its timeout (or the `left` seconds before a deadline)."""
        params = self.params
        wall = params.timeout_s if left is None else max(0.1, min(params.timeout_s, left))
        limits = Limits(wall_s=wall, cpu_s=math.ceil(wall), memory_mb=params.memory_mb)
        return run_sandboxed(
            [sandbox_python(), "-I", "-S", "-B", "harness.py", mode],
            files={"harness.py": _source("code_harness.py"),
                   "landlock.py": _source("landlock.py"), "solution.py": code,
                   "request.json": json.dumps(request)},
            stdin=stdin, limits=limits, collect=("result.json",))


@dataclass(frozen=True)
class Outcome:
    passed: bool
    actual: Any  # the returned value (call) or stdout (program); None when it failed
    error: str | None = None
    timed_out: bool = False
    stage: str | None = None  # where an error arose: compile, run (loading), call, value
    duration_ms: int | None = None
    network_namespace: bool | None = None  # None: the test did not run


def extract_code(output: str, language: str = "python") -> str:
    """The first block fenced as `language`, else the first block without a language, else
    all of the output."""
    return find_code(output, language)[0]


def find_code(output: str, language: str = "python") -> tuple[str, str | None]:
    """(the code, None) as extract_code finds it; or ("", the labels) when every fenced
    block of the output is labelled as something other than `language`: the answer's code
    is in another language, and running the prose around it would only blame the wrong
    thing."""
    blocks = _fenced_blocks(output)
    for wanted in (FENCES[language], ("",)):
        for label, body in blocks:
            if label in wanted:
                return body, None
    if blocks:
        return "", ", ".join(dict.fromkeys(f"```{label}" for label, _ in blocks))
    return output, None


def _fenced_blocks(text: str) -> list[tuple[str, str]]:
    """(language, body) of each fenced block; a block cut off at the end still counts."""
    blocks: list[tuple[str, str]] = []
    body: list[str] | None  # the lines of the block being read, if any
    language, body = "", None
    for line in text.splitlines(keepends=True):
        stripped = line.strip()
        if body is None:
            if stripped.startswith("```"):
                language, body = stripped[3:].strip().lower(), []
        elif stripped == "```":
            blocks.append((language, "".join(body)))
            body = None
        else:
            body.append(line)
    if body is not None:
        blocks.append((language, "".join(body)))
    return blocks


def json_equal(actual: Any, expected: Any) -> bool:
    """Equality of JSON values: bool is not a number, and floats agree to REL_TOL."""
    if isinstance(actual, bool) or isinstance(expected, bool):
        return isinstance(actual, bool) and isinstance(expected, bool) and actual == expected
    if isinstance(actual, int | float) and isinstance(expected, int | float):
        if actual == expected:
            return True
        floats = isinstance(actual, float) or isinstance(expected, float)
        return floats and math.isclose(actual, expected, rel_tol=REL_TOL, abs_tol=REL_TOL)
    if isinstance(actual, list) and isinstance(expected, list):
        return len(actual) == len(expected) and all(
            json_equal(a, e) for a, e in zip(actual, expected, strict=True))
    if isinstance(actual, dict) and isinstance(expected, dict):
        return actual.keys() == expected.keys() and all(
            json_equal(actual[key], expected[key]) for key in actual)
    return type(actual) is type(expected) and actual == expected


def same_output(actual: str, expected: str) -> bool:
    return _normalise_output(actual) == _normalise_output(expected)


def _normalise_output(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.replace("\r\n", "\n").split("\n")).rstrip()


@cache
def _source(name: str) -> str:
    """A standalone module of this package, copied into the sandbox."""
    return Path(__file__).with_name(name).read_text(encoding="utf-8")


def _judge(test: CallTest | ProgramTest, result: SandboxResult, params: CodeParams) -> Outcome:
    return replace(_verdict(test, result, params), duration_ms=round(result.duration_s * 1000),
                   network_namespace=result.network_namespace)


def _verdict(test: CallTest | ProgramTest, result: SandboxResult,
             params: CodeParams) -> Outcome:
    if result.timed_out or result.killed_by_limit == "cpu":
        return Outcome(False, None, f"timed out after {params.timeout_s:g} s", True)
    report = _report(result)
    if report is None:
        if isinstance(test, ProgramTest) and result.returncode == 0:
            report = {"ok": True}  # the program ended itself (os._exit) without an error
        else:
            return Outcome(False, None, _ended_without_result(result))
    error = report.get("error")
    if error:
        if report.get("stage") == "compile":
            error = f"the code does not compile: {error}"
        elif error.startswith("MemoryError"):
            error += f" (the memory limit is {params.memory_mb} MB)"
        return Outcome(False, None, error, stage=report.get("stage"))
    if isinstance(test, CallTest):
        value = report.get("value")
        return Outcome(json_equal(value, test.expected), value)
    if result.stdout_truncated:
        return Outcome(False, result.stdout,
                       f"the program printed more than {len(result.stdout) // 1024} KiB")
    return Outcome(same_output(result.stdout, test.expected_stdout), result.stdout)


def _report(result: SandboxResult) -> dict[str, Any] | None:
    text = result.files.get("result.json")
    if text is None:
        return None
    try:
        report = json.loads(text)
    except ValueError:
        return {"error": "the returned value is too large to compare (over "
                         f"{len(text) // 1024} KiB as JSON)"}
    return report if isinstance(report, dict) else None


def _ended_without_result(result: SandboxResult) -> str:
    if result.signal_name:
        return f"the code crashed ({result.signal_name})"
    last_line = result.stderr.strip().splitlines()[-1:] or [""]
    return f"the code exited with status {result.returncode} before finishing" + (
        f": {last_line[0][:BRIEF_CHARS * 2]}" if last_line[0] else "")


def _summarise(tests: Sequence[CallTest | ProgramTest], outcomes: Sequence[Outcome],
               details: dict[str, Any]) -> ScoreResult:
    passed = sum(outcome.passed for outcome in outcomes)
    rows = [_detail(index, test, outcome)
            for index, (test, outcome) in enumerate(zip(tests, outcomes, strict=True), 1)]
    return ScoreResult(passed / len(tests), passed == len(tests),
                       rationale=_rationale(tests, outcomes),
                       details={**details, "passed": passed, "total": len(tests),
                                "tests": rows})


def _network_isolation(outcomes: Sequence[Outcome]) -> dict[str, str]:
    """Which barriers kept the code off the network (see sandbox.py), when it ran."""
    ran = [o.network_namespace for o in outcomes if o.network_namespace is not None]
    if not ran:
        return {}
    return {"network_isolation": "seccomp, network namespace and audit hook" if all(ran)
            else "seccomp and audit hook"}


def _rationale(tests: Sequence[CallTest | ProgramTest], outcomes: Sequence[Outcome]) -> str:
    total = len(tests)
    failures = [(index, test, outcome) for index, (test, outcome)
                in enumerate(zip(tests, outcomes, strict=True), 1) if not outcome.passed]
    if not failures:
        return f"all {total} tests passed" if total > 1 else "the test passed"
    first = failures[0][2]
    if first.stage == "compile":
        return str(first.error)
    named = [_failure(index, test, outcome) for index, test, outcome
             in failures[:FAILURES_NAMED]]
    more = len(failures) - len(named)
    return (f"{len(failures)}/{total} tests failed: " + "; ".join(named)
            + (f"; and {more} more" if more else ""))


def _failure(index: int, test: CallTest | ProgramTest, outcome: Outcome) -> str:
    if outcome.timed_out:
        return f"timed out on test {index}"
    if isinstance(test, CallTest):
        if outcome.stage == "call":
            return f"{_brief(test.call)} raised {outcome.error}"
        if outcome.stage == "value":
            return f"{_brief(test.call)} {outcome.error}"
        if outcome.error:
            return f"test {index}: {outcome.error}"
        return (f"{_brief(test.call)} returned {_brief(json.dumps(outcome.actual))}, "
                f"expected {_brief(json.dumps(test.expected))}")
    if outcome.error:
        return f"test {index}: {outcome.error}"
    return (f"test {index} printed {_brief(repr(outcome.actual))}, "
            f"expected {_brief(repr(test.expected_stdout))}")


def _detail(index: int, test: CallTest | ProgramTest, outcome: Outcome) -> dict[str, Any]:
    if isinstance(test, CallTest):
        given: dict[str, Any] = {"call": test.call}
        expected: Any = test.expected
        shown = json.dumps(outcome.actual)
        actual = outcome.actual if len(shown) <= SHOWN_CHARS else shown[:SHOWN_CHARS] + "…"
    else:
        given = {"stdin": test.stdin}
        expected = test.expected_stdout
        actual = outcome.actual if outcome.actual is None or len(outcome.actual) \
            <= SHOWN_CHARS else outcome.actual[:SHOWN_CHARS] + "…"
    return {"test": index, **given, "passed": outcome.passed, "expected": expected,
            "actual": actual, "error": outcome.error, "timed_out": outcome.timed_out,
            "duration_ms": outcome.duration_ms}


def _brief(text: str) -> str:
    return text if len(text) <= BRIEF_CHARS else text[:BRIEF_CHARS - 1] + "…"


CodeExecutionScorer.params_schema = schema(inspect.getdoc(CodeExecutionScorer) or "")
SCORERS = {"code_execution": CodeExecutionScorer}
