"""Per-case flakiness across repeats."""

from __future__ import annotations

import numpy as np
import pytest

from assay.core.stats import flakiness, wilson_interval


def test_pass_flips_make_a_case_flaky() -> None:
    report = flakiness({"stable-pass": [1, 1, 1], "stable-fail": [0, 0, 0],
                        "flip": [1, 0, 1], "bools": [True, False], "once": [1]})
    by_case = {case.case: case for case in report.cases}
    assert report.binary
    assert [by_case[c].flaky for c in ("stable-pass", "stable-fail", "flip", "bools")] == \
        [False, False, True, True]
    assert by_case["flip"].passes == 2 and by_case["flip"].repeats == 3
    assert by_case["flip"].std == pytest.approx(np.std([1, 0, 1]))
    assert by_case["once"].flaky is False
    # the single-repeat case cannot be flaky and is not counted
    assert (report.n_cases, report.n_flaky) == (4, 2)
    assert report.flaky_share == wilson_interval(2, 4)
    assert report.mean_std == pytest.approx(np.mean([0, 0, np.std([1, 0, 1]), 0.5]))


def test_scores_are_flaky_beyond_the_tolerance() -> None:
    data = {"a": [0.8, 0.82, 0.81], "b": [0.2, 0.9]}
    strict = flakiness(data)
    assert not strict.binary and strict.n_flaky == 2
    assert strict.cases[0].passes is None
    assert strict.cases[0].spread == pytest.approx(0.02)
    lenient = flakiness(data, tolerance=0.05)
    assert [case.flaky for case in lenient.cases] == [False, True]
    assert lenient.tolerance == 0.05


def test_no_repeats_no_flakiness_share() -> None:
    report = flakiness({"a": [1], "b": []})
    assert [case.case for case in report.cases] == ["a"]  # cases without values left out
    assert report.n_cases == 0 and report.mean_std is None
    assert report.flaky_share.estimate is None
    assert flakiness({}).cases == ()


@pytest.mark.parametrize(("data", "kwargs", "message"), [
    ([[1, 0]], {}, "values_by_case must map each case"),
    ({"a": "10"}, {}, r"values_by_case\['a'\] must be a sequence"),
    ({"a": [1, None]}, {}, r"values_by_case\['a'\]\[1\] must be a number"),
    ({"a": [1, 0]}, {"tolerance": -0.1}, "tolerance must not be negative"),
    ({"a": [1, 0]}, {"confidence": 2}, "confidence must be"),
])
def test_bad_input_is_a_clear_error(data: object, kwargs: dict[str, object],
                                    message: str) -> None:
    with pytest.raises(ValueError, match=message):
        flakiness(data, **kwargs)  # type: ignore[arg-type]
