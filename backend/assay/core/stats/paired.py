"""Paired comparison of two targets (or two runs) on the same cases.

Each side gives one value per case (the case's mean over its repeats, see `case_means`);
only cases both sides scored are compared, and the result says how many were dropped.
The difference is B - A, so a positive difference favours B when higher is better.

- interval: paired bootstrap over cases (resampling the per-case differences);
- effect size: Cohen's d_z, the mean difference over the standard deviation of the
  differences (sample, n - 1); for pass/fail data also the difference in pass rate;
- p-value: for pass/fail data the exact McNemar test, which is the exact two-sided sign
  test on the discordant cases (binomial, p = 0.5); otherwise the two-sided Wilcoxon
  signed-rank test with zero differences dropped: exact up to 50 non-zero differences
  (ties included: the mid-rank sum's distribution over all sign patterns), above that
  SciPy's tie-corrected normal approximation; differences are compared at 12 decimals
  so that equal scores stay equal after averaging. This is what scipy.stats.wilcoxon computes by
  default, except that SciPy enumerates samples with ties only up to 13 (slowly) and
  approximates between 14 and 50;
- verdict: which side is better only when the interval excludes zero AND the test's
  p-value is at most 1 - confidence; otherwise (or with fewer than two cases) "not
  distinguishable". Both are asked because with very few cases a bootstrap interval is
  too narrow (three equal differences give it zero width) while the exact test is not
  (three cases, all one way: p = 0.25)."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass, replace
from typing import TypeVar

import numpy as np

from assay.core.stats.bootstrap import Method, bootstrap_interval, check_method
from assay.core.stats.inputs import check_confidence, check_resamples, finite

K = TypeVar("K", bound=Hashable)
B_BETTER, A_BETTER, NOT_DISTINGUISHABLE = "B better", "A better", "not distinguishable"
MCNEMAR, WILCOXON = "mcnemar_exact", "wilcoxon_signed_rank"
DECIMALS = 12  # differences are compared for zeros and ties at this precision
EXACT_UP_TO = 50  # non-zero differences; the exact distribution costs O(n³) beyond


@dataclass(frozen=True)
class PairedComparison:
    n: int  # cases both sides scored
    dropped_a: int  # cases only A scored
    dropped_b: int  # cases only B scored
    mean_a: float | None
    mean_b: float | None
    mean_difference: float | None  # B - A
    low: float | None  # interval of the mean difference
    high: float | None
    effect_size: float | None  # Cohen's d_z; None when the differences do not vary
    pass_rate_difference: float | None  # B - A, pass/fail data only
    b_higher: int  # cases where B scored higher than A
    a_higher: int
    equal: int
    p_value: float | None
    test: str | None  # "mcnemar_exact" | "wilcoxon_signed_rank"; None without cases
    binary: bool
    verdict: str  # "B better" | "A better" | "not distinguishable"
    confidence: float
    method: str
    n_resamples: int


def compare_paired(a: Mapping[K, float], b: Mapping[K, float], *,
                   binary: bool | None = None, higher_is_better: bool = True,
                   confidence: float = 0.95, n_resamples: int = 2000, seed: int = 0,
                   method: Method = "percentile") -> PairedComparison:
    """Compare B with A on their common cases. `binary` None means: pass/fail when every
    value is 0 or 1. Set `higher_is_better=False` for latency or cost."""
    confidence = check_confidence(confidence)
    n_resamples = check_resamples(n_resamples)
    check_method(method)
    for name, side in (("a", a), ("b", b)):
        if not isinstance(side, Mapping):
            raise ValueError(f"{name} must map each case to its value, "
                             f"got {type(side).__name__}")
    common = [key for key in a if key in b]
    values_a = np.array([finite(a[key], f"a[{key!r}]") for key in common], dtype=np.float64)
    values_b = np.array([finite(b[key], f"b[{key!r}]") for key in common], dtype=np.float64)
    is_binary = _is_binary(values_a, values_b, binary)
    n = len(common)
    diff = values_b - values_a
    rounded = np.round(diff, DECIMALS)
    counts = (int((rounded > 0).sum()), int((rounded < 0).sum()), int((rounded == 0).sum()))
    empty = PairedComparison(
        n=n, dropped_a=len(a) - n, dropped_b=len(b) - n, mean_a=None, mean_b=None,
        mean_difference=None, low=None, high=None, effect_size=None,
        pass_rate_difference=None, b_higher=counts[0], a_higher=counts[1], equal=counts[2],
        p_value=None, test=None, binary=is_binary, verdict=NOT_DISTINGUISHABLE,
        confidence=confidence, method=method, n_resamples=n_resamples)
    if n == 0:
        return empty
    mean_diff = float(diff.mean())
    low = high = None
    if n >= 2:
        low, high = bootstrap_interval(diff, confidence=confidence,
                                       n_resamples=n_resamples, seed=seed, method=method)
    sd = float(diff.std(ddof=1)) if n >= 2 else 0.0
    test, p_value = _test(diff, is_binary)
    return replace(
        empty, mean_a=float(values_a.mean()), mean_b=float(values_b.mean()),
        mean_difference=mean_diff, low=low, high=high,
        effect_size=mean_diff / sd if sd > 0 else None,
        pass_rate_difference=mean_diff if is_binary else None,
        p_value=p_value, test=test,
        verdict=verdict(low, high, higher_is_better, p_value, 1 - confidence))


def verdict(low: float | None, high: float | None, higher_is_better: bool = True,
            p_value: float | None = None, alpha: float = 0.05) -> str:
    """Which side the interval of B - A favours; "not distinguishable" when it holds 0 or
    when the paired test (its p-value, where there is one) does not reject at `alpha`."""
    if low is None or high is None or low <= 0 <= high:
        return NOT_DISTINGUISHABLE
    if p_value is not None and p_value > alpha + 1e-12:
        return NOT_DISTINGUISHABLE
    return B_BETTER if (low > 0) == higher_is_better else A_BETTER


def _is_binary(values_a: np.ndarray, values_b: np.ndarray, binary: bool | None) -> bool:
    zero_one = bool(np.isin(values_a, (0.0, 1.0)).all() and np.isin(values_b, (0.0, 1.0)).all())
    if binary and not zero_one:
        raise ValueError("binary=True needs every value to be 0 or 1 (pass/fail); average "
                         "repeats give fractions, so compare them as scores instead")
    return zero_one if binary is None else binary


def _test(diff: np.ndarray, binary: bool) -> tuple[str, float]:
    # imported here: scipy.stats is a second of imports, and most commands that import this
    # package (the engine, `assay eval`) never test a difference
    from scipy import stats as scipy_stats

    # equal scores can differ in the last bits once averaged or subtracted; rounding keeps
    # them equal, so zeros and ties are what they mean to be
    rounded = np.round(diff, DECIMALS)
    nonzero = rounded[rounded != 0]
    if binary:
        discordant = nonzero.size
        if discordant == 0:
            return MCNEMAR, 1.0
        b_wins = int((nonzero > 0).sum())
        return MCNEMAR, float(scipy_stats.binomtest(b_wins, discordant, 0.5).pvalue)
    if nonzero.size == 0:
        return WILCOXON, 1.0
    if nonzero.size > EXACT_UP_TO:
        return WILCOXON, float(scipy_stats.wilcoxon(nonzero, method="asymptotic").pvalue)
    return WILCOXON, _exact_signed_rank_p(nonzero)


def _exact_signed_rank_p(nonzero: np.ndarray) -> float:
    """Two-sided p-value of the signed-rank sum under random signs. Doubled mid-ranks are
    whole numbers, so the null distribution is a polynomial built one rank at a time."""
    from scipy import stats as scipy_stats

    doubled = np.rint(2 * scipy_stats.rankdata(np.abs(nonzero))).astype(np.int64)
    distribution = np.zeros(int(doubled.sum()) + 1)
    distribution[0] = 1.0
    for rank in doubled:  # each sign: leave the sum, or add the rank; halved to stay small
        shifted = np.zeros_like(distribution)
        shifted[rank:] = distribution[:-rank]
        distribution = (distribution + shifted) / 2
    observed = int(doubled[nonzero > 0].sum())
    below, above = distribution[:observed + 1].sum(), distribution[observed:].sum()
    return float(min(1.0, 2 * min(below, above)))
