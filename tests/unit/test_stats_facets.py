"""Facets: outputs grouped by tag, length bucket and difficulty, each group with its mean
(case-clustered CI) and pass rate (Wilson)."""

from __future__ import annotations

import pytest

from assay.core.datasets.coverage import BUCKETS as COVERAGE_BUCKETS
from assay.core.stats import (
    LENGTH_BUCKETS,
    FacetRecord,
    facets,
    length_bucket,
    mean_ci,
    wilson_interval,
)


def records() -> list[FacetRecord]:
    return [
        FacetRecord("c1", 0.9, True, ("billing", "refunds"), "easy", 30, 400),
        FacetRecord("c1", 0.7, True, ("billing", "refunds"), "easy", 30, 380),  # a repeat
        FacetRecord("c2", 0.2, False, ("billing",), "hard", 700, 2_000),
        FacetRecord("c3", 0.5, None, (), None, 120, None),  # no verdict, no output length
        FacetRecord("c4", None, False, ("refunds",), "expert", 6_000, 10),  # not scored
    ]


def test_groups_by_tag_with_several_tags_per_case() -> None:
    by_tag = {g.key: g for g in facets(records(), n_resamples=200).by_tag}
    assert list(by_tag) == ["billing", "refunds", "(untagged)"]  # most outputs first
    billing = by_tag["billing"]
    assert (billing.n_outputs, billing.n_cases) == (3, 2)
    assert billing.mean == mean_ci({"c1": [0.9, 0.7], "c2": [0.2]}, n_resamples=200)
    assert billing.pass_rate == wilson_interval(2, 3)
    refunds = by_tag["refunds"]
    assert refunds.mean.n_values == 2 and refunds.pass_rate == wilson_interval(2, 3)
    untagged = by_tag["(untagged)"]
    assert untagged.pass_rate.n == 0 and untagged.pass_rate.estimate is None
    assert untagged.mean.mean == 0.5 and untagged.mean.low is None  # one case: no interval


def test_groups_by_length_of_input_or_output() -> None:
    by_input = facets(records(), n_resamples=200)
    assert [(g.key, g.n_outputs) for g in by_input.by_length] == \
        [("XS", 2), ("S", 1), ("M", 1), ("XL", 1)]
    by_output = facets(records(), length_of="output", n_resamples=200)
    assert by_output.length_of == "output"
    assert [(g.key, g.n_outputs) for g in by_output.by_length] == \
        [("XS", 1), ("M", 2), ("L", 1), ("unknown", 1)]


def test_groups_by_difficulty_in_scale_order() -> None:
    by_difficulty = facets(records(), n_resamples=200).by_difficulty
    assert [g.key for g in by_difficulty] == ["easy", "hard", "expert", "unset"]
    easy = by_difficulty[0]
    assert easy.mean.mean == pytest.approx(0.8) and easy.n_cases == 1


@pytest.mark.parametrize(("chars", "bucket"), [
    (0, "XS"), (49, "XS"), (50, "S"), (199, "S"), (200, "M"), (999, "M"), (1_000, "L"),
    (4_999, "L"), (5_000, "XL"), (10**7, "XL"),
])
def test_length_bucket_boundaries(chars: int, bucket: str) -> None:
    assert length_bucket(chars) == bucket


def test_length_buckets_are_the_dataset_coverage_buckets() -> None:
    assert LENGTH_BUCKETS == COVERAGE_BUCKETS


def test_no_records_no_groups() -> None:
    empty = facets([])
    assert (empty.by_tag, empty.by_length, empty.by_difficulty) == ((), (), ())


@pytest.mark.parametrize(("record", "kwargs", "message"), [
    ({"case": "c1"}, {}, r"records\[0\] must be a FacetRecord, got dict"),
    (FacetRecord("c1", float("nan")), {}, r"records\[0\].value must be a finite number"),
    (FacetRecord("c1", passed="yes"), {}, r"records\[0\].passed must be True, False or None"),
    (FacetRecord("c1", tags="billing"), {}, r"records\[0\].tags must be a tuple"),
    (FacetRecord("c1", tags=("",)), {}, r"records\[0\].tags must be a tuple"),
    (FacetRecord("c1", difficulty=3), {}, r"records\[0\].difficulty must be a string"),
    (FacetRecord("c1", input_chars=-1), {}, r"records\[0\].input_chars must not be negative"),
    (FacetRecord("c1"), {"length_of": "prompt"}, "length_of must be 'input' or 'output'"),
    (FacetRecord("c1"), {"n_resamples": 1}, "n_resamples must be"),
])
def test_bad_input_is_a_clear_error(record: object, kwargs: dict[str, object],
                                    message: str) -> None:
    with pytest.raises(ValueError, match=message):
        facets([record], **kwargs)  # type: ignore[list-item, arg-type]
