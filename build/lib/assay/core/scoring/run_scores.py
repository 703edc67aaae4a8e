"""What a run's statistics read from its scores, aggregated in the database as far as that
reduces the data (the same SQL on SQLite and PostgreSQL).

An output can hold several scores of one scorer version: one per judge model, one per
reviewer. Its value is their mean over the scores that have one (failed scores, value
NULL, count for neither); it passed when every verdict it got was a pass (a panel must
agree), failed when any verdict was a fail, and has no verdict when none was given.

Outputs are then reduced to one row per (scorer version, target, case, repeat): the mean of
the repeat's outputs (the turns of a conversation), with counts. The statistics cluster by
case from there: a case's repeats and turns stay together."""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, Subquery, Text, case, cast, func, select
from sqlalchemy.orm import Session

from assay.core.runs.models import CellStatus, Output
from assay.core.scoring.models import Score


@dataclass(frozen=True)
class RepeatRow:
    """One repeat of one case for one target, by one scorer version."""

    version_id: int
    target_id: int
    case_id: int
    repeat: int
    value: float | None  # mean over the repeat's outputs with a value
    valued: int  # outputs with a value
    passes: int  # outputs that passed
    verdicts: int  # outputs with a verdict
    failed_scores: int  # score rows that failed (value NULL)
    outputs: int  # outputs with any score row


@dataclass(frozen=True)
class SourceScore:
    """One score row of one source (a judge model, a reviewer)."""

    version_id: int
    target_id: int
    output_id: int
    source: str
    value: float | None
    passed: bool | None


def per_output(run_id: int, version_ids: Sequence[int]) -> Subquery:
    """(version_id, output_id, value, passed 1/0/NULL, failed) per scored output."""
    verdict = case((Score.passed.is_(True), 1), (Score.passed.is_(False), 0))
    return (select(Score.scorer_version_id.label("version_id"),
                   Score.output_id.label("output_id"),
                   func.avg(Score.value).label("value"),
                   func.min(verdict).label("passed"),
                   (func.count() - func.count(Score.value)).label("failed"))
            .where(Score.run_id == run_id, Score.scorer_version_id.in_(list(version_ids)))
            .group_by(Score.scorer_version_id, Score.output_id)
            .subquery("per_output"))


def repeat_rows(session: Session, run_id: int, version_ids: Sequence[int],
                target_ids: Sequence[int] | None = None) -> list[RepeatRow]:
    if not version_ids:
        return []
    scored = per_output(run_id, version_ids)
    conditions: list[ColumnElement[bool]] = []
    if target_ids is not None:
        conditions.append(Output.target_id.in_(list(target_ids)))
    rows = session.execute(
        select(scored.c.version_id, Output.target_id, Output.case_id, Output.repeat,
               func.avg(scored.c.value), func.count(scored.c.value),
               func.coalesce(func.sum(scored.c.passed), 0), func.count(scored.c.passed),
               func.coalesce(func.sum(scored.c.failed), 0), func.count())
        .join(Output, Output.id == scored.c.output_id)
        .where(*conditions)
        .group_by(scored.c.version_id, Output.target_id, Output.case_id, Output.repeat)
        .order_by(scored.c.version_id, Output.target_id, Output.case_id, Output.repeat))
    return [RepeatRow(int(v), int(t), int(c), int(r), None if mean is None else float(mean),
                      int(valued), int(passes), int(verdicts), int(failed), int(outputs))
            for v, t, c, r, mean, valued, passes, verdicts, failed, outputs in rows]


def values_by_case(rows: Iterable[RepeatRow]) -> dict[int, list[float]]:
    """case -> the values of its repeats (repeats without a value left out)."""
    out: dict[int, list[float]] = {}
    for row in rows:
        if row.value is not None:
            out.setdefault(row.case_id, []).append(row.value)
    return out


def group_by(rows: Iterable[Any], *names: str) -> dict[tuple[Hashable, ...], list[Any]]:
    out: dict[tuple[Hashable, ...], list[Any]] = {}
    for row in rows:
        out.setdefault(tuple(getattr(row, name) for name in names), []).append(row)
    return out


def sources(session: Session, run_id: int,
            version_ids: Sequence[int]) -> dict[int, tuple[str, ...]]:
    """version -> the sources (judge models, "user:<id>") that gave it a value, in order;
    deterministic scores have none."""
    if not version_ids:
        return {}
    rows = session.execute(
        select(Score.scorer_version_id, Score.source)
        .where(Score.run_id == run_id, Score.scorer_version_id.in_(list(version_ids)),
               Score.value.is_not(None), Score.source != "")
        .group_by(Score.scorer_version_id, Score.source)
        .order_by(Score.scorer_version_id, Score.source))
    out: dict[int, tuple[str, ...]] = {}
    for version_id, source in rows:
        out[version_id] = (*out.get(version_id, ()), source)
    return out


def source_scores(session: Session, run_id: int,
                  version_ids: Sequence[int]) -> list[SourceScore]:
    """Every score row with a source (judges, reviewers) of the versions, one by one: the
    agreement between sources needs each of them."""
    if not version_ids:
        return []
    rows = session.execute(
        select(Score.scorer_version_id, Output.target_id, Score.output_id, Score.source,
               Score.value, Score.passed)
        .join(Output, Output.id == Score.output_id)
        .where(Score.run_id == run_id, Score.scorer_version_id.in_(list(version_ids)),
               Score.source != "")
        .order_by(Score.output_id))
    return [SourceScore(int(v), int(t), int(o), s, None if value is None else float(value),
                        None if passed is None else bool(passed))
            for v, t, o, s, value, passed in rows]


def criteria_by_output(session: Session, run_id: int, version_ids: Sequence[int]
                       ) -> dict[tuple[int, int], list[dict[str, float]]]:
    """(version, target) -> per output, each criterion's mean over the output's scores.
    Rows without criteria are filtered out in the database (the JSON text "{}"); any that
    slip through add nothing."""
    if not version_ids:
        return {}
    rows = session.execute(
        select(Score.scorer_version_id, Output.target_id, Score.output_id, Score.criteria)
        .join(Output, Output.id == Score.output_id)
        .where(Score.run_id == run_id, Score.scorer_version_id.in_(list(version_ids)),
               Score.value.is_not(None), cast(Score.criteria, Text) != "{}")
        .order_by(Score.output_id))
    merged: dict[tuple[int, int], dict[int, dict[str, list[float]]]] = {}
    for version_id, target_id, output_id, criteria in rows:
        if not isinstance(criteria, Mapping):
            continue
        values = merged.setdefault((version_id, target_id), {}).setdefault(output_id, {})
        for name, value in criteria.items():
            if isinstance(value, int | float) and not isinstance(value, bool):
                values.setdefault(str(name), []).append(float(value))
    return {key: [{name: sum(v) / len(v) for name, v in output.items()}
                  for output in outputs.values() if output]
            for key, outputs in merged.items()}


def succeeded_outputs(session: Session, run_id: int) -> dict[int, int]:
    """target -> its succeeded outputs (the ones a scorer can score)."""
    rows = session.execute(
        select(Output.target_id, func.count())
        .where(Output.run_id == run_id, Output.status == CellStatus.succeeded)
        .group_by(Output.target_id))
    return {int(target_id): int(count) for target_id, count in rows}
