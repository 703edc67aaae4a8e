"""Per-case flakiness across repeats: does running the same case again give the same
result?

A case is flaky when its repeats spread (max - min) by more than `tolerance`. With the
default tolerance 0 any disagreement counts: for pass/fail values (0/1, or bools) that is
exactly a pass flip. Cases with a single repeat cannot show flakiness and are left out of
the share (but listed, with flaky False)."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from assay.core.stats.inputs import finite, finite_array
from assay.core.stats.intervals import Proportion, wilson_interval


@dataclass(frozen=True)
class CaseFlakiness:
    case: Hashable
    repeats: int
    mean: float
    std: float  # population standard deviation over the repeats
    spread: float  # max - min
    passes: int | None  # repeats that passed, for pass/fail data
    flaky: bool


@dataclass(frozen=True)
class FlakinessReport:
    cases: tuple[CaseFlakiness, ...]  # in input order; cases without values are left out
    n_cases: int  # cases with at least two repeats
    n_flaky: int
    flaky_share: Proportion  # n_flaky of n_cases, with its Wilson interval
    mean_std: float | None  # mean within-case std over cases with at least two repeats
    binary: bool
    tolerance: float


def flakiness(values_by_case: Mapping[Hashable, Sequence[float]], *,
              tolerance: float = 0.0, confidence: float = 0.95) -> FlakinessReport:
    if not isinstance(values_by_case, Mapping):
        raise ValueError("values_by_case must map each case to its repeats' values")
    tolerance = finite(tolerance, "tolerance")
    if tolerance < 0:
        raise ValueError(f"tolerance must not be negative, got {tolerance!r}")
    arrays: dict[Hashable, np.ndarray] = {}
    for key, values in values_by_case.items():
        if isinstance(values, str | bytes) or not isinstance(values, Sequence | np.ndarray):
            raise ValueError(f"values_by_case[{key!r}] must be a sequence of the case's "
                             f"repeat values, got {type(values).__name__}")
        if len(values):
            arrays[key] = finite_array(values, f"values_by_case[{key!r}]")
    binary = bool(arrays) and all(np.isin(v, (0.0, 1.0)).all() for v in arrays.values())
    cases = tuple(_case(key, values, binary, tolerance) for key, values in arrays.items())
    repeated = [case for case in cases if case.repeats >= 2]
    n_flaky = sum(case.flaky for case in repeated)
    return FlakinessReport(
        cases=cases, n_cases=len(repeated), n_flaky=n_flaky,
        flaky_share=wilson_interval(n_flaky, len(repeated), confidence),
        mean_std=float(np.mean([c.std for c in repeated])) if repeated else None,
        binary=binary, tolerance=tolerance)


def _case(key: Hashable, values: np.ndarray, binary: bool,
          tolerance: float) -> CaseFlakiness:
    spread = float(values.max() - values.min())
    return CaseFlakiness(case=key, repeats=int(values.size), mean=float(values.mean()),
                         std=float(values.std()), spread=spread,
                         passes=int(values.sum()) if binary else None,
                         flaky=values.size >= 2 and spread > tolerance)
