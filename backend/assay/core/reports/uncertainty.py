"""The reports' numbers with their uncertainty (DESIGN §6), as JSON-ready dicts, through
core/stats: means with a case-clustered bootstrap interval, rates with a Wilson interval,
and the paired comparison of two sides on common cases.

The reports hand over one mean per case (the database reduces repeats and judges to it),
so the bootstrap resamples cases, as clustering by case asks. Cases go in by id, so the
same data always gives the same interval (the bootstrap is seeded); and since a bootstrap
over 10,000 cases costs a tenth of a second per model, intervals are kept per distinct
input (a digest of the case means), so reading a report again does not redraw them."""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from assay.core import stats

CONFIDENCE = 0.95
RESAMPLES = 2000
KEPT = 1024  # intervals kept in this process, least recently used dropped first
DIGITS = 12

_kept: OrderedDict[bytes, stats.MeanCI] = OrderedDict()
_lock = threading.Lock()


def _bootstrap(values: np.ndarray) -> stats.MeanCI:
    key = hashlib.blake2b(values.tobytes(), digest_size=16).digest()
    with _lock:
        found = _kept.get(key)
        if found is not None:
            _kept.move_to_end(key)
            return found
    found = stats.mean_ci({i: [float(v)] for i, v in enumerate(values)},
                          confidence=CONFIDENCE, n_resamples=RESAMPLES)
    with _lock:
        _kept[key] = found
        while len(_kept) > KEPT:
            _kept.popitem(last=False)
    return found


def mean_ci(case_means: Mapping[int, float], n_values: int | None = None
            ) -> dict[str, Any]:
    """{mean, low, high, n_cases, n_values}: the mean of case means with its interval
    (None without cases; no interval from a single case). `n_values` counts the values
    behind the case means (the cases when not given)."""
    return mean_ci_of([case_means[case] for case in sorted(case_means)], n_values)


def mean_ci_of(case_means: Sequence[float], n_values: int | None = None) -> dict[str, Any]:
    """mean_ci of case means already in case order."""
    values = np.asarray(case_means, dtype=np.float64)
    # Sums of floats come back from a parallel aggregate in any order, so their last bits
    # vary from one query to the next: rounded off, the same scores are the same input.
    return mean_view(_bootstrap(values.round(DIGITS)), n_values)


def mean_view(found: stats.MeanCI, n_values: int | None = None) -> dict[str, Any]:
    return {"mean": found.mean, "low": found.low, "high": found.high,
            "n_cases": found.n_cases,
            "n_values": found.n_values if n_values is None else n_values}


def rate_ci(k: int, n: int) -> dict[str, Any]:
    """{k, n, rate, low, high}: k of n with the Wilson interval (None when n is 0)."""
    return rate_view(stats.wilson_interval(k, n, CONFIDENCE))


def rate_view(found: stats.Proportion) -> dict[str, Any]:
    return {"k": found.k, "n": found.n, "rate": found.estimate, "low": found.low,
            "high": found.high}


def paired(base: Mapping[int, float], head: Mapping[int, float]) -> dict[str, Any]:
    """The head side (B) against the base side (A) on the cases both have: difference
    B - A with its paired bootstrap interval, p-value, and the verdict."""
    found = stats.compare_paired(dict(sorted(base.items())), dict(sorted(head.items())),
                                 confidence=CONFIDENCE, n_resamples=RESAMPLES)
    return {"n": found.n, "mean_base": found.mean_a, "mean_head": found.mean_b,
            "mean_difference": found.mean_difference, "low": found.low, "high": found.high,
            "effect_size": found.effect_size, "p_value": found.p_value, "test": found.test,
            "binary": found.binary, "head_higher": found.b_higher,
            "base_higher": found.a_higher, "equal": found.equal,
            "verdict": _VERDICTS[found.verdict]}


_VERDICTS = {"B better": "head better", "A better": "base better",
             "not distinguishable": "not distinguishable"}
