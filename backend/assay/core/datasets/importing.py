"""Import of cases from CSV (a header row) or JSONL: parse, preview, map columns, validate
every row, then write one new version in one transaction (bulk inserts).

Limits: 10 MB of UTF-8 (a BOM is accepted) and 10,000 rows. Row numbers are the file's line
numbers, of the line a row starts on (a CSV header is line 1); the preview gives each row's.
Nothing is written when any row is wrong."""

from __future__ import annotations

import base64
import binascii
import csv
import io
import json
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from assay.core.auth.models import User
from assay.core.csv_cells import unescape
from assay.core.datasets import service
from assay.core.datasets.cases import DIFFICULTIES, VARIABLE, case_errors, spec_expected
from assay.core.datasets.csv_columns import metadata_of, tags_of
from assay.core.datasets.models import Case, Dataset, DatasetVersion, VersionCase
from assay.core.errors import DomainError, Invalid
from assay.core.projects.models import Project

MAX_BYTES = 10_000_000
MAX_ROWS = 10_000
PREVIEW_ROWS = 10
FORMATS = ("csv", "jsonl")
EXTENSIONS = {".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl"}
MAX_ERRORS = 200  # per-row errors reported at most; the count says how many there were


class TooLarge(DomainError):
    status, code = 413, "PAYLOAD_TOO_LARGE"


@dataclass
class Table:
    format: str
    columns: list[str]
    rows: list[tuple[int, dict[str, Any]]] = field(default_factory=list)  # (line, row)


def format_of(filename: str) -> str | None:
    """The format a file's name says, if it says one."""
    return next((f for ext, f in EXTENSIONS.items() if filename.lower().endswith(ext)), None)


def _refuse(message: str, field_name: str = "content") -> Invalid:
    return Invalid(message, {"json": {field_name: [message]}})


def decode(content: str, is_base64: bool) -> str:
    """The file's text from a JSON body: base64 content is the raw bytes."""
    if is_base64:
        try:
            raw = base64.b64decode(content, validate=True)
        except (binascii.Error, ValueError) as error:
            raise _refuse("content is not valid base64") from error
        return read_bytes(raw)
    if len(content) > MAX_BYTES or len(content.encode("utf-8", "surrogatepass")) > MAX_BYTES:
        raise TooLarge(f"The file is larger than {MAX_BYTES // 1_000_000} MB")
    return _text_only(content.removeprefix("\ufeff"))


def read_bytes(raw: bytes) -> str:
    """The text of a file's bytes, which must be UTF-8 (a BOM is fine)."""
    if len(raw) > MAX_BYTES:
        raise TooLarge(f"The file is larger than {MAX_BYTES // 1_000_000} MB")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise _refuse(f"The file is not UTF-8 text (byte {error.start} cannot be read); "
                      "save it as UTF-8 and try again") from error
    return _text_only(text)


def _text_only(text: str) -> str:
    if "\x00" in text:
        raise _refuse("The file contains NUL characters; it is not a text file")
    return text


def _too_many(count: int) -> Invalid:
    return _refuse(f"The file has more than {MAX_ROWS} rows ({count} read so far); split it")


def parse(format: str, text: str) -> Table:
    if not text.strip():
        raise _refuse("The file is empty")
    return _parse_csv(text) if format == "csv" else _parse_jsonl(text)


def _parse_csv(text: str) -> Table:
    # cells an export marked as text (core/csv_cells) read back as they were written
    raw = csv.reader(io.StringIO(text, newline=""), strict=True)
    reader = ([unescape(cell) for cell in cells] for cells in raw)
    try:
        header = next(reader)
        columns = [name.strip() for name in header]
        if not columns or any(not name for name in columns):
            blank = next((i + 1 for i, name in enumerate(columns) if not name), 1)
            raise _refuse(f"The header row is missing or column {blank} has no name; the "
                          "first line must name every column")
        seen: set[str] = set()
        duplicates = [c for c in columns if c in seen or seen.add(c)]  # type: ignore[func-returns-value]
        if duplicates:
            raise _refuse(f"Duplicate column name(s) in the header: {', '.join(duplicates)}")
        table = Table("csv", columns)
        errors: list[dict[str, Any]] = []
        start = raw.line_num + 1
        for cells in reader:
            # a row is numbered by the line it starts on (a quoted cell may span lines)
            line, start = start, raw.line_num + 1
            if not any(cells):  # a blank line; a cell of spaces is a value
                continue
            if len(table.rows) >= MAX_ROWS:
                raise _too_many(len(table.rows) + 1)
            if len(cells) != len(columns):
                errors.append({"row": line, "field": None, "reason":
                               f"has {len(cells)} cells for {len(columns)} columns"})
                continue
            table.rows.append((line, dict(zip(columns, cells, strict=True))))
    except csv.Error as error:
        raise _refuse(f"The CSV cannot be read at line {raw.line_num}: {error}") from error
    if errors:
        raise row_errors(errors)
    if not table.rows:
        raise _refuse("The file has a header but no rows")
    return table


def _parse_jsonl(text: str) -> Table:
    table = Table("jsonl", [])
    known: dict[str, None] = {}
    errors: list[dict[str, Any]] = []
    # lines end at LF only: JSON text may hold U+2028 and other breaks splitlines() knows
    for line, raw in enumerate(text.split("\n"), start=1):
        if not raw.strip():
            continue
        if len(table.rows) >= MAX_ROWS:
            raise _too_many(len(table.rows) + 1)
        try:
            row = json.loads(raw)
        except (ValueError, RecursionError) as error:
            errors.append({"row": line, "field": None, "reason": f"not valid JSON: {error}"})
            continue
        if not isinstance(row, dict):
            errors.append({"row": line, "field": None, "reason": "must be a JSON object"})
            continue
        known.update(dict.fromkeys(row))
        table.rows.append((line, row))
    if errors:
        raise row_errors(errors)
    if not table.rows:
        raise _refuse("The file has no rows")
    table.columns = list(known)
    return table


def row_errors(errors: list[dict[str, Any]]) -> Invalid:
    shown = errors[:MAX_ERRORS]
    more = f" (the first {MAX_ERRORS} are listed)" if len(errors) > MAX_ERRORS else ""
    return Invalid(f"{len(errors)} row error(s); nothing was imported{more}",
                   {"rows": shown, "row_error_count": len(errors)})


def preview(format: str, text: str) -> dict[str, Any]:
    table = parse(format, text)
    shown = table.rows[:PREVIEW_ROWS]
    # the numbers row errors use (file lines), so the preview and the errors agree
    return {"format": format, "columns": table.columns, "total_rows": len(table.rows),
            "rows": [row for _, row in shown], "row_numbers": [line for line, _ in shown]}


def known_variables(session: Session, dataset: Dataset) -> set[str] | None:
    """Variables the dataset's cases use (None: any name goes, the dataset has no cases)."""
    if dataset.kind == "questions":
        return {"question"}
    if dataset.kind != "cases":
        return None
    version = service.latest_version(session, dataset.id)
    first = session.scalar(select(Case.input).join(VersionCase, VersionCase.case_id == Case.id)
                           .where(VersionCase.version_id == version.id).limit(1))
    return set(first) if isinstance(first, dict) and first else None


def check_mapping(session: Session, dataset: Dataset, table: Table,
                  mapping: dict[str, Any] | None) -> None:
    errors: dict[str, list[str]] = {}
    if mapping is None:
        native = "input" in table.columns or "trace" in table.columns
        if table.format == "csv" or not native:
            errors["mapping"] = ["A mapping of columns to variables is needed (JSONL rows "
                                 "without one must be {\"input\": ..., \"expected\": ...})"]
        elif dataset.kind not in ("questions", "cases", "conversations", "traces"):
            errors["mapping"] = ["Unknown dataset kind"]
    else:
        if dataset.kind not in ("questions", "cases"):
            errors["mapping"] = [f"{dataset.kind} datasets import JSONL rows in the "
                                 "{\"input\", \"expected\"} format, without a mapping"]
        columns = set(table.columns)
        variables = mapping.get("variables") or {}
        if not variables:
            errors.setdefault("mapping.variables", []).append("Map at least one column")
        known = known_variables(session, dataset)
        for column, variable in variables.items():
            if column not in columns:
                errors.setdefault("mapping.variables", []).append(
                    f"Unknown column '{column}'")
            if not VARIABLE.match(variable) or (known is not None and variable not in known):
                allowed = f" (known: {', '.join(sorted(known))})" if known else ""
                errors.setdefault("mapping.variables", []).append(
                    f"Unknown variable '{variable}'{allowed}")
        for key in ("expected", "tags", "difficulty", "metadata"):
            column = mapping.get(key)
            if column is not None and column not in columns:
                errors.setdefault(f"mapping.{key}", []).append(f"Unknown column '{column}'")
    if errors:
        raise Invalid("The mapping does not fit the file", {"json": errors})


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool | int | float):
        return json.dumps(value)
    raise ValueError("must be text, a number or a boolean")


def _mapped(kind: str, row: dict[str, Any], mapping: dict[str, Any]) -> dict[str, Any]:
    case: dict[str, Any] = {"input": {var: _text(row.get(col))
                                      for col, var in mapping["variables"].items()}}
    if (col := mapping.get("expected")) is not None and (value := _text(row.get(col))):
        case["expected"] = {"answer" if kind == "questions" else "output": value}
    if (col := mapping.get("tags")) is not None:
        raw = row.get(col)
        case["tags"] = raw if isinstance(raw, list) else tags_of(_text(raw))
    if (col := mapping.get("difficulty")) is not None:
        value = _text(row.get(col)).strip().lower()
        case["difficulty"] = value or None
    if (col := mapping.get("metadata")) is not None:
        raw = row.get(col)
        case["metadata"] = raw if isinstance(raw, dict) else metadata_of(_text(raw))
    return case


EDISON_KEYS = {"input", "expected", "trace", "tags", "difficulty", "metadata"}


def _native(kind: str, row: dict[str, Any]) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    problems = [(key, "unknown key") for key in row if key not in EDISON_KEYS]
    case = spec_expected(kind, {key: row[key] for key in EDISON_KEYS if key in row})
    if case.get("tags") is None:
        case.pop("tags", None)
    return case, problems


def build_cases(kind: str, table: Table,
                mapping: dict[str, Any] | None) -> list[dict[str, Any]]:
    """Every row as a case, or one 422 listing each bad row, field and reason."""
    cases: list[dict[str, Any]] = []
    errors: list[dict[str, Any]] = []
    for line, row in table.rows:
        problems: list[tuple[str | None, str]] = []
        if mapping is None:
            case, unknown = _native(kind, row)
            problems.extend(unknown)
        else:
            try:
                case = _mapped(kind, row, mapping)
            except ValueError as error:
                problems.append((None, str(error)))
                case = {}
        if not problems:
            for name, reasons in case_errors(kind, case).items():
                problems.extend((name, reason) for reason in reasons)
        if problems:
            errors.extend({"row": line, "field": name, "reason": reason}
                          for name, reason in problems)
        else:
            cases.append(case)
    if errors:
        raise row_errors(errors)
    return cases


def import_cases(session: Session, actor: User, project: Project, dataset: Dataset,
                 format: str, text: str, mapping: dict[str, Any] | None,
                 note: str | None) -> DatasetVersion:
    table = parse(format, text)
    check_mapping(session, dataset, table, mapping)
    cases = build_cases(dataset.kind, table, mapping)
    version, _ = service.add_cases(session, actor, project, dataset, cases,
                                   note or f"Imported {len(cases)} rows ({format})",
                                   "dataset.imported")
    return version


__all__ = ["DIFFICULTIES", "FORMATS", "MAX_BYTES", "MAX_ROWS", "TooLarge", "decode",
           "import_cases", "preview", "read_bytes"]
