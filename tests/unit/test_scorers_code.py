"""The code_execution scorer: tests pass and fail with details, and the sandbox holds."""

from __future__ import annotations

import asyncio
import json
import os
import socket
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest

from assay.scorers import code as code_module
from assay.scorers import sandbox
from assay.scorers.base import Context, ParamsError, ScoreResult, Subject
from assay.scorers.code import SCORERS, CodeExecutionScorer, extract_code, json_equal
from assay.scorers.sandbox import SandboxResult

ADD_TESTS = [{"call": "add(1, 2)", "expected": 3}, {"call": "add(2, 2)", "expected": 4},
             {"call": "add(3, 3)", "expected": 6}]


def score(params: Mapping[str, Any], output: str | None, *, enabled: bool = True,
          expected: Mapping[str, Any] | None = None) -> ScoreResult:
    scorer = CodeExecutionScorer(params)
    results = asyncio.run(scorer.score(Subject(output=output, expected=expected),
                                       Context(code_execution=enabled)))
    assert len(results) == 1
    return results[0]


def call_one(body: str, **params: Any) -> dict[str, Any]:
    """The details of a single call test `f()` against code `body`."""
    result = score({"tests": [{"call": "f()", "expected": None}], **params}, body)
    detail: dict[str, Any] = result.details["tests"][0]
    return detail


def test_the_kind_is_exported() -> None:
    assert SCORERS["code_execution"] is CodeExecutionScorer
    assert CodeExecutionScorer.kind == "code_execution"
    assert CodeExecutionScorer({"tests": ADD_TESTS}).judges == ()


def test_correct_code_passes() -> None:
    output = ("Here you go:\n```python\ndef add(a, b):\n    return a + b\n```\n"
              "It adds.")
    result = score({"tests": ADD_TESTS, "entrypoint": "add"}, output)
    assert (result.value, result.passed, result.error) == (1.0, True, None)
    assert result.rationale == "all 3 tests passed"
    tests = result.details["tests"]
    assert [t["actual"] for t in tests] == [3, 4, 6]
    assert all(t["passed"] and t["error"] is None and not t["timed_out"] for t in tests)


def test_wrong_answers_fail_with_details() -> None:
    tests = [*ADD_TESTS, {"call": "add(0, 0)", "expected": 0}, {"call": "add(5, 0)",
                                                               "expected": 5}]
    result = score({"tests": tests}, "def add(a, b):\n    return a * b if a == 3 else a + b\n")
    assert (result.value, result.passed) == (pytest.approx(4 / 5), False)
    assert result.rationale == "1/5 tests failed: add(3, 3) returned 9, expected 6"
    failed = result.details["tests"][2]
    assert failed == failed | {"test": 3, "call": "add(3, 3)", "passed": False,
                               "expected": 6, "actual": 9, "error": None, "timed_out": False}


def test_program_style_compares_stdout() -> None:
    tests = [{"stdin": "3 4\n", "expected_stdout": "7\n"},
             {"stdin": "1 1", "expected_stdout": "2"},
             {"stdin": "2 2\n", "expected_stdout": "5\n"}]
    result = score({"tests": tests}, "a, b = map(int, input().split())\nprint(a + b, ' ')\n")
    assert result.value == pytest.approx(2 / 3)
    assert result.rationale == "1/3 tests failed: test 3 printed '4  \\n', expected '5\\n'"
    assert result.details["tests"][0] | {"stdin": "3 4\n", "actual": "7  \n", "passed": True} \
        == result.details["tests"][0]


def test_a_syntax_error_fails_every_test_after_one_run(monkeypatch: pytest.MonkeyPatch) -> None:
    runs: list[SandboxResult] = []
    real = code_module.run_sandboxed

    def counting(*args: Any, **kwargs: Any) -> SandboxResult:
        runs.append(real(*args, **kwargs))
        return runs[-1]

    monkeypatch.setattr(code_module, "run_sandboxed", counting)
    result = score({"tests": ADD_TESTS}, "def add(a, b):\n    return a +\n")
    assert (result.value, result.passed) == (0.0, False)
    assert result.rationale == "the code does not compile: SyntaxError: invalid syntax (line 2)"
    assert {t["error"] for t in result.details["tests"]} == {result.rationale}
    assert len(runs) == 1


def test_an_infinite_loop_times_out() -> None:
    result = score({"tests": ADD_TESTS[:2], "timeout_s": 0.5},
                   "def add(a, b):\n    while True:\n        pass\n")
    assert result.value == 0.0
    assert result.rationale == "2/2 tests failed: timed out on test 1; timed out on test 2"
    detail = result.details["tests"][0]
    assert detail["timed_out"] and detail["error"] == "timed out after 0.5 s"
    assert detail["duration_ms"] < 2000


def test_the_memory_limit_stops_a_hog() -> None:
    detail = call_one("def f():\n    return len(bytearray(1024 ** 3))\n", memory_mb=64)
    assert detail["error"] == "MemoryError (line 2) (the memory limit is 64 MB)"


@pytest.mark.parametrize("body", [
    "import os\ndef f():\n    return os.fork()\n",
    "import os\ndef f():\n    return os.system('true')\n",
    "import os\ndef f():\n    os.execv('/bin/true', ['true'])\n",
])
def test_starting_processes_is_refused(body: str) -> None:
    detail = call_one(body)
    assert "PermissionError: starting processes is not allowed" in detail["error"]


@pytest.mark.parametrize(("module", "refused"), [
    ("subprocess", "_posixsubprocess"), ("ctypes", "_ctypes"), ("multiprocessing.util",
                                                                "_posixsubprocess")])
def test_modules_that_start_processes_or_run_native_code_are_refused(
        module: str, refused: str) -> None:
    detail = call_one(f"import {module}\ndef f():\n    return 1\n")
    assert f"importing {refused} is not allowed" in detail["error"]


@pytest.mark.parametrize("namespace", [True, False])
def test_a_socket_connection_to_a_local_listener_is_refused(
        monkeypatch: pytest.MonkeyPatch, namespace: bool) -> None:
    if namespace and not sandbox.network_namespace_available():
        pytest.skip("no unprivileged user namespaces here")
    # Without a namespace (Docker's default seccomp profile) seccomp and the hook hold.
    monkeypatch.setattr(sandbox, "network_namespace_available", lambda: namespace)
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        result = score({"tests": [{"call": "f()", "expected": None}]}, "import socket\n"
                       "def f():\n"
                       f"    socket.create_connection(('127.0.0.1', {port}), timeout=2)\n")
        listener.setblocking(False)
        with pytest.raises(BlockingIOError):
            listener.accept()
    assert "PermissionError: network access is not allowed" in result.details["tests"][0]["error"]
    assert result.details["network_isolation"] == \
        ("seccomp, network namespace and audit hook" if namespace
         else "seccomp and audit hook")


def test_secrets_in_the_environment_are_not_visible(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_SECRET_PROBE", "probe-93af")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-probe-93af")
    detail = call_one("import os\ndef f():\n    return dict(os.environ)\n")
    assert set(detail["actual"]) == {"PATH", "HOME", "TMPDIR", "PWD", "LANG", "LC_ALL"}
    assert "probe-93af" not in json.dumps(detail)


def test_reading_files_outside_the_working_directory_is_refused(tmp_path: Path) -> None:
    secret = tmp_path / "settings.env"
    secret.write_text("SECRET_KEY=do-not-leak")
    detail = call_one(f"def f():\n    return open({str(secret)!r}).read()\n")
    assert f"PermissionError: reading {secret} is not allowed" in detail["error"]
    assert detail["actual"] is None


def test_files_in_the_working_directory_work_and_the_directory_is_removed() -> None:
    detail = call_one("import os\ndef f():\n    open('notes.txt', 'w').write('kept')\n"
                      "    return [open('notes.txt').read(), os.getcwd()]\n")
    text, cwd = detail["actual"]
    assert text == "kept"
    assert not os.path.exists(cwd)


def test_a_huge_file_is_stopped_by_the_file_size_limit() -> None:
    detail = call_one("def f():\n    open('big', 'wb').write(b'x' * (64 * 1024 * 1024))\n")
    assert detail["error"] == "OSError: [Errno 27] File too large (line 2)"


def test_errors_name_the_call_or_the_test() -> None:
    tests = [{"call": "div(1, 0)", "expected": 0}, {"call": "div(4, 2)", "expected": 2}]
    result = score({"tests": tests}, "def div(a, b):\n    return a / b\n")
    assert result.rationale == \
        "1/2 tests failed: div(1, 0) raised ZeroDivisionError: division by zero (line 2)"
    assert result.details["tests"][1]["actual"] == 2.0 and result.details["tests"][1]["passed"]
    loading = score({"tests": tests}, "import missing_module\n")
    assert loading.rationale.startswith("2/2 tests failed: test 1: ModuleNotFoundError")


def test_values_json_cannot_represent_are_errors() -> None:
    detail = call_one("def f():\n    return {1, 2}\n")
    assert detail["error"].startswith("returned a set, which JSON cannot represent")


def test_crashes_and_early_exits_are_reported() -> None:
    crash = call_one("import os\ndef f():\n    os.abort()\n")
    assert crash["error"] == "the code crashed (SIGABRT)"
    early = call_one("import os\ndef f():\n    os._exit(3)\n")
    assert early["error"] == "the code exited with status 3 before finishing"
    exited = call_one("import sys\nsys.exit(2)\n")
    assert exited["error"] == "the code exited with status 2"


def test_a_program_that_ends_itself_is_judged_by_its_output() -> None:
    result = score({"tests": [{"expected_stdout": "done"}]},
                   "import os, sys\nprint('done')\nsys.stdout.flush()\nos._exit(0)\n")
    assert result.passed


def test_a_program_printing_too_much_fails() -> None:
    result = score({"tests": [{"expected_stdout": "x"}]}, "print('x' * 200_000)\n")
    assert result.details["tests"][0]["error"] == "the program printed more than 64 KiB"
    assert len(result.details["tests"][0]["actual"]) == code_module.SHOWN_CHARS + 1


def test_a_missing_entrypoint_is_reported() -> None:
    result = score({"tests": ADD_TESTS[:1], "entrypoint": "add"}, "def plus(a, b):\n    pass\n")
    assert result.details["tests"][0]["error"] == "the code defines no function 'add'"
    assert result.rationale == "1/1 tests failed: test 1: the code defines no function 'add'"


def test_the_rationale_names_five_failures_at_most() -> None:
    tests = [{"call": f"f({n})", "expected": n} for n in range(7)]
    result = score({"tests": tests}, "def f(n):\n    return -1\n")
    assert result.rationale.startswith("7/7 tests failed: f(0) returned -1, expected 0; ")
    assert result.rationale.endswith("; and 2 more")


def test_no_code_fails_without_running() -> None:
    result = score({"tests": ADD_TESTS}, "  \n")
    assert (result.value, result.rationale) == (0.0, "the output contains no code")


def counted_runs(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The harness modes of every sandbox run from now on (the real sandbox still runs)."""
    modes: list[list[str]] = []
    real = code_module.run_sandboxed

    def counting(argv: list[str], **kwargs: Any) -> SandboxResult:
        modes.append(argv[-1:])
        return real(argv, **kwargs)

    monkeypatch.setattr(code_module, "run_sandboxed", counting)
    return modes


def test_must_compile_fails_code_that_does_not_compile_before_any_test(
        monkeypatch: pytest.MonkeyPatch) -> None:
    runs = counted_runs(monkeypatch)
    result = score({"tests": ADD_TESTS, "must_compile": True},
                   "```python\ndef add(a, b):\n    return a +\n```")
    assert (result.value, result.passed, result.error) == (0.0, False, None)
    assert result.rationale == ("must_compile: the code does not compile: SyntaxError: "
                                "invalid syntax (line 2); no test was run")
    assert runs == [["compile"]]  # one sandbox run that only compiles
    details = result.details
    assert (details["must_compile"], details["compiled"], details["passed"],
            details["total"], details["tests"]) == (True, False, 0, 3, [])
    assert details["language"] == "python"


def test_must_compile_lets_compiling_code_on_to_the_tests(
        monkeypatch: pytest.MonkeyPatch) -> None:
    runs = counted_runs(monkeypatch)
    result = score({"tests": ADD_TESTS, "must_compile": True},
                   "```python\ndef add(a, b):\n    return a - b\n```")
    assert runs == [["compile"], ["call"], ["call"], ["call"]]
    assert result.details["compiled"] is True and result.details["total"] == 3
    # it compiles, and the tests still judge it: add(2, 2) == 4 fails with a - b
    assert (result.value, result.passed) == (0.0, False)
    assert "add(1, 2) returned -1, expected 3" in result.rationale
    good = score({"tests": ADD_TESTS, "must_compile": True},
                 "def add(a, b):\n    return a + b\n")
    assert (good.value, good.passed, good.details["compiled"]) == (1.0, True, True)


def test_must_compile_without_tests_is_a_compile_check() -> None:
    ok = score({"must_compile": True}, "```python\nimport sys\nprint(undefined_name)\n```")
    assert (ok.value, ok.passed, ok.rationale) == (1.0, True, "the code compiles")
    assert ok.details["total"] == 0 and ok.details["compiled"] is True  # nothing was run
    bad = score({"must_compile": True}, "def f(:\n    pass\n")
    assert (bad.value, bad.passed) == (0.0, False)
    assert bad.rationale.startswith("must_compile: the code does not compile: SyntaxError")
    # the case's own tests still count when it has them
    case = score({"must_compile": True}, "def sq(x):\n    return x * x\n",
                 expected={"tests": [{"call": "sq(3)", "expected": 9}]})
    assert (case.value, case.details["total"]) == (1.0, 1)


def test_without_must_compile_a_compile_error_still_fails_every_test() -> None:
    result = score({"tests": ADD_TESTS}, "def add(a, b):\n    return a +\n")
    assert result.details["must_compile"] is False and result.details["compiled"] is False
    assert result.value == 0.0 and len(result.details["tests"]) == 3


def test_code_in_another_language_scores_0_without_running(
        monkeypatch: pytest.MonkeyPatch) -> None:
    runs = counted_runs(monkeypatch)
    output = "In JavaScript:\n```javascript\nconst add = (a, b) => a + b;\n```\n"
    for params in ({"tests": ADD_TESTS}, {"must_compile": True}):
        result = score(params, output)
        assert (result.value, result.passed, result.error) == (0.0, False, None)
        assert result.rationale == ("the code is not python: the output's code is fenced as "
                                    "```javascript")
    assert runs == []


def test_opt_in_off_is_an_actionable_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> SandboxResult:
        raise AssertionError("the sandbox must not run")

    monkeypatch.setattr(code_module, "run_sandboxed", refuse)
    result = score({"tests": ADD_TESTS}, "def add(a, b):\n    return a + b\n", enabled=False)
    assert (result.value, result.passed) == (None, None)
    assert result.error is not None and "enable it in the project settings" in result.error


def test_a_failed_model_call_has_no_code() -> None:
    result = score({"tests": ADD_TESTS}, None)
    assert result.value is None and result.error is not None and "no code" in result.error


def test_tests_can_come_from_the_case() -> None:
    case = {"tests": [{"call": "sq(3)", "expected": 9}]}
    result = score({}, "def sq(x):\n    return x * x\n", expected=case)
    assert result.passed
    bad_case = {"tests": [{"call": "sq(", "expected": 1}]}
    bad = score({}, "def sq(x):\n    return x\n", expected=bad_case)
    assert bad.error is not None and "expected.tests[0].call" in bad.error
    none = score({}, "def sq(x):\n    return x\n", expected={"answer": 1})
    assert none.error is not None and "No test cases" in none.error
    assert "must_compile" in none.error


@pytest.mark.parametrize(("params", "field", "fragment"), [
    ({"tests": ADD_TESTS, "language": "javascript"}, "language",
     "'javascript' cannot run in Assay's code sandbox; supported languages: python"),
    ({"tests": ADD_TESTS, "language": "Python"}, "language", "supported languages: python"),
    ({"tests": ADD_TESTS, "language": ["python", "go"]}, "language",
     "Must be the name of one language; supported languages: python"),
    ({"tests": ADD_TESTS, "must_compile": "yes"}, "must_compile", "Must be true or false"),
    ({"tests": ADD_TESTS, "must_compile": 1}, "must_compile", "Must be true or false"),
    ({"tests": []}, "tests", "non-empty list"),
    ({"tests": "add(1, 2) == 3"}, "tests", "non-empty list"),
    ({"tests": [{"call": "f()", "expected": 1}] * 101}, "tests", "At most 100"),
    ({"tests": [{"input": 1, "output": 2}]}, "tests[0]", "Must be {"),
    ({"tests": ["f()"]}, "tests[0]", "Must be {"),
    ({"tests": [{"call": "f(", "expected": 1}]}, "tests[0].call", "Python expression"),
    ({"tests": [{"call": 3, "expected": 1}]}, "tests[0].call", "Python expression"),
    ({"tests": [{"call": "f()"}]}, "tests[0].expected", "Missing"),
    ({"tests": [ADD_TESTS[0], {"expected_stdout": 3}]}, "tests[1].expected_stdout", "text"),
    ({"tests": [{"stdin": 1, "expected_stdout": "1"}]}, "tests[0].stdin", "text"),
    ({"tests": ADD_TESTS, "timeout_s": 0}, "timeout_s", "at least 0.1"),
    ({"tests": ADD_TESTS, "timeout_s": 31}, "timeout_s", "at most 30"),
    ({"tests": ADD_TESTS, "timeout_s": "5"}, "timeout_s", "a number"),
    ({"tests": ADD_TESTS, "timeout_s": True}, "timeout_s", "a number"),
    ({"tests": ADD_TESTS, "timeout_s": float("nan")}, "timeout_s", "a number"),
    ({"tests": ADD_TESTS, "memory_mb": 16}, "memory_mb", "at least 32"),
    ({"tests": ADD_TESTS, "memory_mb": 2048}, "memory_mb", "at most 1024"),
    ({"tests": ADD_TESTS, "memory_mb": 256.5}, "memory_mb", "an integer"),
    ({"tests": ADD_TESTS, "entrypoint": "1add"}, "entrypoint", "name of a Python function"),
    ({"tests": ADD_TESTS, "entrypoint": "class"}, "entrypoint", "name of a Python function"),
    ({"tests": ADD_TESTS, "entrypoint": ""}, "entrypoint", "not be empty"),
    ({"tests": ADD_TESTS, "test": []}, "test",
     "Unknown field; this kind takes: language, must_compile, tests"),
])
def test_bad_params_name_the_field(params: dict[str, Any], field: str, fragment: str) -> None:
    with pytest.raises(ParamsError) as info:
        CodeExecutionScorer(params)
    assert list(info.value.errors) == [field]
    assert fragment in info.value.errors[field][0]


def test_every_bad_field_is_named_at_once() -> None:
    with pytest.raises(ParamsError) as info:
        CodeExecutionScorer({"tests": [{"call": "f("}], "memory_mb": 1, "entrypoint": "a b"})
    assert set(info.value.errors) == {"tests[0].expected", "memory_mb", "entrypoint"}
    with pytest.raises(ParamsError, match="must be an object"):
        CodeExecutionScorer([])  # type: ignore[arg-type]


def test_good_params_take_defaults() -> None:
    params = CodeExecutionScorer({"tests": ADD_TESTS, "timeout_s": None}).params
    assert (params.timeout_s, params.memory_mb, params.entrypoint) == (5.0, 256, None)
    assert CodeExecutionScorer({"tests": ADD_TESTS, "timeout_s": 30, "memory_mb": 1024,
                                "language": "python", "entrypoint": "add"}).params.timeout_s == 30


def test_params_schema_matches_what_the_scorer_accepts() -> None:
    schema = CodeExecutionScorer.params_schema
    assert jsonschema_rs.meta.is_valid(schema)
    assert schema["description"]
    validator = jsonschema_rs.validator_for(schema)
    good = {"tests": [*ADD_TESTS, {"stdin": "1", "expected_stdout": "1"}], "timeout_s": 2,
            "memory_mb": 64, "entrypoint": "add", "language": "python", "must_compile": True}
    CodeExecutionScorer(good)
    assert validator.is_valid(good)
    assert validator.is_valid({})
    for bad in ({"tests": []}, {"surprise": 1}, {"memory_mb": 2048}, {"language": "c"},
                {"must_compile": "true"},
                {"tests": [{"call": "f()", "expected": 1, "stdin": ""}]},
                {"tests": [{"call": "f()"}]}):
        assert not validator.is_valid(bad), bad
        with pytest.raises(ParamsError):
            CodeExecutionScorer(bad)


@pytest.mark.parametrize(("output", "code"), [
    ("Sure:\n```python\nx = 1\n```\nand\n```python\nx = 2\n```", "x = 1\n"),
    ("```py\nx = 1\n```", "x = 1\n"),
    ("```text\nnot code\n```\n```Python3\nx = 1\n```", "x = 1\n"),
    ("Code:\n```\nx = 1\n```", "x = 1\n"),
    ("```python\nx = 1\n", "x = 1\n"),  # an answer cut off before its closing fence
    ("x = 1\n", "x = 1\n"),
    ("Use ``` for code.\nx = 1", "Use ``` for code.\nx = 1"),
])
def test_code_is_taken_from_the_first_python_block(output: str, code: str) -> None:
    assert extract_code(output) == code


@pytest.mark.parametrize(("actual", "expected", "equal"), [
    ([1, 2], [1, 2], True),
    (1, 1.0, True),
    (0.1 + 0.2, 0.3, True),
    (0.3001, 0.3, False),
    (True, 1, False),
    (0, False, False),
    (True, True, True),
    (None, None, True),
    (None, 0, False),
    ({"a": [1, {"b": "c"}]}, {"a": [1, {"b": "c"}]}, True),
    ({"a": 1}, {"a": 1, "b": 2}, False),
    ([1, 2], [1, 2, 3], False),
    ("1", 1, False),
    (10**400, 10**400, True),
])
def test_json_equality(actual: Any, expected: Any, equal: bool) -> None:
    assert json_equal(actual, expected) is equal


def test_tuples_compare_as_lists() -> None:
    result = score({"tests": [{"call": "pair()", "expected": [1, [2, 3]]}]},
                   "def pair():\n    return (1, (2, 3))\n")
    assert result.passed
