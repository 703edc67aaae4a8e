"""Composite rubric scores and the per-criterion breakdown (edison FR-RV-001).

Criterion values are normalised to 0..1 (as scorers report them). Weights are relative:
any non-negative finite numbers with a positive sum; the composite divides by their sum,
so {"a": 2, "b": 1} and {"a": 0.667, "b": 0.333} mean the same.

The breakdown's standard deviation is the population one (divide by n): it describes the
scores at hand, is 0 for a single score rather than undefined, and uncertainty about the
mean is what `mean_ci` is for."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from assay.core.stats.inputs import finite


@dataclass(frozen=True)
class CriterionSummary:
    n: int
    avg: float
    min: float
    max: float
    std: float  # population standard deviation


def normalise_weights(weights: Mapping[str, float]) -> dict[str, float]:
    """Weights scaled to sum to 1, or a ValueError naming what makes them unusable."""
    if not isinstance(weights, Mapping) or not weights:
        raise ValueError("weights must map at least one criterion to its weight")
    checked = {name: finite(weight, f"weights[{name!r}]") for name, weight in weights.items()}
    negative = sorted(name for name, weight in checked.items() if weight < 0)
    if negative:
        raise ValueError(f"weights must not be negative: {', '.join(negative)}")
    total = sum(checked.values())
    if total <= 0:
        raise ValueError("weights must have a positive sum (all of them are 0)")
    return {name: weight / total for name, weight in checked.items()}


def composite_score(values: Mapping[str, float], weights: Mapping[str, float]) -> float:
    """The weighted mean of criterion values. Every weighted criterion needs a value and
    every value a weight, so a criterion that failed to score is never silently dropped."""
    normalised = normalise_weights(weights)
    missing = sorted(set(normalised) - set(values))
    if missing:
        raise ValueError(f"no value for weighted criteria: {', '.join(missing)}")
    unweighted = sorted(set(values) - set(normalised))
    if unweighted:
        raise ValueError(f"no weight for criteria: {', '.join(unweighted)}")
    total = 0.0
    for name, weight in normalised.items():
        value = finite(values[name], f"values[{name!r}]")
        if not 0 <= value <= 1:
            raise ValueError(f"values[{name!r}] must be normalised to 0..1, got {value!r}")
        total += weight * value
    return total


def criterion_breakdown(rows: Iterable[Mapping[str, float]]) -> dict[str, CriterionSummary]:
    """avg, min, max and std of each criterion over outputs (one mapping per output; an
    output may lack some criteria). Criteria keep the order they first appear in."""
    columns: dict[str, list[float]] = {}
    for index, row in enumerate(rows):
        if not isinstance(row, Mapping):
            raise ValueError(f"rows[{index}] must map criteria to values, "
                             f"got {type(row).__name__}")
        for name, value in row.items():
            columns.setdefault(name, []).append(finite(value, f"rows[{index}][{name!r}]"))
    return {name: _summary(values) for name, values in columns.items()}


def _summary(values: list[float]) -> CriterionSummary:
    n = len(values)
    avg = math.fsum(values) / n
    variance = math.fsum((v - avg) ** 2 for v in values) / n
    return CriterionSummary(n, avg, min(values), max(values), math.sqrt(variance))
