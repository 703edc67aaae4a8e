"""Export of one version, produced piece by piece so the API streams it: CSV (questions and
cases datasets: one column per variable, then expected, tags, difficulty, metadata) or
JSONL in the import's {"input", "expected", ...} format.

Either imports back to the same cases: JSONL without a mapping, exactly; CSV with the
mapping {variables: {v: v}, expected, tags, difficulty, metadata} (each column by its own
name), exactly for cases that share their variables and whose expected is null or one
non-empty text (a CSV cell cannot tell a missing variable or an empty expected from "").
Cells a spreadsheet would run as formulas are marked as text (core/csv_cells), which the
import takes off again."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from assay.core import csv_cells
from assay.core.datasets import service
from assay.core.datasets.csv_columns import metadata_cell, tags_cell
from assay.core.datasets.models import Case, Dataset, DatasetVersion, VersionCase
from assay.core.errors import Invalid

CSV_KINDS = ("questions", "cases")
FORMATS = {"csv": "text/csv; charset=utf-8", "jsonl": "application/x-ndjson; charset=utf-8"}
CSV_COLUMNS = ("expected", "tags", "difficulty", "metadata")
BATCH = 500


def check(dataset: Dataset, format: str) -> None:
    if format == "csv" and dataset.kind not in CSV_KINDS:
        raise Invalid(f"{dataset.kind} datasets export as JSONL only",
                      {"query": {"format": ["Use jsonl for this kind"]}})


def filename(dataset: Dataset, version: DatasetVersion, format: str) -> str:
    safe = "".join(c if c.isalnum() or c in "-_" else "-" for c in dataset.name)[:60]
    return f"{safe}-v{version.number}.{format}"


def _batches(session: Session, version_id: int) -> Iterator[list[Case]]:
    """The version's cases in order, BATCH at a time (keyset on the position)."""
    after = -1
    while True:
        rows = session.execute(
            select(Case, VersionCase.position).join(VersionCase, VersionCase.case_id == Case.id)
            .where(VersionCase.version_id == version_id, VersionCase.position > after)
            .order_by(VersionCase.position).limit(BATCH)).all()
        if not rows:
            return
        cases = [case for case, _ in rows]
        yield cases
        after = rows[-1][1]
        for case in cases:  # what was written is not kept in memory
            session.expunge(case)


def _variables(session: Session, version_id: int) -> list[str]:
    """Every input variable of the version, in the order they first appear."""
    found: dict[str, None] = {}
    inputs = session.execute(
        select(Case.input).join(VersionCase, VersionCase.case_id == Case.id)
        .where(VersionCase.version_id == version_id).order_by(VersionCase.position)
        .execution_options(yield_per=BATCH)).scalars()
    for data in inputs:
        found.update(dict.fromkeys(data or {}))
    return list(found)


def _expected_text(case: Case) -> str:
    expected = case.expected or {}
    value = expected.get("answer", expected.get("output", ""))
    return value if isinstance(value, str) else json.dumps(value)


def _csv_rows(cases: list[Case], variables: list[str]) -> Iterator[list[str]]:
    for case in cases:
        data = case.input or {}
        yield [*(str(data.get(v, "")) for v in variables), _expected_text(case),
               tags_cell(list(case.tags or [])), case.difficulty or "", metadata_cell(case.meta)]


def _csv(session: Session, version: DatasetVersion) -> Iterator[str]:
    variables = _variables(session, version.id)
    buffer = io.StringIO(newline="")
    writer = csv_cells.writer(buffer)
    writer.writerow([csv_cells.escape(c) for c in (*variables, *CSV_COLUMNS)])
    for cases in _batches(session, version.id):
        writer.writerows([csv_cells.escape(c) for c in row]
                         for row in _csv_rows(cases, variables))
        yield buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()
    if buffer.tell():
        yield buffer.getvalue()


def _jsonl(session: Session, version: DatasetVersion) -> Iterator[str]:
    for cases in _batches(session, version.id):
        lines = []
        for case in cases:
            row: dict[str, Any] = service.case_dict(case)
            if row["trace"] is None:
                del row["trace"]
            lines.append(json.dumps(row, ensure_ascii=False) + "\n")
        yield "".join(lines)


def export(session: Session, dataset: Dataset, version: DatasetVersion,
           format: str) -> Iterator[str]:
    """The file's text in pieces; a CSV of a kind CSV cannot hold is refused up front."""
    check(dataset, format)
    return _jsonl(session, version) if format == "jsonl" else _csv(session, version)
