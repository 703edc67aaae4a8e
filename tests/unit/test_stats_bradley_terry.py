"""Bradley-Terry ratings: a published fit, an independent maximum-likelihood check with
scipy.optimize, ties, the virtual-tie prior, intervals and the cases without a fit."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from scipy import optimize

from assay.core.stats import bradley_terry

SCALE = 400 / math.log(10)  # rating points per unit of log-strength
# Agresti (2002), Categorical Data Analysis, 2nd ed., section 10.6: the 1987 American
# League East; WINS[i][j] = games team i won against team j (13 games per pair)
TEAMS = ["Milwaukee", "Detroit", "Toronto", "New York", "Boston", "Cleveland", "Baltimore"]
WINS = [[0, 7, 9, 7, 7, 9, 11], [6, 0, 7, 5, 11, 9, 9], [4, 6, 0, 7, 7, 8, 12],
        [6, 8, 6, 0, 6, 7, 10], [6, 2, 6, 7, 0, 7, 12], [4, 4, 5, 6, 6, 0, 6],
        [2, 4, 1, 3, 1, 7, 0]]
# his fitted log-strengths, Baltimore = 0
PUBLISHED = {"Milwaukee": 1.58, "Detroit": 1.44, "Toronto": 1.29, "New York": 1.25,
             "Boston": 1.11, "Cleveland": 0.68, "Baltimore": 0.0}


def baseball() -> list[tuple[str, str, str]]:
    return [(TEAMS[i], TEAMS[j], "a") for i in range(7) for j in range(7)
            for _ in range(WINS[i][j])]


def ratings(result: object) -> dict[str, float]:
    return {r.item: r.rating for r in result.ratings}  # type: ignore[attr-defined]


def scipy_fit(comparisons: list[tuple[str, str, str]], virtual_ties: float) -> dict[str, float]:
    """The maximiser of the (penalised) log-likelihood by BFGS, written out directly."""
    names = sorted({n for a, b, _ in comparisons for n in (a, b)})
    index = {n: i for i, n in enumerate(names)}
    first = np.array([index[a] for a, _, _ in comparisons])
    second = np.array([index[b] for _, b, _ in comparisons])
    share = np.array([{"a": 1.0, "b": 0.0, "tie": 0.5}[w] for _, _, w in comparisons])

    def negative_log_likelihood(theta: np.ndarray) -> float:
        gap = theta[first] - theta[second]
        total = (share * np.logaddexp(0, -gap) + (1 - share) * np.logaddexp(0, gap)).sum()
        # virtual ties against an opponent at 0: half a win and half a loss each
        total += virtual_ties / 2 * (np.logaddexp(0, -theta) + np.logaddexp(0, theta)).sum()
        return float(total)

    start = np.zeros(len(names))
    if virtual_ties == 0:  # hold the first item at 0: the likelihood ignores a shift
        fit = optimize.minimize(lambda free: negative_log_likelihood(np.append(0.0, free)),
                                start[1:], method="BFGS", options={"gtol": 1e-10})
        theta = np.append(0.0, fit.x)
    else:
        theta = optimize.minimize(negative_log_likelihood, start, method="BFGS",
                                  options={"gtol": 1e-10}).x
    theta -= theta.mean()
    return {n: 1000 + SCALE * theta[i] for n, i in index.items()}


def test_agresti_baseball_estimates() -> None:
    result = bradley_terry(baseball(), virtual_ties=0, n_resamples=200)
    fitted = ratings(result)
    for team, strength in PUBLISHED.items():
        gap = (fitted[team] - fitted["Baltimore"]) / SCALE
        assert gap == pytest.approx(strength, abs=0.005), team
    assert [r.item for r in result.ratings] == list(PUBLISHED)  # best first
    assert result.ratings[0].games == 78 and result.ratings[0].wins == 50


def test_maximum_likelihood_matches_scipy_optimize_with_ties() -> None:
    rng = np.random.default_rng(12)
    names, strength = ["m1", "m2", "m3", "m4", "m5"], [0.8, 0.3, 0.0, -0.2, -0.9]
    comparisons = []
    for _ in range(300):
        i, j = rng.choice(5, size=2, replace=False)
        p_i = 1 / (1 + math.exp(strength[j] - strength[i]))
        u = rng.random()
        winner = "tie" if u < 0.15 else ("a" if u < 0.15 + 0.85 * p_i else "b")
        comparisons.append((names[i], names[j], winner))
    ours = ratings(bradley_terry(comparisons, virtual_ties=0, n_resamples=100))
    reference = scipy_fit(comparisons, 0)
    for name in names:
        assert ours[name] == pytest.approx(reference[name], abs=1e-3)


def test_virtual_ties_fit_matches_scipy_on_the_penalised_likelihood() -> None:
    comparisons = [("A", "B", "a")] * 6 + [("A", "C", "a")] * 4 + [("B", "C", "a")] * 3 \
        + [("C", "B", "tie")] * 2  # A never lost: no plain maximum-likelihood fit
    result = bradley_terry(comparisons, virtual_ties=1, n_resamples=100)
    reference = scipy_fit(comparisons, 1)
    for name, value in ratings(result).items():
        assert value == pytest.approx(reference[name], abs=1e-3)
    top = result.ratings[0]
    assert (top.item, top.flags, top.losses) == ("A", ("undefeated",), 0)
    assert result.ratings[-1].flags == ()  # C tied, so it is not winless
    assert all(math.isfinite(r.low) and math.isfinite(r.high)  # type: ignore[arg-type]
               for r in result.ratings)


def test_scale_is_elo_like() -> None:
    # 10 wins in 11 games: odds 10:1, which is 400 points; the mean rating is 1000
    result = bradley_terry([("A", "B", "a")] * 10 + [("A", "B", "b")], virtual_ties=0,
                           n_resamples=100)
    fitted = ratings(result)
    assert fitted["A"] - fitted["B"] == pytest.approx(400)
    assert (fitted["A"] + fitted["B"]) / 2 == pytest.approx(1000)


def test_a_tie_counts_half_a_win_each() -> None:
    ties = bradley_terry([("A", "B", "tie")] * 2 + [("A", "C", "a"), ("C", "A", "a")],
                         virtual_ties=0, n_resamples=100)
    split = bradley_terry([("A", "B", "a"), ("A", "B", "b"), ("A", "C", "a"),
                           ("C", "A", "a")], virtual_ties=0, n_resamples=100)
    assert ratings(ties) == pytest.approx(ratings(split))
    assert ratings(ties) == pytest.approx({"A": 1000, "B": 1000, "C": 1000})
    assert [r.ties for r in ties.ratings if r.item == "A"] == [2]


def test_intervals_hold_the_estimate_and_seeds_reproduce_them() -> None:
    comparisons = baseball()
    first = bradley_terry(comparisons, seed=3, n_resamples=300)
    assert first == bradley_terry(comparisons, seed=3, n_resamples=300)
    assert first != bradley_terry(comparisons, seed=4, n_resamples=300)
    for rating in first.ratings:
        assert rating.low < rating.rating < rating.high  # type: ignore[operator]
    narrower = bradley_terry(comparisons * 4, seed=3, n_resamples=300)
    width = {r.item: r.high - r.low for r in first.ratings}  # type: ignore[operator]
    for rating in narrower.ratings:  # four times the games: about half the width
        assert rating.high - rating.low < 0.7 * width[rating.item]  # type: ignore[operator]


def test_items_without_games_are_flagged_not_rated() -> None:
    result = bradley_terry([("A", "B", "a"), ("B", "A", "a")], items=["C", "A"],
                           n_resamples=100)
    last = result.ratings[-1]
    assert (last.item, last.rating, last.low, last.flags) == ("C", None, None, ("no_games",))
    assert {r.item for r in result.ratings[:2]} == {"A", "B"}
    empty = bradley_terry([], items=["A"], n_resamples=100)
    assert [(r.item, r.rating) for r in empty.ratings] == [("A", None)]


def test_results_are_finite_for_lopsided_data() -> None:
    result = bradley_terry([("A", "B", "a")] * 3 + [("B", "C", "a")] * 3, n_resamples=200)
    flags = {r.item: r.flags for r in result.ratings}
    assert flags == {"A": ("undefeated",), "B": (), "C": ("winless",)}
    numbers = [v for r in result.ratings for v in (r.rating, r.low, r.high)]
    assert all(isinstance(v, float) and math.isfinite(v) for v in numbers)
    assert ratings(result)["A"] > ratings(result)["B"] > ratings(result)["C"]


def test_separate_groups_cannot_be_rated_together() -> None:
    with pytest.raises(ValueError, match=r"separate groups .*\{A, B\} and \{C, D\}"):
        bradley_terry([("A", "B", "a"), ("B", "A", "a"), ("C", "D", "a"), ("D", "C", "tie")])


def test_pure_maximum_likelihood_refuses_an_unbeaten_group() -> None:
    with pytest.raises(ValueError, match=r"no maximum-likelihood ratings.*virtual_ties > 0"):
        bradley_terry([("A", "B", "a")] * 3 + [("B", "C", "a"), ("C", "B", "a")],
                      virtual_ties=0)


def test_resamples_without_a_fit_are_counted() -> None:
    # A's single loss is often missing from a resample, leaving A unbeaten there
    comparisons = [("A", "B", "a")] * 3 + [("B", "C", "a")] * 3 + [("C", "B", "a")] * 2 \
        + [("A", "C", "b")]
    result = bradley_terry(comparisons, virtual_ties=0, n_resamples=400)
    assert 0 < result.discarded_resamples < 400
    assert bradley_terry(comparisons, n_resamples=400).discarded_resamples == 0


def test_result_serialises_to_json_types() -> None:
    result = bradley_terry(baseball(), n_resamples=100)
    as_dict = dataclasses.asdict(result)
    assert as_dict["ratings"][0]["item"] == "Milwaukee"
    assert type(as_dict["ratings"][0]["rating"]) is float


@pytest.mark.parametrize(("comparisons", "kwargs", "message"), [
    ([("A", "A", "a")], {}, r"comparisons\[0\] compares 'A' with itself"),
    ([("A", "B", "draw")], {}, r"winner must be 'a', 'b' or 'tie', got 'draw'"),
    ([("A", "B")], {}, r"comparisons\[0\] must be \(item_a, item_b, winner\)"),
    ([("A", 3, "a")], {}, "item names must be non-empty strings, got 3"),
    ([("A", "", "a")], {}, "item names must be non-empty strings"),
    ([("A", "B", "a")], {"items": [None]}, "items: item names must be non-empty strings"),
    ([("A", "B", "a")], {"virtual_ties": -1}, "virtual_ties must not be negative"),
    ([("A", "B", "a")], {"virtual_ties": math.inf}, "virtual_ties must be a finite number"),
    ([("A", "B", "a")], {"confidence": 1}, "confidence must be"),
    ([("A", "B", "a")], {"n_resamples": 5}, "n_resamples must be"),
])
def test_bad_input_is_a_clear_error(comparisons: list[object], kwargs: dict[str, object],
                                    message: str) -> None:
    with pytest.raises(ValueError, match=message):
        bradley_terry(comparisons, **kwargs)  # type: ignore[arg-type]
