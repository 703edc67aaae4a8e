"""Run against run: what a new run (head) fixed and broke relative to an earlier one (base)
on the same dataset (EvalArena's regression view), case by case and target by target.

Targets are matched across the runs by label, then, for those left, by model when the
model has exactly one unmatched target on each side (a prompt version or parameter change
renames the target, not what it is). Cases match by id: versions of a dataset share the
cases they did not edit, so an edited or added case is new to the base.

A (case, target) cell passes when every verdict on its outputs (repeats and turns) is a
pass, fails when any is a fail, and has no verdict otherwise. Verdicts come from the chosen
scorer (all its versions: each run pinned its own), or without one from the outputs'
status (succeeded passes, failed fails; skipped and unfinished cells give none).

Outcomes: fixed (failed -> passed), regressed (passed -> failed), new_fail and new_pass
(no verdict in the base: the case is new, or the base did not score it), still_failing,
still_passing, and missing (no verdict in the head). The paired comparison runs on the
per-case means (scores with a scorer, else the success share) of the matched targets."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import case, func, select
from sqlalchemy.orm import Session

from assay.core.datasets.models import Case, DatasetVersion
from assay.core.errors import Invalid
from assay.core.projects.models import Project
from assay.core.reports import uncertainty
from assay.core.reports.scope import ScorerChoice, scorer_choice
from assay.core.reports.sql import output_scores
from assay.core.runs import service as runs
from assay.core.runs.case_numbers import case_numbers
from assay.core.runs.models import CellStatus, Output, Run, RunTarget
from assay.core.runs.results import targets_of

OUTCOMES = ("regressed", "new_fail", "still_failing", "fixed", "new_pass", "still_passing",
            "missing")  # the order of the list: what needs attention first


@dataclass(frozen=True)
class Cell:
    """One (case, target) of one run."""

    verdicts: int
    passes: int
    value_sum: float
    values: int
    first_output: int

    @property
    def passed(self) -> bool | None:
        return None if not self.verdicts else self.passes == self.verdicts

    @property
    def mean(self) -> float | None:
        return self.value_sum / self.values if self.values else None


def outcome(base: bool | None, head: bool | None) -> str:
    if head is None:
        return "missing"
    if base is None:
        return "new_pass" if head else "new_fail"
    if base == head:
        return "still_passing" if head else "still_failing"
    return "fixed" if head else "regressed"


def check_same_dataset(session: Session, base: Run, head: Run) -> None:
    datasets = dict(session.execute(select(DatasetVersion.id, DatasetVersion.dataset_id).where(
        DatasetVersion.id.in_([base.dataset_version_id, head.dataset_version_id]))).all())
    if datasets[base.dataset_version_id] != datasets[head.dataset_version_id]:
        raise Invalid(
            f"Run {head.id} and run {base.id} are on different datasets: a diff compares "
            "the same cases, so pick a base run on the same dataset",
            {"path": {"base_run_id": ["Not a run on the same dataset"]}},
            code="DIFFERENT_DATASETS")


def match_targets(base: list[RunTarget], head: list[RunTarget]
                  ) -> list[tuple[RunTarget | None, RunTarget | None]]:
    """(base, head) pairs in the head's order, then the base targets left unmatched."""
    pairs: dict[int, RunTarget] = {}
    by_label = {t.label: t for t in base}
    for target in head:
        found = by_label.get(target.label)
        if found is not None:
            pairs[target.id] = found
    taken = {t.id for t in pairs.values()}
    for model_id in {t.model_id for t in head if t.id not in pairs}:
        left_head = [t for t in head if t.id not in pairs and t.model_id == model_id]
        left_base = [t for t in base if t.id not in taken and t.model_id == model_id]
        if len(left_head) == 1 and len(left_base) == 1:
            pairs[left_head[0].id] = left_base[0]
            taken.add(left_base[0].id)
    out: list[tuple[RunTarget | None, RunTarget | None]] = [
        (pairs.get(t.id), t) for t in head]
    out += [(t, None) for t in base if t.id not in taken]
    return out


def cells(session: Session, run_ids: list[int], scorer: ScorerChoice | None
          ) -> dict[int, dict[int, Cell]]:
    """target id -> case id -> its cell, for every output of the runs."""
    if scorer is None:
        verdict: Any = case((Output.status == CellStatus.succeeded, 1),
                            (Output.status == CellStatus.failed, 0))
        value: Any = verdict
        stmt = select(Output.target_id, Output.case_id)
    else:
        scores = output_scores(scorer.version_ids, list(run_ids))
        verdict, value = scores.c.passed, scores.c.value
        stmt = select(Output.target_id, Output.case_id).outerjoin(
            scores, scores.c.output_id == Output.id)
    rows = session.execute(
        stmt.add_columns(func.count(verdict), func.sum(verdict), func.sum(value),
                         func.count(value), func.min(Output.id))
        .where(Output.run_id.in_(run_ids))
        .group_by(Output.target_id, Output.case_id))
    out: dict[int, dict[int, Cell]] = {}
    for t, c, n, k, total, m, first in rows:
        out.setdefault(t, {})[c] = Cell(int(n), int(k or 0), float(total or 0), int(m),
                                        int(first))
    return out


def _side(cell: Cell | None) -> dict[str, Any] | None:
    if cell is None:
        return None
    return {"passed": cell.passed, "score": cell.mean, "output_id": cell.first_output}


def _case_means(found: dict[int, dict[int, Cell]], targets: Iterable[int]) -> dict[int, float]:
    """case id -> the mean over the targets' outputs of the case (scores or successes)."""
    sums: dict[int, list[float]] = {}
    for target in targets:
        for case_id, cell in found.get(target, {}).items():
            if cell.values:
                entry = sums.setdefault(case_id, [0.0, 0.0])
                entry[0] += cell.value_sum
                entry[1] += cell.values
    return {case_id: total / n for case_id, (total, n) in sums.items()}


def _target_view(base: RunTarget | None, head: RunTarget | None) -> dict[str, Any]:
    return {"base_target_id": base.id if base else None,
            "base_label": base.label if base else None,
            "head_target_id": head.id if head else None,
            "head_label": head.label if head else None,
            "model_id": head.model_id if head else base.model_id if base else None}


def run_diff(session: Session, project: Project, head_id: int, base_id: int,
             scorer_id: int | None, outcome_filter: str | None, page: int,
             page_size: int) -> dict[str, Any]:
    head = runs.get_run(session, project, head_id)
    base = runs.get_run(session, project, base_id)
    check_same_dataset(session, base, head)
    scorer = scorer_choice(session, project.id, scorer_id) if scorer_id is not None else None
    found = cells(session, sorted({base.id, head.id}), scorer)
    pairs = match_targets(targets_of(session, base), targets_of(session, head))
    counts = dict.fromkeys(OUTCOMES, 0)
    rows: list[dict[str, Any]] = []
    targets: list[dict[str, Any]] = []
    for base_target, head_target in pairs:
        target_counts = dict.fromkeys(OUTCOMES, 0)
        before_cells = found.get(base_target.id, {}) if base_target else {}
        after_cells = found.get(head_target.id, {}) if head_target else {}
        for case_id in sorted(set(before_cells) | set(after_cells)):
            before, after = before_cells.get(case_id), after_cells.get(case_id)
            result = outcome(before.passed if before else None,
                             after.passed if after else None)
            target_counts[result] += 1
            rows.append({"case_id": case_id, **_target_view(base_target, head_target),
                         "outcome": result, "base": _side(before), "head": _side(after)})
        for key, n in target_counts.items():
            counts[key] += n
        comparison = None
        if base_target and head_target:
            comparison = uncertainty.paired(_case_means(found, {base_target.id}),
                                            _case_means(found, {head_target.id}))
        targets.append({**_target_view(base_target, head_target), "counts": target_counts,
                        "comparison": comparison})
    matched = [(b, h) for b, h in pairs if b is not None and h is not None]
    overall = uncertainty.paired(_case_means(found, {b.id for b, _ in matched}),
                                 _case_means(found, {h.id for _, h in matched}))
    if outcome_filter is not None:
        rows = [r for r in rows if r["outcome"] == outcome_filter]
    rows.sort(key=lambda r: OUTCOMES.index(r["outcome"]))
    window = rows[(page - 1) * page_size:page * page_size]
    _with_inputs(session, window, head.dataset_version_id)
    return {"base_run_id": base.id, "head_run_id": head.id,
            "scorer": None if scorer is None else {
                "id": scorer.id, "name": scorer.name, "kind": scorer.kind,
                "versions": list(scorer.version_numbers)},
            "verdicts_from": "scorer" if scorer else "status", "counts": counts,
            "comparison": overall, "targets": targets,
            "cases": {"items": window, "total": len(rows), "page": page,
                      "page_size": page_size}}


def _with_inputs(session: Session, rows: list[dict[str, Any]], version_id: int) -> None:
    """The case input and number (the dataset's, shown instead of the id) of each listed
    row (one query each for the page)."""
    ids = {row["case_id"] for row in rows}
    numbers = case_numbers(session, version_id, ids)
    inputs: dict[int, dict[str, Any]] = dict(session.execute(
        select(Case.id, Case.input).where(Case.id.in_(ids))).all()) if ids else {}
    for row in rows:
        row["input"] = inputs.get(row["case_id"])
        row["case_number"] = numbers.get(row["case_id"])
