"""Composite rubric scores and the per-criterion breakdown."""

from __future__ import annotations

import numpy as np
import pytest

from assay.core.stats import (
    CriterionSummary,
    composite_score,
    criterion_breakdown,
    normalise_weights,
)


def test_weighted_mean_with_relative_weights() -> None:
    values = {"accuracy": 1.0, "tone": 0.5, "brevity": 0.25}
    assert composite_score(values, {"accuracy": 2, "tone": 1, "brevity": 1}) == \
        pytest.approx((2 * 1.0 + 0.5 + 0.25) / 4)
    # the same weights written as fractions give the same composite
    assert composite_score(values, {"accuracy": 0.5, "tone": 0.25, "brevity": 0.25}) == \
        pytest.approx(0.6875)


def test_a_zero_weight_criterion_is_scored_but_does_not_count() -> None:
    assert composite_score({"a": 0.2, "b": 1.0}, {"a": 1, "b": 0}) == pytest.approx(0.2)


def test_normalised_weights_sum_to_one() -> None:
    assert normalise_weights({"a": 3, "b": 1}) == {"a": 0.75, "b": 0.25}


@pytest.mark.parametrize(("values", "weights", "message"), [
    ({"a": 0.5}, {}, "weights must map at least one criterion"),
    ({"a": 0.5}, {"a": -1}, "weights must not be negative: a"),
    ({"a": 0.5, "b": 0.5}, {"a": 0, "b": 0}, "weights must have a positive sum"),
    ({"a": 0.5}, {"a": float("nan")}, r"weights\['a'\] must be a finite number"),
    ({"a": 0.5}, {"a": "1"}, r"weights\['a'\] must be a number"),
    ({"a": 0.5}, {"a": 1, "b": 1}, "no value for weighted criteria: b"),
    ({"a": 0.5, "c": 0.1}, {"a": 1}, "no weight for criteria: c"),
    ({"a": 1.5}, {"a": 1}, r"values\['a'\] must be normalised to 0..1"),
    ({"a": -0.1}, {"a": 1}, r"values\['a'\] must be normalised to 0..1"),
    ({"a": None}, {"a": 1}, r"values\['a'\] must be a number"),
])
def test_bad_composite_input_is_a_clear_error(values: dict[str, object],
                                              weights: dict[str, object],
                                              message: str) -> None:
    with pytest.raises(ValueError, match=message):
        composite_score(values, weights)  # type: ignore[arg-type]


def test_breakdown_matches_numpy_with_the_population_std() -> None:
    rows = [{"accuracy": 0.9, "tone": 0.4}, {"accuracy": 0.5}, {"accuracy": 0.7, "tone": 1.0}]
    breakdown = criterion_breakdown(rows)
    assert list(breakdown) == ["accuracy", "tone"]
    accuracy = np.array([0.9, 0.5, 0.7])
    assert breakdown["accuracy"] == CriterionSummary(
        3, pytest.approx(accuracy.mean()), 0.5, 0.9,  # type: ignore[arg-type]
        pytest.approx(accuracy.std(ddof=0)))  # type: ignore[arg-type]
    assert breakdown["tone"].n == 2
    assert breakdown["tone"].std == pytest.approx(0.3)


def test_breakdown_of_one_score_has_zero_spread_and_of_none_is_empty() -> None:
    assert criterion_breakdown([{"a": 0.3}])["a"] == CriterionSummary(1, 0.3, 0.3, 0.3, 0.0)
    assert criterion_breakdown([]) == {}


@pytest.mark.parametrize(("rows", "message"), [
    ([{"a": 0.5}, 0.3], r"rows\[1\] must map criteria to values"),
    ([{"a": float("inf")}], r"rows\[0\]\['a'\] must be a finite number"),
])
def test_bad_breakdown_input_is_a_clear_error(rows: list[object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        criterion_breakdown(rows)  # type: ignore[arg-type]
