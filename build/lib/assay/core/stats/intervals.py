"""Pass rates with Wilson score intervals.

The Wilson interval keeps its promised coverage for small n and for rates near 0 or 1,
where the textbook "p ± z·se" interval collapses to a point or leaves [0, 1]."""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

from assay.core.stats.inputs import check_confidence, check_count


@dataclass(frozen=True)
class Proportion:
    """k successes out of n trials. With n = 0 there is no rate: estimate, low and high
    are None (a report shows "no data", never 0%)."""

    k: int
    n: int
    estimate: float | None
    low: float | None
    high: float | None
    confidence: float


def wilson_interval(k: int, n: int, confidence: float = 0.95) -> Proportion:
    """The Wilson score interval for the rate k/n (no continuity correction)."""
    k = check_count(k, "k")
    n = check_count(n, "n")
    confidence = check_confidence(confidence)
    if k > n:
        raise ValueError(f"k ({k}) cannot exceed n ({n})")
    if n == 0:
        return Proportion(0, 0, None, None, None, confidence)
    # the standard library's normal quantile (within 1e-15 of scipy's ndtri): SciPy is a
    # second of imports that `assay eval` would pay for this one number
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    p = k / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z / denominator * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    # at k = 0 or k = n the bound is exactly 0 or 1; clamp away rounding residue
    low = 0.0 if k == 0 else max(0.0, centre - half)
    high = 1.0 if k == n else min(1.0, centre + half)
    return Proportion(k, n, p, low, high, confidence)
