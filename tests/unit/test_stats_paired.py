"""Paired comparisons: the right test and its SciPy p-value, effect sizes, dropped cases,
and the verdict, which follows the interval of B - A."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from assay.core.stats import compare_paired, verdict


def continuous_pair(seed: int = 0, n: int = 30,
                    shift: float = 0.1) -> tuple[dict[int, float], dict[int, float]]:
    rng = np.random.default_rng(seed)
    a = rng.uniform(0.2, 0.8, n)
    b = a + shift + rng.normal(0, 0.1, n)
    return dict(enumerate(map(float, a))), dict(enumerate(map(float, b)))


def test_continuous_scores_use_wilcoxon_as_scipy_computes_it() -> None:
    a, b = continuous_pair()
    result = compare_paired(a, b)
    diff = np.array([b[k] - a[k] for k in a])
    assert result.test == "wilcoxon_signed_rank" and not result.binary
    assert result.p_value == pytest.approx(stats.wilcoxon(diff).pvalue, rel=1e-12)
    assert result.mean_difference == pytest.approx(diff.mean())
    assert result.mean_a == pytest.approx(np.mean(list(a.values())))
    assert result.mean_b == pytest.approx(np.mean(list(b.values())))
    assert result.effect_size == pytest.approx(diff.mean() / diff.std(ddof=1))
    assert result.pass_rate_difference is None
    assert (result.b_higher, result.a_higher, result.equal) == (
        int((diff > 0).sum()), int((diff < 0).sum()), 0)
    assert result.low < result.mean_difference < result.high  # type: ignore[operator]
    assert result.verdict == "B better"


def differences(values: list[float]) -> tuple[dict[int, float], dict[int, float]]:
    """A at 0 so that B - A is each value exactly (ties stay ties)."""
    return {i: 0.0 for i in range(len(values))}, dict(enumerate(values))


def test_zero_differences_are_dropped_before_the_exact_test() -> None:
    values = [0, 0, 0.1, 0.2, -0.05, 0.3, 0.15, 0.25, 0.05, -0.1, 0.35, 0.4]
    result = compare_paired(*differences(values))
    d = np.array([v for v in values if v])  # ten left, with ties: SciPy enumerates them
    assert result.p_value == pytest.approx(stats.wilcoxon(d).pvalue)
    assert result.equal == 2


def test_small_samples_with_ties_match_scipy_exhaustive_permutations() -> None:
    values = [0.1, 0.1, 0.2, -0.1, 0.3, 0.3, 0.3, -0.2]
    result = compare_paired(*differences(values))
    assert result.p_value == pytest.approx(stats.wilcoxon(np.array(values)).pvalue)


def test_ties_up_to_fifty_get_the_exact_permutation_p_value() -> None:
    rng = np.random.default_rng(9)
    values = [float(v) for v in rng.integers(-2, 5, 20) if v][:14]
    a, b = differences([v / 10 for v in values])
    d = np.array([b[i] - a[i] for i in a])
    ranks = stats.rankdata(np.abs(d))
    signs = (np.arange(2 ** len(d))[:, None] >> np.arange(len(d))) & 1  # every sign pattern
    sums = signs @ ranks
    observed = ranks[d > 0].sum()
    tolerance = 1e-9
    brute = min(1.0, 2 * min((sums <= observed + tolerance).mean(),
                             (sums >= observed - tolerance).mean()))
    assert compare_paired(a, b).p_value == pytest.approx(brute)


def test_beyond_fifty_cases_the_normal_approximation_as_scipy_computes_it() -> None:
    rng = np.random.default_rng(10)
    values = [float(v) for v in np.round(rng.normal(0.1, 0.3, 80), 1)]
    result = compare_paired(*differences(values))
    assert result.p_value == pytest.approx(stats.wilcoxon(np.array(values)).pvalue)


def test_pass_fail_uses_the_exact_mcnemar_sign_test() -> None:
    # discordant cases: B alone passed 9, A alone passed 1; 10 cases agree
    a = [0] * 9 + [1] + [1] * 5 + [0] * 5
    b = [1] * 9 + [0] + [1] * 5 + [0] * 5
    result = compare_paired(dict(enumerate(a)), dict(enumerate(b)))
    assert result.binary and result.test == "mcnemar_exact"
    assert result.p_value == pytest.approx(2 * 11 / 1024)  # 2·P(X <= 1), X ~ Bin(10, 1/2)
    assert result.p_value == pytest.approx(stats.binomtest(9, 10, 0.5).pvalue)
    assert result.pass_rate_difference == pytest.approx(0.4)
    assert (result.b_higher, result.a_higher, result.equal) == (9, 1, 10)


def test_identical_sides_are_not_distinguishable_with_p_one() -> None:
    same = {i: float(i % 2) for i in range(20)}
    result = compare_paired(same, same)
    assert (result.mean_difference, result.low, result.high) == (0.0, 0.0, 0.0)
    assert result.p_value == 1.0 and result.effect_size is None
    assert result.verdict == "not distinguishable"
    scores = {i: i / 20 for i in range(20)}
    assert compare_paired(scores, scores).p_value == 1.0


def test_only_cases_both_sides_scored_count() -> None:
    a = {i: 0.5 for i in range(10)}
    b = {i: 0.7 for i in range(4, 16)}
    result = compare_paired(a, b)
    assert (result.n, result.dropped_a, result.dropped_b) == (6, 4, 6)
    assert result.mean_difference == pytest.approx(0.2)


def test_no_common_case_or_a_single_one() -> None:
    none = compare_paired({"x": 1.0}, {"y": 0.0})
    assert (none.n, none.mean_difference, none.p_value, none.test) == (0, None, None, None)
    assert none.verdict == "not distinguishable"
    one = compare_paired({"x": 0.2}, {"x": 0.9})
    assert one.mean_difference == pytest.approx(0.7)
    assert (one.low, one.high, one.effect_size) == (None, None, None)
    assert one.verdict == "not distinguishable"


def test_the_interval_rule_flips_exactly_at_the_interval_boundary() -> None:
    rng = np.random.default_rng(2)
    d = rng.normal(0, 1, 25)
    zeros = {i: 0.0 for i in range(25)}
    base = compare_paired(zeros, dict(enumerate(map(float, d))))
    # a constant shift moves every resample mean, hence both bounds, by that constant
    for shift, expected in [(-base.low + 1e-9, "B better"),  # type: ignore[operator]
                            (-base.low - 1e-9, "not distinguishable"),  # type: ignore[operator]
                            (-base.high + 1e-9, "not distinguishable"),  # type: ignore[operator]
                            (-base.high - 1e-9, "A better")]:  # type: ignore[operator]
        shifted = compare_paired(zeros, {i: float(v + shift) for i, v in enumerate(d)})
        assert verdict(shifted.low, shifted.high) == expected, (shift, shifted.low, shifted.high)
        # the whole verdict also asks the test: never a side the interval does not favour
        assert shifted.verdict in (expected, "not distinguishable")
        if shifted.p_value is not None and shifted.p_value <= 0.05:
            assert shifted.verdict == expected


def test_a_side_is_better_only_when_the_test_agrees() -> None:
    """Three cases, all one way: the interval is [d, d] (excludes 0), the exact test's
    p is 0.25: not distinguishable. Twelve such cases: p < 0.001, B better."""
    three = compare_paired({i: 0.0 for i in range(3)}, {i: 1.0 for i in range(3)})
    assert (three.low, three.high) == (1.0, 1.0) and three.p_value == pytest.approx(0.25)
    assert three.verdict == "not distinguishable"
    twelve = compare_paired({i: 0.0 for i in range(12)}, {i: 1.0 for i in range(12)})
    assert twelve.p_value is not None and twelve.p_value < 0.001
    assert twelve.verdict == "B better"
    assert verdict(0.1, 0.3, p_value=0.2) == "not distinguishable"
    assert verdict(0.1, 0.3, p_value=0.04) == "B better"


def test_verdict_rule() -> None:
    assert verdict(0.0, 0.3) == "not distinguishable"  # the interval holds zero
    assert verdict(-0.3, 0.0) == "not distinguishable"
    assert verdict(1e-12, 0.3) == "B better"
    assert verdict(-0.3, -1e-12) == "A better"
    assert verdict(None, None) == "not distinguishable"
    assert verdict(0.1, 0.3, higher_is_better=False) == "A better"


def test_lower_is_better_for_latency() -> None:
    a = {i: 900.0 + i for i in range(20)}
    b = {i: 500.0 + i for i in range(20)}
    assert compare_paired(a, b, higher_is_better=False).verdict == "B better"
    assert compare_paired(a, b).verdict == "A better"


def test_binary_can_be_forced_off() -> None:
    a = dict(enumerate([0, 1, 0, 1, 0, 0, 1, 0]))
    b = dict(enumerate([1, 1, 1, 1, 0, 1, 1, 1]))
    assert compare_paired(a, b, binary=False).test == "wilcoxon_signed_rank"
    assert compare_paired(a, b).test == "mcnemar_exact"


def test_seed_reproduces_the_interval() -> None:
    a, b = continuous_pair(seed=3)
    assert compare_paired(a, b, seed=5) == compare_paired(a, b, seed=5)
    assert compare_paired(a, b, seed=5).low != compare_paired(a, b, seed=6).low


@pytest.mark.parametrize(("a", "b", "kwargs", "message"), [
    ([0.1], {0: 0.2}, {}, "a must map each case to its value"),
    ({0: 0.1}, [0.2], {}, "b must map each case to its value"),
    ({0: float("inf")}, {0: 0.2}, {}, r"a\[0\] must be a finite number"),
    ({0: 0.1}, {0: "high"}, {}, r"b\[0\] must be a number"),
    ({0: 0.5}, {0: 1.0}, {"binary": True}, "binary=True needs every value to be 0 or 1"),
    ({0: 0.5}, {0: 1.0}, {"confidence": 0.0}, "confidence must be"),
    ({0: 0.5}, {0: 1.0}, {"n_resamples": 0}, "n_resamples must be"),
    ({0: 0.5}, {0: 1.0}, {"method": "normal"}, "method must be one of"),
])
def test_bad_input_is_a_clear_error(a: object, b: object, kwargs: dict[str, object],
                                    message: str) -> None:
    with pytest.raises(ValueError, match=message):
        compare_paired(a, b, **kwargs)  # type: ignore[arg-type]
