"""Agreement between the sources that scored the same outputs of one target.

- Between raters: the sources of one scorer version (judge models of a judge, reviewers of
  a manual scorer). With two or more, Krippendorff's alpha at the interval level on their
  values, one unit per output (a rater who did not score an output leaves it missing);
  with exactly two, also Cohen's kappa (unweighted) on their pass/fail verdicts.
- Judge against human: a judge version's values per output (each judge model's, and the
  judges' mean when there are several) against a manual scorer's (the mean of the
  reviewers who scored the output), at the interval level. Alpha is the number to read for
  continuous judge scores; kappa treats each distinct value as a category."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from assay.core import stats
from assay.core.scoring.run_scores import SourceScore

PASS_FAIL = (False, True)


@dataclass(frozen=True)
class Rater:
    source: str  # a judge model, or "user:<id>" for a reviewer
    n: int  # outputs it gave a value
    mean: float | None


@dataclass(frozen=True)
class RaterAgreement:
    raters: tuple[Rater, ...]
    alpha: stats.Alpha
    kappa: stats.Kappa | None  # exactly two raters who both gave verdicts; else None


@dataclass(frozen=True)
class JudgeHuman:
    judge: str | None  # the judge model; None: the mean of the judges
    human_scorer_version_id: int
    reviewers: int  # reviewers behind the human values
    agreement: stats.JudgeHumanAgreement


def _values(scores: Sequence[SourceScore]) -> dict[str, dict[int, float]]:
    """source -> output -> value, sources in the order they first appear."""
    out: dict[str, dict[int, float]] = {}
    for score in scores:
        if score.value is not None:
            out.setdefault(score.source, {})[score.output_id] = score.value
    return out


def rater_agreement(scores: Sequence[SourceScore]) -> RaterAgreement | None:
    """Scores of one version for one target; None with fewer than two raters."""
    values = _values(scores)
    if len(values) < 2:
        return None
    raters = sorted(values)
    units = sorted({output for by_output in values.values() for output in by_output})
    alpha = stats.krippendorff_alpha(
        [[values[rater].get(unit) for unit in units] for rater in raters], level="interval")
    kappa = None
    if len(raters) == 2:
        verdicts: dict[str, dict[int, bool]] = {rater: {} for rater in raters}
        for score in scores:
            if score.source in verdicts and score.passed is not None:
                verdicts[score.source][score.output_id] = score.passed
        if all(verdicts.values()):
            outputs = sorted({output for side in verdicts.values() for output in side})
            first, second = (verdicts[rater] for rater in raters)
            kappa = stats.cohens_kappa([first.get(o) for o in outputs],
                                       [second.get(o) for o in outputs],
                                       categories=PASS_FAIL)
    return RaterAgreement(
        raters=tuple(Rater(rater, len(values[rater]), math.fsum(values[rater].values())
                           / len(values[rater])) for rater in raters),
        alpha=alpha, kappa=kappa)


def judge_human(judge_scores: Sequence[SourceScore], human_scores: Sequence[SourceScore],
                human_version_id: int) -> list[JudgeHuman]:
    """Each judge model (and the judges' mean, with several) against the reviewers of one
    manual scorer, on one target's outputs; empty when either side has no value."""
    judges = _values(judge_scores)
    reviewers = _values(human_scores)
    if not judges or not reviewers:
        return []
    by_output: dict[int, list[float]] = {}
    for reviewer in reviewers.values():
        for output, value in reviewer.items():
            by_output.setdefault(output, []).append(value)
    human = {output: math.fsum(found) / len(found) for output, found in by_output.items()}
    sides: list[tuple[str | None, dict[int, float]]] = [(j, judges[j]) for j in sorted(judges)]
    if len(judges) > 1:
        pooled: dict[int, list[float]] = {}
        for judged in judges.values():
            for output, value in judged.items():
                pooled.setdefault(output, []).append(value)
        sides.append((None, {o: math.fsum(v) / len(v) for o, v in sorted(pooled.items())}))
    return [JudgeHuman(judge, human_version_id, len(reviewers),
                       stats.judge_human_agreement(judged, human, level="interval"))
            for judge, judged in sides]
