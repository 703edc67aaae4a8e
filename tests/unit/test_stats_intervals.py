"""Wilson score intervals for pass rates, checked against SciPy."""

from __future__ import annotations

import pytest
from scipy import stats

from assay.core.stats import Proportion, wilson_interval


@pytest.mark.parametrize("n", [1, 2, 5, 10, 37, 100, 1000])
@pytest.mark.parametrize("confidence", [0.8, 0.95, 0.99])
def test_matches_scipy_wilson_for_every_k(n: int, confidence: float) -> None:
    for k in range(n + 1) if n <= 100 else (0, 1, 7, 500, 999, 1000):
        ours = wilson_interval(k, n, confidence)
        ref = stats.binomtest(k, n).proportion_ci(confidence_level=confidence,
                                                  method="wilson")
        assert ours.estimate == pytest.approx(k / n)
        assert ours.low == pytest.approx(ref.low, abs=1e-12)
        assert ours.high == pytest.approx(ref.high, abs=1e-12)
        assert ours.low <= ours.estimate <= ours.high


def test_all_or_nothing_reach_the_bounds_exactly() -> None:
    assert wilson_interval(0, 20).low == 0.0
    assert wilson_interval(20, 20).high == 1.0
    assert 0 < wilson_interval(0, 20).high < 0.2  # but is not a point


def test_no_trials_give_no_rate_rather_than_zero() -> None:
    assert wilson_interval(0, 0) == Proportion(0, 0, None, None, None, 0.95)


def test_whole_floats_are_counts() -> None:
    assert wilson_interval(3.0, 4.0) == wilson_interval(3, 4)  # type: ignore[arg-type]


@pytest.mark.parametrize(("k", "n", "confidence", "message"), [
    (-1, 5, 0.95, "k must not be negative"),
    (2, -5, 0.95, "n must not be negative"),
    (6, 5, 0.95, r"k \(6\) cannot exceed n \(5\)"),
    (1.5, 5, 0.95, "k must be a whole number"),
    ("1", 5, 0.95, "k must be a whole number"),
    (True, 5, 0.95, "k must be a whole number"),
    (1, 5, 1.0, "confidence must be a number strictly between 0 and 1"),
    (1, 5, 0, "confidence must be a number strictly between 0 and 1"),
    (1, 5, 95, "confidence must be a number strictly between 0 and 1"),
])
def test_bad_input_is_a_clear_error(k: object, n: object, confidence: object,
                                    message: str) -> None:
    with pytest.raises(ValueError, match=message):
        wilson_interval(k, n, confidence)  # type: ignore[arg-type]
