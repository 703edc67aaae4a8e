"""Judges against humans, and pairwise judges against themselves.

Judge-human agreement applies the inter-judge measures to the cases a human scored,
pairing the judge's score with the human's for each case, plus the mean absolute
difference of the scores when they are numbers. Kappa is weighted quadratically for
ordinal, interval and ratio scales (unweighted for nominal); its categories are the
distinct scores in order, so it suits discrete scales (1-5, pass/fail) more than
continuous scores, where alpha at the interval level is the measure to read.

Position bias of a pairwise judge is the share of judgements whose two orders (A shown
first, B shown first) disagreed after un-swapping, with its Wilson interval."""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from assay.core.stats.inputs import finite
from assay.core.stats.intervals import Proportion, wilson_interval
from assay.core.stats.kappa import Kappa, cohens_kappa, is_missing
from assay.core.stats.krippendorff import LEVELS, Alpha, Level, krippendorff_alpha

K = TypeVar("K", bound=Hashable)


@dataclass(frozen=True)
class JudgeHumanAgreement:
    n: int  # cases both the judge and a human scored
    judge_only: int  # cases only the judge scored
    human_only: int
    exact_agreement: float | None  # share of cases with identical scores
    mean_abs_difference: float | None  # None for non-numeric labels or no common case
    kappa: Kappa
    alpha: Alpha


def judge_human_agreement(judge: Mapping[K, Hashable], human: Mapping[K, Hashable], *,
                          level: Level = "interval",
                          categories: Iterable[Hashable] | None = None
                          ) -> JudgeHumanAgreement:
    """Scores by case; a case with None (or NaN) on either side counts as unscored there."""
    if level not in LEVELS:
        raise ValueError(f"level must be one of {', '.join(LEVELS)}, got {level!r}")
    for name, side in (("judge", judge), ("human", human)):
        if not isinstance(side, Mapping):
            raise ValueError(f"{name} must map each case to its score, "
                             f"got {type(side).__name__}")
    scored_j = {key for key, value in judge.items() if not is_missing(value)}
    scored_h = {key for key, value in human.items() if not is_missing(value)}
    common = [key for key in judge if key in scored_j and key in scored_h]
    pairs_j = [judge[key] for key in common]
    pairs_h = [human[key] for key in common]
    order = None if categories is None else tuple(categories)
    alpha = krippendorff_alpha([pairs_j, pairs_h], level=level, categories=order)
    kappa = cohens_kappa(pairs_j, pairs_h, categories=order,
                         weights=None if level == "nominal" else "quadratic")
    return JudgeHumanAgreement(
        n=len(common), judge_only=len(scored_j - scored_h), human_only=len(scored_h - scored_j),
        exact_agreement=(sum(x == y for x, y in zip(pairs_j, pairs_h, strict=True))
                         / len(common)) if common else None,
        mean_abs_difference=_mean_abs_difference(pairs_j, pairs_h),
        kappa=kappa, alpha=alpha)


def position_bias_rate(disagreed: Iterable[bool | None],
                       confidence: float = 0.95) -> Proportion:
    """One flag per pairwise judgement: True when its two orders disagreed, False when
    they agreed, None when it could not be judged both ways (left out)."""
    flags = [flag for flag in disagreed if flag is not None]
    for index, flag in enumerate(flags):
        if not isinstance(flag, bool | np.bool_):
            raise ValueError(f"position-bias flags must be True, False or None; "
                             f"got {flag!r} at position {index}")
    return wilson_interval(sum(bool(flag) for flag in flags), len(flags), confidence)


def _mean_abs_difference(a: list[Hashable], b: list[Hashable]) -> float | None:
    if not a:
        return None
    numeric = (int, float, np.integer, np.floating)  # bools too: pass/fail as 1/0
    if not all(isinstance(v, numeric) for v in (*a, *b)):
        return None
    diffs = [abs(finite(x, "judge score") - finite(y, "human score"))
             for x, y in zip(a, b, strict=True)]
    return float(np.mean(diffs))
