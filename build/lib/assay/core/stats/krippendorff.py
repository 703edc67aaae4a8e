"""Krippendorff's alpha: agreement of two or more judges, missing ratings allowed.

alpha = 1 - D_o / D_e, the observed disagreement between values given to the same unit
over the disagreement expected between any two values (Krippendorff 2011, "Computing
Krippendorff's Alpha-Reliability"). Both come from the coincidence matrix, in which each
unit with m ≥ 2 values contributes every ordered pair of its values with weight 1/(m - 1);
units with fewer than two values carry no information about agreement and are left out.

Levels set the distance between two values c and k:
nominal   0 if equal, else 1;
ordinal   (n_c + ... + n_k - (n_c + n_k)/2)², with n_g the values of category g;
interval  (c - k)²;
ratio     ((c - k) / (c + k))², values must not be negative."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from assay.core.stats.inputs import finite
from assay.core.stats.kappa import is_missing, ordered_categories

Level = Literal["nominal", "ordinal", "interval", "ratio"]
LEVELS = ("nominal", "ordinal", "interval", "ratio")


@dataclass(frozen=True)
class Alpha:
    alpha: float | None  # None when undefined: no unit with two values, or no variation
    level: str
    n_judges: int
    n_units: int  # units with at least two values
    n_values: int  # values in those units
    observed_disagreement: float | None
    expected_disagreement: float | None


def krippendorff_alpha(ratings: Sequence[Sequence[Hashable]], *, level: Level = "nominal",
                       categories: Sequence[Hashable] | None = None) -> Alpha:
    """`ratings` has one row per judge and one column per unit (case); None or NaN marks a
    unit the judge did not rate. `categories` gives the scale order of ordinal labels that
    are not numbers (e.g. "low", "mid", "high")."""
    if level not in LEVELS:
        raise ValueError(f"level must be one of {', '.join(LEVELS)}, got {level!r}")
    rows = _rows(ratings)
    labels = [value for row in rows for value in row if not is_missing(value)]
    if level in ("interval", "ratio"):
        for value in labels:
            number = finite(value, f"{level} ratings")
            if level == "ratio" and number < 0:
                raise ValueError(f"ratio ratings must not be negative, got {value!r}")
    order = ordered_categories(labels, categories, ordinal=level != "nominal")
    index = {label: i for i, label in enumerate(order)}
    counts = np.zeros((len(rows[0]), len(order)))
    for row in rows:
        for unit, value in enumerate(row):
            if not is_missing(value):
                counts[unit, index[value]] += 1
    per_unit = counts.sum(axis=1)
    counts, per_unit = counts[per_unit >= 2], per_unit[per_unit >= 2]
    result = Alpha(None, level, len(rows), len(per_unit), int(per_unit.sum()), None, None)
    if not len(per_unit):
        return result
    weighted = counts / (per_unit - 1)[:, None]
    coincidences = weighted.T @ counts - np.diag(weighted.sum(axis=0))
    marginals = coincidences.sum(axis=1)
    total = marginals.sum()
    distance = _distances(level, order, marginals)
    observed = float((coincidences * distance).sum() / total)
    expected = float((np.outer(marginals, marginals) * distance).sum() / (total * (total - 1)))
    alpha = 1 - observed / expected if expected > 0 else None
    return Alpha(alpha, level, len(rows), len(per_unit), int(total), observed, expected)


def _rows(ratings: Sequence[Sequence[Hashable]]) -> list[Sequence[Hashable]]:
    if isinstance(ratings, str | bytes) or not isinstance(ratings, Sequence | np.ndarray):
        raise ValueError("ratings must be a sequence of judges' rows")
    rows = list(ratings)
    for index, row in enumerate(rows):
        if isinstance(row, str | bytes) or not isinstance(row, Sequence | np.ndarray):
            raise ValueError(f"ratings[{index}] must be a sequence of one judge's ratings")
    if len(rows) < 2:
        raise ValueError(f"agreement needs at least two judges, got {len(rows)}")
    lengths = {len(row) for row in rows}
    if len(lengths) != 1:
        raise ValueError(f"every judge's row must cover the same units: got rows of "
                         f"lengths {sorted(lengths)}")
    return rows


def _distances(level: str, order: tuple[Hashable, ...], marginals: np.ndarray) -> np.ndarray:
    if level == "nominal":
        return 1 - np.eye(len(order))
    if level == "ordinal":
        # between categories c <= k: the values from c to k, less half of the two ends
        through = np.cumsum(marginals)
        start = through - marginals
        span = through[None, :] - start[:, None] - (marginals[:, None] + marginals[None, :]) / 2
        span = np.triu(span) + np.triu(span, 1).T
        return span ** 2
    values = np.array([float(v) for v in order])  # type: ignore[arg-type]
    gap = values[:, None] - values[None, :]
    if level == "interval":
        return gap ** 2
    sums = values[:, None] + values[None, :]
    ratio = np.divide(gap, sums, out=np.zeros_like(gap), where=sums != 0)
    return ratio ** 2
