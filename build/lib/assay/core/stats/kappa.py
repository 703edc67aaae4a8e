"""Cohen's kappa: agreement of two raters on the same items, corrected for chance.

kappa = 1 - (observed disagreement) / (disagreement expected by chance), where chance
pairs the raters' own label frequencies. Unweighted, every disagreement counts fully;
for ordinal scales the weighted forms count a disagreement by its distance between the
categories' positions: linear |i - j| or quadratic (i - j)².

Items either rater left unrated (None or NaN) are dropped and counted. Categories are
the labels both raters used (sorted when they are numbers), unless `categories` gives
them: in scale order, which weighted kappa needs for labels that are not numbers, and to
include a category nobody used."""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

Weights = Literal["linear", "quadratic"]


@dataclass(frozen=True)
class Kappa:
    kappa: float | None  # None when undefined: no rated items, or no room for disagreement
    n: int  # items both raters rated
    dropped: int  # items missing a rating from either rater
    observed_agreement: float | None  # 1 - observed (weighted) disagreement, 0..1
    expected_agreement: float | None  # the same, expected by chance
    weights: str | None
    categories: tuple[Hashable, ...]


def is_missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def cohens_kappa(a: Sequence[Hashable], b: Sequence[Hashable], *,
                 weights: Weights | None = None,
                 categories: Sequence[Hashable] | None = None) -> Kappa:
    if isinstance(a, str | bytes) or isinstance(b, str | bytes):
        raise ValueError("a and b must be sequences of labels, not strings")
    if len(a) != len(b):
        raise ValueError(f"a and b must rate the same items: got {len(a)} and {len(b)} "
                         f"ratings")
    if weights not in (None, "linear", "quadratic"):
        raise ValueError(f"weights must be None, 'linear' or 'quadratic', got {weights!r}")
    pairs = [(x, y) for x, y in zip(a, b, strict=True)
             if not is_missing(x) and not is_missing(y)]
    order = ordered_categories([v for pair in pairs for v in pair], categories,
                               ordinal=weights is not None)
    if not pairs:
        return Kappa(None, 0, len(a), None, None, weights, order)
    index = {label: i for i, label in enumerate(order)}
    size = len(order)
    observed = np.zeros((size, size))
    np.add.at(observed, ([index[x] for x, _ in pairs], [index[y] for _, y in pairs]), 1)
    observed /= len(pairs)
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    distance = disagreement_weights(size, weights)
    scale = distance.max() if size > 1 else 1.0
    d_observed = float((distance * observed).sum() / scale)
    d_expected = float((distance * expected).sum() / scale)
    kappa = 1 - d_observed / d_expected if d_expected > 0 else None
    return Kappa(kappa, len(pairs), len(a) - len(pairs), 1 - d_observed, 1 - d_expected,
                 weights, order)


def disagreement_weights(size: int, weights: Weights | None) -> np.ndarray:
    positions = np.arange(size)
    gap = np.abs(positions[:, None] - positions[None, :]).astype(np.float64)
    if weights is None:
        return (gap > 0).astype(np.float64)
    return gap if weights == "linear" else gap ** 2


def ordered_categories(labels: Sequence[Hashable], categories: Sequence[Hashable] | None,
                       *, ordinal: bool) -> tuple[Hashable, ...]:
    """The categories in scale order: as given (checking every label is among them), or
    the distinct labels (sorted when all are numbers; ordinal scales need numbers)."""
    if categories is not None:
        given = tuple(categories)
        if len(set(given)) != len(given):
            raise ValueError("categories must not repeat a label")
        unknown = {label for label in labels if label not in set(given)}
        if unknown:
            shown = ", ".join(sorted(map(repr, unknown))[:5])
            raise ValueError(f"labels not among the categories: {shown}")
        return given
    distinct = list(dict.fromkeys(labels))
    numeric = all(isinstance(label, int | float | np.integer | np.floating)
                  for label in distinct)
    if numeric:
        return tuple(sorted(distinct))  # type: ignore[type-var]
    if ordinal:  # sorting names alphabetically would invent a scale ("high" < "low")
        raise ValueError("ordinal labels that are not numbers need their scale order: "
                         "give categories in order")
    return tuple(distinct)
