"""A run's results as a file, produced piece by piece (generators of text) so the API
streams them: CSV (one row per output), JSON (the same, nested) and JUnit XML for CI.

A score is written on its own scale: a reviewer's 1-5 rating as "4/5" (the JSON names the
0-1 value it is stored as too, the scale of aggregates).

CSV: a cell that a spreadsheet would read as a formula is marked as text (core/csv_cells),
so opening an export never runs what a model wrote. JUnit: one testsuite per target, one
testcase per case x repeat (its turns together); a testcase fails when a scorer failed it
(the rationale is the message) or could not score it (its error is), and errs when the
call failed; skipped and unfinished cells are skipped."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator
from itertools import groupby
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from sqlalchemy import case, func, select
from sqlalchemy.orm import Session

from assay.core import csv_cells
from assay.core.errors import Invalid
from assay.core.reports.export_rows import ExportScorer, Row, rows, run_scorers
from assay.core.runs.case_numbers import case_numbers
from assay.core.runs.models import CellStatus, Output, Run
from assay.core.runs.results import targets_of
from assay.core.scoring.models import Score

FORMATS = {"csv": ("text/csv; charset=utf-8", "csv"),
           "json": ("application/json", "json"),
           "junit": ("application/xml", "xml")}
NOT_XML = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
MESSAGE_CHARS = 500


def filename(run: Run, format: str) -> str:
    safe = "".join(c if c.isalnum() or c in "-_" else "-" for c in run.name)[:60].strip("-")
    return f"run-{run.id}{'-' + safe if safe else ''}.{FORMATS[format][1]}"


def _json_text(value: Any) -> str:
    return "" if value is None else json.dumps(value, ensure_ascii=False, sort_keys=True)


def _csv_header(scorers: list[ExportScorer]) -> list[str]:
    columns = ["output_id", "case_id", "input", "expected", "target", "model", "repeat",
               "turn", "status", "text", "error_class", "tokens_in", "tokens_out",
               "cost_micros", "latency_ms"]
    for scorer in scorers:
        columns += [f"{scorer.name}: value", f"{scorer.name}: passed"]
    return columns


def _csv_row(row: Row) -> list[Any]:
    o = row.output
    values: list[Any] = [o.id, o.case_id, _json_text(row.case.input),
                         _json_text(row.case.expected), row.target.label, row.model,
                         o.repeat, o.turn, o.status, o.text, o.error_class, o.tokens_in,
                         o.tokens_out, o.cost_micros, o.latency_ms]
    for result in row.scores:
        passed = result.passed
        values += [result.shown or result.value, "" if passed is None else str(passed).lower()]
    return [csv_cells.escape(v) for v in values]


def csv_export(session: Session, run: Run) -> Iterator[str]:
    scorers = run_scorers(session, run)
    buffer = io.StringIO(newline="")
    writer = csv_cells.writer(buffer)
    writer.writerow([csv_cells.escape(c) for c in _csv_header(scorers)])
    for batch in rows(session, run, scorers):
        writer.writerows(_csv_row(row) for row in batch)
        yield buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()
    if buffer.tell():
        yield buffer.getvalue()


def _scorer_view(scorer: ExportScorer) -> dict[str, Any]:
    return {"id": scorer.id, "name": scorer.name, "kind": scorer.kind,
            "versions": list(scorer.versions)}


def output_view(row: Row) -> dict[str, Any]:
    o = row.output
    return {
        "id": o.id, "case": {"id": row.case.id, "input": row.case.input,
                             "expected": row.case.expected},
        "target": {"id": row.target.id, "label": row.target.label,
                   "model_id": row.target.model_id, "model": row.model},
        "repeat": o.repeat, "turn": o.turn, "status": o.status, "text": o.text,
        "error_class": o.error_class, "error": o.error_message, "tokens_in": o.tokens_in,
        "tokens_out": o.tokens_out, "cost_micros": o.cost_micros, "latency_ms": o.latency_ms,
        "cached": o.cached,
        "finished_at": o.finished_at.isoformat() if o.finished_at else None,
        "scores": [{"scorer_id": r.scorer.id, "scorer": r.scorer.name, "value": r.value,
                    "shown": r.shown, "passed": r.passed, "results": [
                        {"source": s.source, "version": s.version, "value": s.value,
                         "rating": s.rating, "shown": s.shown, "passed": s.passed,
                         "rationale": s.rationale, "error": s.error}
                        for s in r.results]} for r in row.scores]}


def json_export(session: Session, run: Run) -> Iterator[str]:
    """{"run": {...}, "scorers": [...], "outputs": [...]}, written as it is read."""
    scorers = run_scorers(session, run)
    head = {"id": run.id, "name": run.name, "status": run.status,
            "dataset_version_id": run.dataset_version_id,
            "created_at": run.created_at.isoformat(),
            "finished_at": run.finished_at.isoformat() if run.finished_at else None,
            # skipped cells were never sent: a cancelled run's file says so up front
            "cells": {"total": run.total, "succeeded": run.succeeded, "failed": run.failed,
                      "skipped": run.skipped}}
    yield (f'{{"run": {json.dumps(head, ensure_ascii=False)}, "scorers": '
           f'{json.dumps([_scorer_view(s) for s in scorers], ensure_ascii=False)}, '
           '"outputs": [')
    first = True
    for batch in rows(session, run, scorers):
        parts = [json.dumps(output_view(row), ensure_ascii=False) for row in batch]
        yield ("" if first else ", ") + ", ".join(parts)
        first = False
    yield "]}\n"


def _xml(text: str) -> str:
    return NOT_XML.sub("\ufffd", text)


def _attr(text: str) -> str:
    return quoteattr(_xml(text))


def _testcase(label: str, number: int, repeat: int, cells: list[Row]) -> str:
    seconds = sum(r.output.latency_ms or 0 for r in cells) / 1000
    name = f"case {number} repeat {repeat}"  # the case's number in its dataset version
    opening = f'    <testcase classname={_attr(label)} name={_attr(name)} time="{seconds:.3f}"'
    errors = [r.output for r in cells if r.output.status == CellStatus.failed]
    if errors:
        first = errors[0]
        message = first.error_message or first.error_class or "the call failed"
        return (f"{opening}>\n      <error message={_attr(message[:MESSAGE_CHARS])} "
                f"type={_attr(first.error_class or 'error')}>{escape(_xml(message))}"
                "</error>\n    </testcase>\n")
    if any(r.output.status != CellStatus.succeeded for r in cells):
        return f'{opening}>\n      <skipped message="not run"/>\n    </testcase>\n'
    failing = [(r.output.turn, result.scorer.name, score) for r in cells
               for result in r.scores for score in result.failing]
    if failing:
        _, scorer, score = failing[0]
        message = (f"{scorer} could not score it: {score.error}" if score.error is not None
                   else score.rationale or f"{scorer} failed it")
        details = "\n".join(f"turn {t}: {name} ({s.source or 'rule'}): "
                            f"{s.rationale if s.error is None else 'error: ' + s.error}"
                            for t, name, s in failing)
        return (f"{opening}>\n      <failure message={_attr(message[:MESSAGE_CHARS])} "
                f"type={_attr(scorer)}>{escape(_xml(details))}</failure>\n    </testcase>\n")
    return f"{opening}/>\n"


def _suite_counts(session: Session, run: Run, scorers: list[ExportScorer]
                  ) -> dict[int, dict[str, int]]:
    """target id -> {tests, failures, errors, skipped}, counted per testcase (case x
    repeat) the way _testcase decides, in one query."""
    versions = [v for s in scorers for v in s.version_ids]
    failing = (select(Score.output_id).where(Score.run_id == run.id,
                                             Score.passed.is_(False) | Score.error.is_not(None),
                                             Score.scorer_version_id.in_(versions))
               .distinct().subquery())
    flag = func.max
    per_case = (select(
        Output.target_id.label("target_id"),
        flag(case((Output.status == CellStatus.failed, 1), else_=0)).label("error"),
        flag(case((Output.status != CellStatus.succeeded, 1), else_=0)).label("unrun"),
        flag(case((failing.c.output_id.is_not(None), 1), else_=0)).label("failed"))
        .outerjoin(failing, failing.c.output_id == Output.id)
        .where(Output.run_id == run.id)
        .group_by(Output.target_id, Output.case_id, Output.repeat).subquery())
    error, unrun, failed = per_case.c.error, per_case.c.unrun, per_case.c.failed
    rows = session.execute(select(
        per_case.c.target_id, func.count(), func.sum(error),
        func.sum(case(((unrun == 1) & (error == 0), 1), else_=0)),
        func.sum(case(((unrun == 0) & (failed == 1), 1), else_=0)))
        .group_by(per_case.c.target_id))
    return {t: {"tests": int(n), "errors": int(e or 0), "skipped": int(sk or 0),
                "failures": int(f or 0)} for t, n, e, sk, f in rows}


def _counts_attrs(counts: dict[str, int]) -> str:
    return " ".join(f'{k}="{counts.get(k, 0)}"' for k in ("tests", "failures", "errors",
                                                          "skipped"))


def junit_export(session: Session, run: Run) -> Iterator[str]:
    """<testsuites> with one <testsuite> per target; the counts come first from one
    aggregate, the testcases then stream."""
    scorers = run_scorers(session, run)
    counts = _suite_counts(session, run, scorers)
    totals = {k: sum(c[k] for c in counts.values())
              for k in ("tests", "failures", "errors", "skipped")}
    yield ('<?xml version="1.0" encoding="UTF-8"?>\n'
           f"<testsuites name={_attr(run.name)} {_counts_attrs(totals)}>\n")
    for target in targets_of(session, run):
        yield (f"  <testsuite name={_attr(target.label)} "
               f"{_counts_attrs(counts.get(target.id, {}))}>\n")
        pending: list[Row] = []
        for batch in rows(session, run, scorers, target.id):
            pending += batch
            groups = [(k, list(g)) for k, g in groupby(
                pending, key=lambda r: (r.output.case_id, r.output.repeat))]
            pending = groups.pop()[1]  # its turns may go on in the next batch
            numbers = case_numbers(session, run.dataset_version_id, (c for (c, _), _ in groups))
            yield "".join(_testcase(target.label, numbers.get(c, 0), rep, g)
                          for (c, rep), g in groups)
        if pending:
            last = pending[0].output.case_id
            number = case_numbers(session, run.dataset_version_id, [last]).get(last, 0)
            yield _testcase(target.label, number, pending[0].output.repeat, pending)
        yield "  </testsuite>\n"
    yield "</testsuites>\n"


def export(session: Session, run: Run, format: str) -> Iterator[str]:
    if format not in FORMATS:
        raise Invalid("Unknown export format", {"query": {"format": [
            "One of: " + ", ".join(FORMATS)]}})
    return {"csv": csv_export, "json": json_export, "junit": junit_export}[format](session, run)

