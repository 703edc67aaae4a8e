"""An iteration's aggregate: composites and criterion means with intervals per model, on
all, refinement and held-out cases, the delta vs the previous iteration with its paired
verdict, and the weakest criteria."""

from __future__ import annotations

import random

import pytest

from assay.core.experiments.aggregate import Row, aggregate, headline

WEIGHTS = {"helpfulness": 0.5, "empathy": 0.3, "accuracy": 0.2}
REFINEMENT, HOLDOUT = set(range(1, 15)), set(range(15, 21))


def rows(shift: float, seed: int, model: str = "fake-fast") -> list[Row]:
    rng = random.Random(seed)
    out = []
    for case in range(1, 21):
        for _judge in range(2):
            out.append(Row(model, case, {
                "helpfulness": min(1.0, 0.7 + shift + rng.uniform(-0.05, 0.05)),
                "empathy": min(1.0, 0.3 + shift + rng.uniform(-0.05, 0.05)),
                "accuracy": min(1.0, 0.5 + shift + rng.uniform(-0.05, 0.05))}))
    return out


def test_composite_and_criteria_carry_intervals_on_each_set() -> None:
    result = aggregate(rows(0.0, 1), WEIGHTS, REFINEMENT, HOLDOUT, resamples=200)
    entry = result["models"]["fake-fast"]
    assert entry["all"]["composite"]["n"] == 20
    assert entry["refinement"]["composite"]["n"] == 14
    assert entry["holdout"]["composite"]["n"] == 6
    composite = entry["all"]["composite"]
    assert composite["low"] < composite["mean"] < composite["high"]
    assert composite["mean"] == pytest.approx(0.5 * 0.7 + 0.3 * 0.3 + 0.2 * 0.5, abs=0.02)
    assert entry["all"]["criteria"]["empathy"]["mean"] == pytest.approx(0.3, abs=0.02)
    assert result["weakest"] == ["empathy", "accuracy"]
    assert result["best_model"] == "fake-fast" and result["delta"] == {}
    assert headline(result)[0] == composite["mean"]


def test_the_delta_vs_the_previous_iteration_has_a_paired_verdict() -> None:
    first = aggregate(rows(0.0, 1), WEIGHTS, REFINEMENT, HOLDOUT, resamples=200)
    better = aggregate(rows(0.1, 2), WEIGHTS, REFINEMENT, HOLDOUT, first, resamples=200)
    delta = better["delta"]["fake-fast"]
    assert delta["all"]["verdict"] == "B better" and delta["all"]["n"] == 20
    assert delta["holdout"]["n"] == 6 and delta["holdout"]["mean_difference"] == \
        pytest.approx(0.1, abs=0.03)
    same = aggregate(rows(0.0, 3), WEIGHTS, REFINEMENT, HOLDOUT, first, resamples=200)
    assert same["delta"]["fake-fast"]["all"]["verdict"] == "not distinguishable"


def test_a_case_missing_a_weighted_criterion_has_no_composite() -> None:
    partial = [Row("m", 1, {"helpfulness": 1.0, "empathy": 1.0}),
               Row("m", 2, {"helpfulness": 1.0, "empathy": 1.0, "accuracy": 1.0})]
    result = aggregate(partial, WEIGHTS, {1, 2}, set(), resamples=200)
    assert result["models"]["m"]["all"]["composite"]["n"] == 1
    assert result["cases"]["m"] == {"2": 1.0}
    assert result["models"]["m"]["holdout"]["composite"]["mean"] is None


def test_models_are_kept_apart_and_the_best_is_the_headline() -> None:
    result = aggregate(rows(0.0, 1, "a") + rows(0.2, 1, "b"), WEIGHTS, REFINEMENT, HOLDOUT,
                       resamples=200)
    assert result["best_model"] == "b"
    assert headline(result)[2] == result["models"]["b"]["holdout"]["composite"]["mean"]


def test_the_win_rate_counts_paired_cases_and_ties_half_from_composites() -> None:
    from assay.core.experiments.aggregate import win_rates

    now = {"m": {"1": 0.9, "2": 0.5, "3": 0.4, "4": 1.0}}
    before = {"m": {"1": 0.5, "2": 0.5, "3": 0.6}}  # case 4 is new: not paired
    found = win_rates(now, before, None, resamples=200)["m"]
    assert found["source"] == "composite" and found["n"] == 3
    assert found["mean"] == pytest.approx(0.5)  # a win, a tie, a loss
    assert 0 <= found["low"] <= found["mean"] <= found["high"] <= 1
    assert win_rates(now, {}, None) == {}  # the first iteration has none


def test_the_pairwise_verdicts_replace_the_composites_when_given() -> None:
    from assay.core.experiments.aggregate import win_rates

    now, before = {"m": {"1": 0.2, "2": 0.2}}, {"m": {"1": 0.9, "2": 0.9}}
    verdicts = {"m": {1: [1.0, 0.5], 2: [1.0, 1.0]}}  # two judges
    found = win_rates(now, before, verdicts, resamples=200)["m"]
    assert found["source"] == "pairwise" and found["n"] == 2
    assert found["mean"] == pytest.approx(0.875)
    assert win_rates(now, before, {}) == {}  # a pairwise judge that judged nothing
    result = aggregate(rows(0.1, 2), WEIGHTS, REFINEMENT, HOLDOUT,
                       aggregate(rows(0.0, 1), WEIGHTS, REFINEMENT, HOLDOUT, resamples=100),
                       resamples=100)
    assert result["win_rate"]["fake-fast"]["mean"] == 1.0  # better on every case
