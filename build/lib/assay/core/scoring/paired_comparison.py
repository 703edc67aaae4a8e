"""Paired comparisons on the same cases, for one scorer: two targets of one run, or the
matched targets of two runs of one dataset.

Each side is reduced to one value per case (the mean over its repeats and turns, see
run_scores); only cases both sides scored are compared, and the result counts the cases
dropped on each side. The difference is B - A: a positive one favours B. For runs, A is
the base run and B the run compared with it.

Runs must be of one dataset (any versions: versions share the cases they did not edit, so
cases match by id). Targets match by label, then, among those left, by model when the
model has exactly one unmatched target on each side (a renamed target is the same model)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from assay.core import stats
from assay.core.datasets.models import Dataset, DatasetVersion
from assay.core.errors import Invalid
from assay.core.runs.models import Run, RunTarget
from assay.core.runs.results import targets_of
from assay.core.scoring import run_scores
from assay.core.scoring.statistics import CONFIDENCE, RESAMPLES


@dataclass(frozen=True)
class TargetPair:
    target_a: RunTarget  # of the base run, for runs
    target_b: RunTarget
    comparison: stats.PairedComparison


@dataclass(frozen=True)
class RunComparison:
    pairs: tuple[TargetPair, ...]
    unmatched_a: tuple[RunTarget, ...]  # targets of the base run without a match
    unmatched_b: tuple[RunTarget, ...]


def case_means(session: Session, run_id: int, version_id: int,
               target_ids: Sequence[int]) -> dict[int, dict[int, float]]:
    """target -> case -> the case's mean value by the scorer."""
    rows = run_scores.repeat_rows(session, run_id, [version_id], target_ids)
    return {target_id: stats.case_means(run_scores.values_by_case(
        [row for row in rows if row.target_id == target_id])) for target_id in target_ids}


def compare(a: dict[int, float], b: dict[int, float]) -> stats.PairedComparison:
    return stats.compare_paired(a, b, confidence=CONFIDENCE, n_resamples=RESAMPLES)


def compare_targets(session: Session, run: Run, version_id: int, target_a: RunTarget,
                    target_b: RunTarget) -> stats.PairedComparison:
    means = case_means(session, run.id, version_id, [target_a.id, target_b.id])
    return compare(means[target_a.id], means[target_b.id])


def dataset_of(session: Session, run: Run) -> tuple[int, str]:
    row = session.execute(
        select(Dataset.id, Dataset.name)
        .join(DatasetVersion, DatasetVersion.dataset_id == Dataset.id)
        .where(DatasetVersion.id == run.dataset_version_id)).one()
    return int(row[0]), str(row[1])


def check_same_dataset(session: Session, base: Run, run: Run) -> None:
    (base_id, base_name), (run_id, run_name) = dataset_of(session, base), dataset_of(session,
                                                                                     run)
    if base_id != run_id:
        raise Invalid("The runs are on different datasets", {"path": {"base_run_id": [
            f"Run {run.id} is on dataset {run_name!r}, run {base.id} on {base_name!r}: only "
            "runs of one dataset share cases to compare; choose a run of the same dataset"]}})


def match_targets(a: Sequence[RunTarget], b: Sequence[RunTarget]
                  ) -> tuple[list[tuple[RunTarget, RunTarget]], list[RunTarget],
                             list[RunTarget]]:
    pairs: list[tuple[RunTarget, RunTarget]] = []
    left_a, left_b = list(a), list(b)
    for target in a:
        match = next((t for t in left_b if target.label and t.label == target.label), None)
        if match is not None:
            pairs.append((target, match))
            left_a.remove(target)
            left_b.remove(match)
    for target in list(left_a):
        if target.model_id is None:
            continue
        same_a = [t for t in left_a if t.model_id == target.model_id]
        same_b = [t for t in left_b if t.model_id == target.model_id]
        if len(same_a) == 1 and len(same_b) == 1:
            pairs.append((target, same_b[0]))
            left_a.remove(target)
            left_b.remove(same_b[0])
    order = {target.id: index for index, target in enumerate(b)}
    pairs.sort(key=lambda pair: order[pair[1].id])
    return pairs, left_a, left_b


def compare_runs(session: Session, base: Run, base_version_id: int, run: Run,
                 version_id: int) -> RunComparison:
    """The caller has checked both runs are of one dataset and hold the scorers."""
    pairs, unmatched_a, unmatched_b = match_targets(targets_of(session, base),
                                                    targets_of(session, run))
    means_a = case_means(session, base.id, base_version_id, [a.id for a, _ in pairs])
    means_b = case_means(session, run.id, version_id, [b.id for _, b in pairs])
    return RunComparison(
        pairs=tuple(TargetPair(a, b, compare(means_a[a.id], means_b[b.id]))
                    for a, b in pairs),
        unmatched_a=tuple(unmatched_a), unmatched_b=tuple(unmatched_b))
