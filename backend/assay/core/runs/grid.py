"""A run's results as a grid: one row per case, one column per target, a page of rows at a
time, sorted and filtered in SQL.

Rows are chosen first (a grouped query over the run's outputs, using the (run, case,
target, ...) unique index), then only that page's outputs, scores and cases are read, so a
page costs the same at 100 cells or 100,000. A row matches the cell filters when at least one
of its visible cells matches all of them together (e.g. "a failed cell of target 2 with a
timeout"); the tag filter is on the case. Sorting by a measure aggregates the row's visible
cells (or one target's, with sort_target_id): mean score, mean latency, total cost, total
tokens, failed cells; rows without a value come last, ties in dataset order.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, Select, and_, case, exists, func, literal, select, true
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Session
from sqlalchemy.sql.expression import cast

from assay.core.datasets.models import Case, VersionCase
from assay.core.errors import Invalid
from assay.core.projects.models import Project
from assay.core.runs import cache
from assay.core.runs.case_numbers import case_numbers
from assay.core.runs.models import CellStatus, Output, Run, RunTarget
from assay.core.runs.results import targets_of
from assay.core.scoring.models import Score, ScorerConfig, ScorerVersion

SORTS = ("position", "score", "latency", "cost", "tokens", "errors")
VERDICTS = ("passed", "failed", "unscored")
MAX_LIMIT = 200
TEXT_PREVIEW = 400
INPUT_PREVIEW = 300
RATIONALE_PREVIEW = 2000


@dataclass(frozen=True)
class GridQuery:
    offset: int = 0
    limit: int = 50
    sort: str = "position"
    descending: bool = False
    target_ids: tuple[int, ...] = ()  # visible columns; () = every target
    sort_target_id: int | None = None
    scorer_id: int | None = None  # the scores that score filters and sorting look at
    score_min: float | None = None
    score_max: float | None = None
    verdict: str | None = None
    status: str | None = None
    error_class: str | None = None
    tag: str | None = None


def _bad(name: str, message: str) -> Invalid:
    return Invalid("Bad grid query", {"query": {name: [message]}})


def _check(session: Session, project: Project, run: Run, query: GridQuery
           ) -> tuple[list[RunTarget], list[int]]:
    """The visible targets and the scorer's version ids; 422 naming the argument for a
    target of another run, a scorer of another project, an empty or reversed score range."""
    if query.sort not in SORTS:
        raise _bad("sort", f"One of {', '.join(SORTS)}")
    if query.verdict is not None and query.verdict not in VERDICTS:
        raise _bad("verdict", f"One of {', '.join(VERDICTS)}")
    if (query.score_min is not None and query.score_max is not None
            and query.score_min > query.score_max):
        raise _bad("score_min", "Not above score_max")
    targets = targets_of(session, run)
    known = {t.id for t in targets}
    unknown = [t for t in query.target_ids if t not in known]
    if unknown:
        raise _bad("target_ids", f"Not targets of this run: {', '.join(map(str, unknown))}")
    if query.sort_target_id is not None and query.sort_target_id not in known:
        raise _bad("sort_target_id", "Not a target of this run")
    if query.target_ids:
        wanted = set(query.target_ids)
        targets = [t for t in targets if t.id in wanted]
    versions: list[int] = []
    if query.scorer_id is not None:
        found = session.scalar(select(ScorerConfig.id).where(
            ScorerConfig.id == query.scorer_id, ScorerConfig.project_id == project.id))
        if found is None:
            raise _bad("scorer_id", "Not a scorer of this project")
        versions = list(session.scalars(select(ScorerVersion.id).where(
            ScorerVersion.scorer_id == query.scorer_id)))
    return targets, versions


def _score_conditions(query: GridQuery, versions: Sequence[int]) -> list[ColumnElement[bool]]:
    where: list[ColumnElement[bool]] = [Score.output_id == Output.id]
    if query.scorer_id is not None:
        where.append(Score.scorer_version_id.in_(versions))
    return where


def _cell_conditions(query: GridQuery, versions: Sequence[int]) -> list[ColumnElement[bool]]:
    where: list[ColumnElement[bool]] = []
    if query.status is not None:
        where.append(Output.status == query.status)
    if query.error_class is not None:
        where.append(Output.error_class == query.error_class)
    scored = _score_conditions(query, versions)
    if query.score_min is not None or query.score_max is not None:
        ranged = [*scored, Score.value.is_not(None)]
        if query.score_min is not None:
            ranged.append(Score.value >= query.score_min)
        if query.score_max is not None:
            ranged.append(Score.value <= query.score_max)
        where.append(exists().where(*ranged))
    if query.verdict == "passed":
        where.append(exists().where(*scored, Score.passed.is_(True)))
    elif query.verdict == "failed":
        where.append(exists().where(*scored, Score.passed.is_(False)))
    elif query.verdict == "unscored":
        where.append(~exists().where(*scored))
    return where


def _tag_condition(session: Session, tag: str) -> ColumnElement[bool]:
    """The case (joined as Case) carries the tag: JSON containment on PostgreSQL, json_each
    on SQLite."""
    if session.get_bind().dialect.name == "postgresql":
        return cast(Case.tags, JSONB).contains(cast(literal(json.dumps([tag])), JSONB))
    each = func.json_each(Case.tags).table_valued("value")
    return exists().select_from(each).where(each.c.value == tag)


def _measure(query: GridQuery) -> ColumnElement[Any] | None:
    if query.sort == "score":
        return func.avg(Score.value)
    if query.sort == "latency":
        return func.avg(Output.latency_ms)
    if query.sort == "cost":
        return func.sum(Output.cost_micros)
    if query.sort == "tokens":
        return func.sum(func.coalesce(Output.tokens_in, 0) + func.coalesce(Output.tokens_out, 0))
    if query.sort == "errors":
        return func.sum(case((Output.status == CellStatus.failed, 1), else_=0))
    return None


def _version_rows(session: Session, run: Run, query: GridQuery
                  ) -> tuple[int, list[tuple[int, int]]]:
    """The unfiltered grid in dataset order: a run plans every case of its version for every
    target, so the rows are the version's cases, read from (version, position, case) alone
    instead of a DISTINCT over the run's outputs (300 ms at 1M outputs)."""
    of_version = VersionCase.version_id == run.dataset_version_id
    total = session.scalar(select(func.count()).select_from(VersionCase).where(of_version)) or 0
    if query.offset and query.offset >= total:
        raise _bad("offset", f"Beyond the last row ({total} rows match)")
    position = VersionCase.position.desc() if query.descending else VersionCase.position
    rows = session.execute(select(VersionCase.case_id, VersionCase.position).where(of_version)
                           .order_by(position, VersionCase.case_id)
                           .limit(query.limit).offset(query.offset)).all()
    return total, [(int(r[0]), int(r[1])) for r in rows]


def _in_view(run: Run, query: GridQuery, visible: Sequence[int]) -> list[ColumnElement[bool]]:
    in_view = [Output.run_id == run.id]
    if query.target_ids:
        in_view.append(Output.target_id.in_(visible))
    return in_view


def _tagged(session: Session, query: GridQuery, cells: Select[Any]) -> Select[Any]:
    """`cells` (of Output) of the cases carrying the query's tag, when it has one."""
    if query.tag is None:
        return cells
    return cells.join(Case, Case.id == Output.case_id).where(_tag_condition(session, query.tag))


def _matching(session: Session, run: Run, query: GridQuery, visible: Sequence[int],
              conditions: Sequence[ColumnElement[bool]]) -> Select[Any]:
    """The distinct cases with a visible cell matching `conditions` (and the tag)."""
    return _tagged(session, query, select(Output.case_id).where(
        *_in_view(run, query, visible), *conditions)).distinct()


def _page_rows(session: Session, run: Run, query: GridQuery, visible: Sequence[int],
               versions: Sequence[int]) -> tuple[int, list[tuple[int, int]]]:
    """(rows matching, [(case id, position)] of the page in order)."""
    conditions = _cell_conditions(query, versions)
    if not conditions and query.tag is None and _measure(query) is None:
        return _version_rows(session, run, query)
    in_view = _in_view(run, query, visible)
    matching = _matching(session, run, query, visible, conditions)
    total = _total(session, run, query, matching,
                   filtered=bool(conditions) or query.tag is not None)
    if query.offset and query.offset >= total:
        raise _bad("offset", f"Beyond the last row ({total} rows match)")
    position = VersionCase.position
    on_version = and_(VersionCase.case_id == Output.case_id,
                      VersionCase.version_id == run.dataset_version_id)
    measure = _measure(query)
    if measure is None:
        # the dataset's cases in order, each kept when a cell of it matches: the walk stops
        # at the page's last row (an IN over the matching cases hashed all of them first)
        order = position.desc() if query.descending else position
        cell = _tagged(session, query, select(Output.id).where(
            *in_view, Output.case_id == VersionCase.case_id, *conditions))
        stmt = (select(VersionCase.case_id, position)
                .where(VersionCase.version_id == run.dataset_version_id, cell.exists())
                .order_by(order, VersionCase.case_id))
    else:
        sorted_on = ([Output.target_id == query.sort_target_id]
                     if query.sort_target_id is not None else in_view[1:])
        stmt = (select(Output.case_id, position)
                .join(VersionCase, on_version)
                .where(Output.run_id == run.id, *sorted_on, Output.case_id.in_(matching)))
        if query.sort == "score":
            stmt = stmt.outerjoin(Score, and_(*_score_conditions(query, versions)))
        ordered = measure.desc() if query.descending else measure.asc()
        stmt = (stmt.group_by(Output.case_id, position)
                .order_by(ordered.nulls_last(), position, Output.case_id))
    rows = session.execute(stmt.limit(query.limit).offset(query.offset)).all()
    return total, [(int(r[0]), int(r[1])) for r in rows]


def _total(session: Session, run: Run, query: GridQuery, matching: Select[Any],
           filtered: bool) -> int:
    """The rows matching. Without a filter, the cases of the visible targets: fixed once the
    run is planned, so a stopped run's is kept (runs/cache.py) instead of counting the
    distinct cases of 100,000 outputs at every page."""
    def count() -> int:
        return session.scalar(select(func.count()).select_from(matching.subquery())) or 0

    if filtered:
        return count()
    key = "grid-rows:" + ",".join(str(t) for t in sorted(query.target_ids))
    return int(cache.kept_json(session, run, key, count))


def warm_total(session: Session, run: Run) -> None:
    """Keep the total the run page's unfiltered grid sorted by a measure reads (every
    target visible), as `_total` keeps it on a first read (runs/warm.py)."""
    query = GridQuery()
    _total(session, run, query, _matching(session, run, query, [], []), filtered=False)


def user_prompts(value: Any) -> list[str] | None:
    """A conversation's user messages, one per turn (clipped), in order; None when the input
    is not a conversation. Output turn N answers user message N."""
    messages = value.get("messages") if isinstance(value, dict) else None
    if not isinstance(messages, list):
        return None
    return [_clip(_text(m.get("content", "")), INPUT_PREVIEW) for m in messages
            if isinstance(m, dict) and m.get("role") == "user"]


def _text(content: Any) -> str:
    return content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)


def input_preview(value: Any) -> str:
    """A line of a case's input: a conversation's first user message (what the first
    turn's reply, shown first in a cell, answers), else its fields."""
    if isinstance(value, dict):
        prompts = user_prompts(value)
        if prompts:
            return prompts[0]
        messages = value.get("messages")
        if isinstance(messages, list) and messages and isinstance(messages[-1], dict):
            return _clip(_text(messages[-1].get("content", "")), INPUT_PREVIEW)
        parts = [f"{k}: {v}" if not isinstance(v, str) or len(value) > 1 else v
                 for k, v in value.items()]
        return _clip(" · ".join(str(p) for p in parts), INPUT_PREVIEW)
    return _clip(str(value), INPUT_PREVIEW)


CHUNK_PREVIEW = 600  # characters of each retrieved chunk a grid cell shows


def _clip(text: str, size: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= size else text[: size - 1] + "…"


def _scores(session: Session, output_ids: Sequence[int]) -> dict[int, list[dict[str, Any]]]:
    out: dict[int, list[dict[str, Any]]] = {}
    if not output_ids:
        return out
    rows = session.execute(
        select(Score.output_id, Score.id, Score.scorer_version_id, ScorerConfig.id,
               ScorerConfig.name, ScorerVersion.number, Score.kind, Score.source, Score.value,
               Score.passed, func.substr(Score.rationale, 1, RATIONALE_PREVIEW), Score.comment,
               Score.error, Score.author_id, Score.details, Score.row_version)
        .join(ScorerVersion, ScorerVersion.id == Score.scorer_version_id)
        .join(ScorerConfig, ScorerConfig.id == ScorerVersion.scorer_id)
        .where(Score.output_id.in_(output_ids))
        .order_by(ScorerConfig.name, ScorerVersion.number, Score.source, Score.id))
    for (output_id, score_id, version_id, scorer_id, name, number, kind, source, value,
         passed, rationale, comment, error, author_id, details, row_version) in rows:
        entered = (details or {}).get("entered") if kind == "manual" else None
        out.setdefault(output_id, []).append({
            "id": score_id, "scorer_version_id": version_id, "scorer_id": scorer_id,
            "scorer_name": name, "version": number, "kind": kind, "source": source,
            "value": value, "passed": passed, "rationale": rationale or "",
            "comment": comment, "error": error, "author_id": author_id,
            "rating": (entered or {}).get("rating"), "row_version": row_version})
    return out


def grid(session: Session, project: Project, run: Run, query: GridQuery) -> dict[str, Any]:
    """{total, offset, limit, targets, rows}: see the module's docstring."""
    targets, versions = _check(session, project, run, query)
    visible = [t.id for t in targets]
    total, page = _page_rows(session, run, query, visible, versions)
    case_ids = [case_id for case_id, _ in page]
    cases = {c.id: c for c in session.execute(
        select(Case.id, Case.input, Case.tags).where(Case.id.in_(case_ids))).all()} \
        if case_ids else {}
    order = {t.id: i for i, t in enumerate(targets)}
    outputs = session.execute(
        select(Output.id, Output.case_id, Output.target_id, Output.repeat, Output.turn,
               Output.status, func.substr(Output.text, 1, TEXT_PREVIEW),
               func.length(Output.text), Output.error_class, Output.error_message,
               Output.tokens_in, Output.tokens_out, Output.cost_micros, Output.latency_ms,
               Output.cached, Output.retrieved)
        .where(Output.run_id == run.id, Output.case_id.in_(case_ids),
               Output.target_id.in_(visible) if query.target_ids else true())
        .order_by(Output.case_id, Output.target_id, Output.repeat, Output.turn)).all() \
        if case_ids else []
    scores = _scores(session, [o[0] for o in outputs])
    prompts = {case_id: user_prompts(c.input) for case_id, c in cases.items()}
    cells: dict[tuple[int, int], list[dict[str, Any]]] = {}
    for (output_id, case_id, target_id, repeat, turn, status, text, length, error_class,
         error, tokens_in, tokens_out, cost, latency, cached, retrieved) in outputs:
        turns = prompts.get(case_id)
        cells.setdefault((case_id, target_id), []).append({
            "id": output_id, "repeat": repeat, "turn": turn,
            "prompt": turns[turn] if turns and turn < len(turns) else None, "status": status,
            "text": text, "text_length": int(length or 0), "error_class": error_class,
            "error": _clip(error, 500) if error else None, "tokens_in": tokens_in,
            "tokens_out": tokens_out, "cost_micros": cost, "latency_ms": latency,
            "cached": bool(cached), "scores": scores.get(output_id, []),
            "retrieved": [{**c, "text": _clip(c["text"], CHUNK_PREVIEW)} for c in retrieved]
            if retrieved else None})
    numbers = case_numbers(session, run.dataset_version_id, case_ids)
    rows = []
    for case_id, position in page:
        found = cases.get(case_id)
        rows.append({
            "case_id": case_id, "position": position, "number": numbers.get(case_id, 0),
            "input": input_preview(found.input) if found else "",
            "turns": max(1, len(prompts.get(case_id) or ())),
            "tags": list(found.tags or []) if found else [],
            "cells": [{"target_id": t.id, "outputs": cells.get((case_id, t.id), [])}
                      for t in sorted(targets, key=lambda t: order[t.id])]})
    return {"total": total, "offset": query.offset, "limit": query.limit,
            "targets": [{"target_id": t.id, "label": t.label, "model_id": t.model_id}
                        for t in targets],
            "rows": rows}
