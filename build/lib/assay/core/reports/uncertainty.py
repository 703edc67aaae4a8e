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
import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import Any, Protocol

import numpy as np

from assay.core import stats
from assay.core.ttl_cache import TTLCache

CONFIDENCE = 0.95
RESAMPLES = 2000
KEPT = 1024  # intervals kept in this process, least recently used dropped first
DIGITS = 12

SHARED_MIN_CASES = 1000  # below, drawing costs less than asking the shared store

log = logging.getLogger(__name__)
# digest -> (interval, whether the shared store has it)
_kept = TTLCache[tuple[stats.MeanCI, bool]](None, max_entries=KEPT)


class Shared(Protocol):
    """Intervals kept across processes (the API's and the workers'): a warm job's draws
    serve the first reader of a report (runs/warm.py). Best effort: errors are the
    store's own, caught here, and only mean drawing again."""

    def get(self, key: bytes) -> bytes | None: ...

    def put(self, key: bytes, value: bytes) -> None: ...


_shared: Shared | None = None


def share(store: Shared | None) -> None:
    """Keep big inputs' intervals in `store` too (None: in this process only)."""
    global _shared
    _shared = store


def _from_shared(key: bytes) -> stats.MeanCI | None:
    if _shared is None:
        return None
    try:
        found = _shared.get(key)
        return None if found is None else stats.MeanCI(**json.loads(found))
    except Exception as exc:  # a store that is away: draw instead
        log.debug("shared intervals not read: %s", exc)
        return None


def _to_shared(key: bytes, found: stats.MeanCI) -> bool:
    if _shared is None:
        return False
    try:
        _shared.put(key, json.dumps(asdict(found)).encode())
        return True
    except Exception as exc:
        log.debug("shared intervals not kept: %s", exc)
        return False


def _bootstrap(values: np.ndarray) -> stats.MeanCI:
    key = hashlib.blake2b(values.tobytes(), digest_size=16).digest()
    big = len(values) >= SHARED_MIN_CASES
    kept = _kept.get(key.hex())
    if kept is not None:
        if big and not kept[1] and _shared is not None:  # drawn before there was a store
            _keep(key, kept[0], _to_shared(key, kept[0]))
        return kept[0]
    from_store = _from_shared(key) if big else None
    if from_store is not None:
        _keep(key, from_store, True)
        return from_store
    drawn = stats.mean_ci({i: [float(v)] for i, v in enumerate(values)},
                          confidence=CONFIDENCE, n_resamples=RESAMPLES)
    _keep(key, drawn, big and _to_shared(key, drawn))
    return drawn


def _keep(key: bytes, found: stats.MeanCI, shared: bool) -> None:
    _kept.put(key.hex(), (found, shared))


def forget() -> None:
    """Drop the intervals this process keeps (a benchmark timing a fresh process's reads)."""
    _kept.clear()


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
