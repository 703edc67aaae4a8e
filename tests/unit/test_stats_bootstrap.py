"""Means with case-clustered bootstrap intervals: agreement with scipy.stats.bootstrap
when there are no repeats, the effect of clustering, seeds and degenerate inputs."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from assay.core.stats import MeanCI, case_means, mean_ci


def singletons(values: np.ndarray) -> dict[int, list[float]]:
    return {i: [float(v)] for i, v in enumerate(values)}


def clustered_sample(rng: np.random.Generator, cases: int, repeats: int,
                     noise: float) -> dict[int, list[float]]:
    """Cases whose repeats share a strong case effect (highly correlated repeats)."""
    return {case: list(centre + rng.normal(0, noise, repeats))
            for case, centre in enumerate(rng.normal(0, 1, cases))}


@pytest.mark.parametrize(("method", "scipy_method"), [("percentile", "percentile"),
                                                      ("bca", "BCa")])
def test_unclustered_interval_agrees_with_scipy_bootstrap(method: str,
                                                          scipy_method: str) -> None:
    x = np.random.default_rng(7).exponential(size=40)  # skewed: BCa and percentile differ
    ours = mean_ci(singletons(x), method=method, n_resamples=40_000)  # type: ignore[arg-type]
    ref = stats.bootstrap((x,), np.mean, method=scipy_method, n_resamples=40_000,
                          confidence_level=0.95, rng=np.random.default_rng(1))
    width = ref.confidence_interval.high - ref.confidence_interval.low
    assert ours.mean == pytest.approx(x.mean())
    assert ours.low == pytest.approx(ref.confidence_interval.low, abs=0.02 * width)
    assert ours.high == pytest.approx(ref.confidence_interval.high, abs=0.02 * width)


def test_bca_corrects_for_skew() -> None:
    x = np.random.default_rng(7).exponential(size=40)
    percentile = mean_ci(singletons(x), n_resamples=20_000)
    bca = mean_ci(singletons(x), method="bca", n_resamples=20_000)
    assert bca.low > percentile.low and bca.high > percentile.high  # right skew: shifts up


def test_clustered_interval_is_wider_when_repeats_are_correlated() -> None:
    data = clustered_sample(np.random.default_rng(3), cases=200, repeats=5, noise=0.1)
    clustered = mean_ci(data)
    naive = mean_ci(singletons(np.concatenate([np.asarray(v) for v in data.values()])))
    assert clustered.mean == pytest.approx(naive.mean)
    assert (clustered.high - clustered.low) > 1.8 * (naive.high - naive.low)


def test_clustering_costs_nothing_when_repeats_are_independent() -> None:
    rng = np.random.default_rng(4)
    data = {case: list(rng.normal(0, 1, 5)) for case in range(200)}
    clustered = mean_ci(data)
    naive = mean_ci(singletons(np.concatenate([np.asarray(v) for v in data.values()])))
    ratio = (clustered.high - clustered.low) / (naive.high - naive.low)
    assert 0.85 < ratio < 1.15


def test_clustered_interval_keeps_its_coverage_where_the_naive_one_fails() -> None:
    rng = np.random.default_rng(5)
    covered_clustered = covered_naive = 0
    trials = 200
    for _ in range(trials):  # the true mean is 0
        data = clustered_sample(rng, cases=40, repeats=5, noise=0.2)
        clustered = mean_ci(data, n_resamples=500)
        naive = mean_ci(singletons(np.concatenate([np.asarray(v) for v in data.values()])),
                        n_resamples=500)
        covered_clustered += clustered.low <= 0 <= clustered.high  # type: ignore[operator]
        covered_naive += naive.low <= 0 <= naive.high  # type: ignore[operator]
    assert covered_clustered / trials >= 0.88
    assert covered_naive / trials <= 0.75


def test_point_estimate_weighs_every_case_equally() -> None:
    result = mean_ci({"a": [1.0, 1.0, 1.0], "b": [0.0]}, n_resamples=200)
    assert result.mean == 0.5
    assert (result.n_cases, result.n_values) == (2, 4)


def test_a_case_is_resampled_with_its_repeats() -> None:
    # every resample mean is a mean of case means, so the interval stays within them
    result = mean_ci({"a": [0.0, 1.0], "b": [0.4, 0.6], "c": [0.5]}, n_resamples=500)
    assert result.low >= 0.5 - 1e-12 and result.high <= 0.5 + 1e-12  # type: ignore[operator]


def test_same_seed_same_interval_and_another_seed_another() -> None:
    data = clustered_sample(np.random.default_rng(6), cases=50, repeats=3, noise=0.3)
    assert mean_ci(data, seed=11) == mean_ci(data, seed=11)
    assert mean_ci(data, seed=11) != mean_ci(data, seed=12)


def test_degenerate_inputs() -> None:
    empty = mean_ci({})
    assert (empty.mean, empty.low, empty.high, empty.n_cases) == (None, None, None, 0)
    assert mean_ci({"a": [], "b": []}).mean is None  # cases without values are left out
    one = mean_ci({"a": [0.2, 0.4]})
    assert (one.mean, one.low, one.high, one.n_cases) == (pytest.approx(0.3), None, None, 1)
    flat = mean_ci({i: [0.7, 0.7] for i in range(30)})
    assert flat.low == flat.high == flat.mean == pytest.approx(0.7)
    assert mean_ci({"a": [1], "b": [0]}).low == 0.0  # two cases suffice


def test_result_records_how_it_was_computed() -> None:
    result = mean_ci({1: [0.0], 2: [1.0]}, confidence=0.9, n_resamples=300, method="bca")
    assert isinstance(result, MeanCI)
    assert (result.confidence, result.n_resamples, result.method) == (0.9, 300, "bca")


def test_higher_confidence_gives_a_wider_interval() -> None:
    x = singletons(np.random.default_rng(8).normal(size=60))
    narrow, wide = mean_ci(x, confidence=0.8), mean_ci(x, confidence=0.99)
    assert wide.low < narrow.low and wide.high > narrow.high  # type: ignore[operator]


def test_case_means() -> None:
    assert case_means({"a": [1, 2, 3], "b": [True, False], "c": []}) == {"a": 2.0, "b": 0.5}


@pytest.mark.parametrize(("data", "kwargs", "message"), [
    ([1.0, 2.0], {}, "must map each case to its values"),
    ({"a": 0.5}, {}, r"values_by_case\['a'\] must be a sequence of numbers"),
    ({"a": "0.5"}, {}, r"values_by_case\['a'\] must be a sequence of numbers"),
    ({"a": [0.5], "b": [float("nan")]}, {}, r"values_by_case\['b'\]\[0\] must be a finite"),
    ({"a": [0.5], "b": [1, "x"]}, {}, r"values_by_case\['b'\]\[1\] must be a number"),
    ({"a": [0.5], "b": [None]}, {}, r"values_by_case\['b'\]\[0\] must be a number"),
    ({"a": [0.5]}, {"confidence": 1.2}, "confidence must be"),
    ({"a": [0.5]}, {"n_resamples": 10}, "n_resamples must be an integer of at least 100"),
    ({"a": [0.5]}, {"method": "basic"}, "method must be one of percentile, bca"),
])
def test_bad_input_is_a_clear_error(data: object, kwargs: dict[str, object],
                                    message: str) -> None:
    with pytest.raises(ValueError, match=message):
        mean_ci(data, **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("cases", [2, 60, 140, 249])
def test_kept_draws_give_the_intervals_of_drawing_anew(monkeypatch: pytest.MonkeyPatch,
                                                       cases: int) -> None:
    """Small problems keep their draws' counts (one product a resample); large ones draw
    in blocks. Both are the same draws: the same interval, to rounding."""
    from assay.core.stats import bootstrap

    x = np.random.default_rng(cases).exponential(size=cases)
    kept = bootstrap.bootstrap_interval(x, confidence=0.95, n_resamples=2000, seed=4,
                                        method="percentile")
    again = bootstrap.bootstrap_interval(x + 1, confidence=0.95, n_resamples=2000, seed=4,
                                         method="percentile")
    monkeypatch.setattr(bootstrap, "KEPT_DRAWS", 0)
    drawn = bootstrap.bootstrap_interval(x, confidence=0.95, n_resamples=2000, seed=4,
                                         method="percentile")
    assert kept == pytest.approx(drawn, rel=1e-12, abs=1e-12)
    assert again == pytest.approx((drawn[0] + 1, drawn[1] + 1), rel=1e-12)  # kept, reused
    if cases > 2:  # (two cases' resample means take three values: any seed's quantiles)
        another = bootstrap.bootstrap_interval(x, confidence=0.95, n_resamples=2000, seed=5,
                                               method="percentile")
        assert another != drawn
