"""Inter-judge and judge-human agreement, and position bias, on published examples."""

from __future__ import annotations

import math

import pytest

from assay.core.stats import (
    cohens_kappa,
    judge_human_agreement,
    krippendorff_alpha,
    position_bias_rate,
    wilson_interval,
)

_ = None
# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability": 4 observers, 12 units
RELIABILITY_DATA = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, _, _, _],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, _, 3],
    [_, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, _],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, _],
]
# Wikipedia, "Krippendorff's alpha", computational example: 3 coders, 15 units
WIKIPEDIA_DATA = [
    [_, _, _, _, _, 3, 4, 1, 2, 1, 1, 3, 3, _, 3],
    [1, _, 2, 1, 3, 3, 4, 3, _, _, _, _, _, _, _],
    [_, _, 2, 1, 3, 4, 4, _, 2, 1, 1, 3, 3, _, 4],
]


def table(yes_yes: int, yes_no: int, no_yes: int, no_no: int) -> tuple[list[str], list[str]]:
    """Two raters' labels from a 2x2 table (rows: rater A, columns: rater B)."""
    a = ["yes"] * (yes_yes + yes_no) + ["no"] * (no_yes + no_no)
    b = ["yes"] * yes_yes + ["no"] * yes_no + ["yes"] * no_yes + ["no"] * no_no
    return a, b


@pytest.mark.parametrize(("cells", "kappa"), [
    ((20, 5, 10, 15), 0.4),  # Wikipedia, "Cohen's kappa", simple example
    ((45, 15, 25, 15), 0.1304),  # same agreement, different marginals
    ((25, 35, 5, 35), 0.2593),
])
def test_cohens_kappa_wikipedia_examples(cells: tuple[int, int, int, int],
                                         kappa: float) -> None:
    result = cohens_kappa(*table(*cells))
    assert result.kappa == pytest.approx(kappa, abs=5e-5)
    assert result.n == sum(cells)


def test_cohens_kappa_artstein_and_poesio_table_4() -> None:
    a = [0] * 46 + [1] * 44 + [2] * 10
    b = [0] * 52 + [1] * 32 + [2] * 16
    assert cohens_kappa(a, b).kappa == pytest.approx(0.8013, abs=5e-5)


def test_weighted_kappa_counts_disagreements_by_distance() -> None:
    # the weighting example of scikit-learn's test suite: 0.9315, 0.9412, 0.9541
    a = [0] * 46 + [1] * 44 + [2] * 10
    b = [0] * 50 + [1] * 40 + [2] * 10
    assert cohens_kappa(a, b).kappa == pytest.approx(0.9315, abs=5e-5)
    assert cohens_kappa(a, b, weights="linear").kappa == pytest.approx(0.9412, abs=5e-5)
    assert cohens_kappa(a, b, weights="quadratic").kappa == pytest.approx(0.9541, abs=5e-5)


def test_weighted_kappa_on_named_ordinal_labels_needs_their_order() -> None:
    names = ["low", "mid", "high"]
    a = [names[i] for i in [0] * 46 + [1] * 44 + [2] * 10]
    b = [names[i] for i in [0] * 50 + [1] * 40 + [2] * 10]
    # sorted by name, "high" would come before "low": no order is guessed
    with pytest.raises(ValueError, match="give categories in order"):
        cohens_kappa(a, b, weights="quadratic")
    with pytest.raises(ValueError, match="give categories in order"):
        krippendorff_alpha([a, b], level="ordinal")
    assert cohens_kappa(a, b).kappa == pytest.approx(0.9315, abs=5e-5)  # nominal: no order
    result = cohens_kappa(a, b, weights="quadratic", categories=names)
    assert result.kappa == pytest.approx(0.9541, abs=5e-5)
    assert result.categories == ("low", "mid", "high")


def test_kappa_drops_unrated_items_and_handles_no_variation() -> None:
    result = cohens_kappa([1, 2, None, 1, math.nan], [1, 2, 2, None, 1])
    assert (result.kappa, result.n, result.dropped) == (1.0, 2, 3)
    same = cohens_kappa(["pass"] * 5, ["pass"] * 5)
    assert same.kappa is None and same.observed_agreement == 1.0  # chance explains it all
    empty = cohens_kappa([None], [1])
    assert (empty.kappa, empty.n, empty.observed_agreement) == (None, 0, None)


@pytest.mark.parametrize(("a", "b", "kwargs", "message"), [
    ([1, 2], [1], {}, "a and b must rate the same items: got 2 and 1 ratings"),
    ("ab", "ab", {}, "must be sequences of labels, not strings"),
    ([1, 2], [1, 2], {"weights": "cubic"}, "weights must be None, 'linear' or 'quadratic'"),
    ([1, 3], [1, 2], {"categories": [1, 2]}, "labels not among the categories: 3"),
    ([1, 2], [1, 2], {"categories": [1, 1, 2]}, "categories must not repeat a label"),
    (["a", 1], ["a", 1], {"weights": "linear"}, "give categories in order"),
])
def test_bad_kappa_input_is_a_clear_error(a: object, b: object, kwargs: dict[str, object],
                                          message: str) -> None:
    with pytest.raises(ValueError, match=message):
        cohens_kappa(a, b, **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(("level", "alpha"), [
    ("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849), ("ratio", 0.797),
])
def test_krippendorff_alpha_reliability_data_example(level: str, alpha: float) -> None:
    result = krippendorff_alpha(RELIABILITY_DATA, level=level)  # type: ignore[arg-type]
    assert round(result.alpha, 3) == alpha  # type: ignore[arg-type]
    # unit 12 has a single value and is left out; 40 pairable values remain
    assert (result.n_judges, result.n_units, result.n_values) == (4, 11, 40)


def test_krippendorff_alpha_wikipedia_example() -> None:
    assert krippendorff_alpha(WIKIPEDIA_DATA).alpha == pytest.approx(0.691, abs=5e-4)
    assert krippendorff_alpha(WIKIPEDIA_DATA, level="interval").alpha == \
        pytest.approx(0.811, abs=5e-4)


def test_ordinal_alpha_on_named_labels_in_their_order() -> None:
    names = {1: "very low", 2: "low", 3: "mid", 4: "high", 5: "very high"}
    named = [[None if v is None else names[v] for v in row] for row in RELIABILITY_DATA]
    result = krippendorff_alpha(named, level="ordinal", categories=list(names.values()))
    assert round(result.alpha, 3) == 0.815  # type: ignore[arg-type]


def test_alpha_for_two_raters_approaches_scotts_pi_in_large_samples() -> None:
    # nominal alpha for two coders differs from Scott's pi only by a small-sample
    # correction (Krippendorff 2004); pi pools both coders' marginals for chance
    a, b = table(2000, 500, 1000, 1500)
    observed = 3500 / 5000
    pooled_yes = (2500 + 3000) / 10000
    chance = pooled_yes ** 2 + (1 - pooled_yes) ** 2
    scotts_pi = (observed - chance) / (1 - chance)
    assert krippendorff_alpha([a, b]).alpha == pytest.approx(scotts_pi, abs=1e-3)
    assert cohens_kappa(a, b).kappa == pytest.approx(0.4)  # kappa keeps each rater's own


def test_alpha_undefined_without_pairs_or_variation() -> None:
    assert krippendorff_alpha([[1, None], [None, 2]]).alpha is None
    assert krippendorff_alpha([[1, 1], [1, 1]]).alpha is None
    assert krippendorff_alpha([[0, 1, 2], [0, 1, 2]], level="ratio").alpha == 1.0


@pytest.mark.parametrize(("ratings", "kwargs", "message"), [
    ([[1, 2, 3]], {}, "agreement needs at least two judges, got 1"),
    ([[1, 2, 3], [1, 2]], {}, r"must cover the same units: got rows of lengths \[2, 3\]"),
    ([[1, 2], [1, 2]], {"level": "cardinal"}, "level must be one of nominal, ordinal"),
    ([["a", "b"], ["a", "b"]], {"level": "interval"}, "interval ratings must be a number"),
    ([[1, -2], [1, 2]], {"level": "ratio"}, "ratio ratings must not be negative"),
    ([[1, 2], "ab"], {}, r"ratings\[1\] must be a sequence"),
    ("ab", {}, "ratings must be a sequence of judges' rows"),
])
def test_bad_alpha_input_is_a_clear_error(ratings: object, kwargs: dict[str, object],
                                          message: str) -> None:
    with pytest.raises(ValueError, match=message):
        krippendorff_alpha(ratings, **kwargs)  # type: ignore[arg-type]


def test_judge_human_agreement_where_humans_scored() -> None:
    judge = {"c1": 4, "c2": 3, "c3": 5, "c4": 2, "c5": 1, "c6": 4}
    human = {"c1": 4, "c2": 2, "c3": 5, "c4": 2, "c5": None, "c7": 3}
    result = judge_human_agreement(judge, human, level="ordinal")
    assert (result.n, result.judge_only, result.human_only) == (4, 2, 1)
    assert result.mean_abs_difference == pytest.approx(0.25)
    assert result.exact_agreement == pytest.approx(0.75)
    pairs = ([4, 3, 5, 2], [4, 2, 5, 2])
    assert result.kappa == cohens_kappa(*pairs, weights="quadratic")
    assert result.alpha == krippendorff_alpha(list(pairs), level="ordinal")


def test_judge_human_agreement_on_pass_fail_labels() -> None:
    judge = {1: "pass", 2: "fail", 3: "pass", 4: "pass"}
    human = {1: "pass", 2: "fail", 3: "fail", 4: "pass"}
    result = judge_human_agreement(judge, human, level="nominal")
    assert result.mean_abs_difference is None  # labels, not numbers
    assert result.kappa.weights is None
    assert result.kappa.kappa == pytest.approx(0.5)
    assert judge_human_agreement({1: True}, {2: False}, level="nominal").n == 0


@pytest.mark.parametrize(("judge", "human", "kwargs", "message"), [
    ([1, 2], {0: 1}, {}, "judge must map each case to its score"),
    ({0: 1}, [1], {}, "human must map each case to its score"),
    ({0: 1}, {0: 1}, {"level": "metric"}, "level must be one of"),
    ({0: "good"}, {0: "bad"}, {"level": "interval"}, "interval ratings must be a number"),
])
def test_bad_judge_human_input_is_a_clear_error(judge: object, human: object,
                                                kwargs: dict[str, object],
                                                message: str) -> None:
    with pytest.raises(ValueError, match=message):
        judge_human_agreement(judge, human, **kwargs)  # type: ignore[arg-type]


def test_position_bias_rate_is_a_wilson_interval_over_judged_pairs() -> None:
    result = position_bias_rate([True, False, False, None, True, False])
    assert result == wilson_interval(2, 5)
    assert position_bias_rate([]).estimate is None


def test_bad_position_bias_flag_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="must be True, False or None; got 'yes'"):
        position_bias_rate([True, "yes"])  # type: ignore[list-item]
