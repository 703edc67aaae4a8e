"""Test cases of a config: inline, or from a CSV, a JSONL, or a dataset exported from an
Assay server (its JSONL: `input`, `expected`, `tags`, ...). Each case becomes
{index, id, vars, expected, tags, metadata}."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any, Protocol

CASE_KEYS = ("id", "vars", "expected", "tags", "metadata", "description")
EXPECTED_COLUMNS = ("expected", "__expected")
MAX_CASES = 100_000


class Checker(Protocol):
    def add(self, path: str, message: str) -> None: ...


def _case(check: Checker, raw: Any, index: int, where: str) -> dict[str, Any] | None:
    if not isinstance(raw, dict):
        check.add(where, f"a test case must be a mapping, got {type(raw).__name__}")
        return None
    if "input" in raw and "vars" not in raw:  # an Assay dataset export
        raw = {**{k: v for k, v in raw.items() if k != "input"}, "vars": raw["input"]}
        raw = {k: v for k, v in raw.items() if k in CASE_KEYS}
    unknown = [k for k in raw if k not in CASE_KEYS]
    for key in unknown:
        check.add(f"{where}.{key}", f"unknown field (allowed: {', '.join(CASE_KEYS)})")
    if not isinstance(raw.get("vars", {}), dict):
        check.add(f"{where}.vars", "must be a mapping of variable names to values")
        return None
    variables = dict(raw.get("vars") or {})
    tags = raw.get("tags") or []
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        check.add(f"{where}.tags", "must be a list of strings")
        tags = []
    metadata = raw.get("metadata") or {}
    if not isinstance(metadata, dict):
        check.add(f"{where}.metadata", "must be a mapping")
        metadata = {}
    for name, value in list(variables.items()):
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            check.add(f"{where}.vars.{name}", "must be text (or a number)")
        else:
            variables[name] = str(value)
    expected = raw.get("expected")
    if isinstance(expected, str | int | float) and not isinstance(expected, bool):
        expected = {"output": str(expected)}  # a plain expected answer
    elif expected is not None and (not isinstance(expected, dict)
                                   or not set(expected) <= {"output"}):
        check.add(f"{where}.expected", "must be the expected answer as text, or "
                                       "{output: text}")
        expected = None
    case_id = raw.get("id")
    return {"index": index, "id": None if case_id is None else str(case_id), "vars": variables,
            "expected": expected, "tags": tags, "metadata": metadata}


def _from_file(check: Checker, value: str, base: Path, where: str) -> list[dict[str, Any]]:
    path = (base / value) if not Path(value).is_absolute() else Path(value)
    try:
        text = path.read_text()
    except OSError as exc:
        check.add(where, f"cannot read {path}: {exc.strerror}")
        return []
    cases: list[dict[str, Any]] = []
    if path.suffix.lower() == ".csv":
        rows = list(csv.DictReader(text.splitlines()))
        for n, row in enumerate(rows):
            expected = next((row.pop(c) for c in EXPECTED_COLUMNS if c in row), None)
            case = _case(check, {"vars": row, "expected": expected or None}, len(cases),
                         f"{where} ({path.name} row {n + 2})")
            if case is not None:
                cases.append(case)
    elif path.suffix.lower() in (".jsonl", ".ndjson"):
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                raw = json.loads(line)
            except ValueError as exc:
                check.add(where, f"{path.name} line {n} is not JSON: {exc}")
                continue
            if isinstance(raw, dict) and not ({"vars", "input"} & set(raw)):
                raw = {"vars": raw}  # a flat line of variables
            case = _case(check, raw, len(cases), f"{where} ({path.name} line {n})")
            if case is not None:
                cases.append(case)
    else:
        check.add(where, f"{path.name}: test files are .csv or .jsonl (an Assay dataset "
                         "export is .jsonl)")
    if not cases and not text.strip():
        check.add(where, f"{path.name} holds no test cases")
    return cases


def load_tests(check: Checker, value: Any, base: Path) -> list[dict[str, Any]]:
    """`tests:` is a list of cases and/or `{file: path}` entries, or one path."""
    if value is None:
        check.add("tests", "is required (a list of cases, or a .csv / .jsonl file)")
        return []
    entries = [value] if isinstance(value, str | dict) else value
    if not isinstance(entries, list) or not entries:
        check.add("tests", "must be a non-empty list or a file path")
        return []
    cases: list[dict[str, Any]] = []
    for i, entry in enumerate(entries):
        where = "tests" if entries is not value else f"tests[{i}]"
        if isinstance(entry, str):
            found = _from_file(check, entry, base, where)
        elif isinstance(entry, dict) and set(entry) == {"file"}:
            found = _from_file(check, str(entry["file"]), base, f"{where}.file")
        else:
            case = _case(check, entry, 0, where)
            found = [] if case is None else [case]
        for case in found:
            case["index"] = len(cases)
            case["id"] = case["id"] or str(len(cases) + 1)
            cases.append(case)
    if len(cases) > MAX_CASES:
        check.add("tests", f"at most {MAX_CASES} test cases, got {len(cases)}")
    return cases
