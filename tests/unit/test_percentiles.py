"""Nearest-rank percentiles, as the run summary computes them (in SQL, with the same ranks)."""

from __future__ import annotations

import random

import pytest

from assay.core.runs.results import nearest_rank, rank


def by_definition(values: list[int], p: int) -> int:
    """The smallest recorded value with at least p% of the values at or below it."""
    return min(v for v in values if sum(1 for w in values if w <= v) * 100 >= p * len(values))


@pytest.mark.parametrize(("values", "p", "expected"), [
    # the worked examples of the nearest-rank method
    ([15, 20, 35, 40, 50], 5, 15), ([15, 20, 35, 40, 50], 30, 20),
    ([15, 20, 35, 40, 50], 40, 20), ([15, 20, 35, 40, 50], 50, 35),
    ([15, 20, 35, 40, 50], 100, 50),
    ([3, 6, 7, 8, 8, 10, 13, 15, 16, 20], 25, 7), ([3, 6, 7, 8, 8, 10, 13, 15, 16, 20], 50, 8),
    ([3, 6, 7, 8, 8, 10, 13, 15, 16, 20], 75, 15),
    ([3, 6, 7, 8, 8, 10, 13, 15, 16, 20], 100, 20),
    ([3, 6, 7, 8, 8, 9, 10, 13, 15, 16, 20], 25, 7),
    ([3, 6, 7, 8, 8, 9, 10, 13, 15, 16, 20], 50, 9),
    ([42], 50, 42), ([42], 95, 42), ([1, 2], 50, 1), ([1, 2], 95, 2),
])
def test_textbook_examples(values: list[int], p: int, expected: int) -> None:
    assert nearest_rank(values, p) == expected


def test_no_values_no_percentile() -> None:
    assert nearest_rank([], 50) is None


def test_ranks_use_exact_integer_arithmetic() -> None:
    assert [rank(n, 95) for n in (1, 19, 20, 21, 100, 101)] == [1, 19, 19, 20, 95, 96]
    assert [rank(n, 50) for n in (1, 2, 3, 4, 5)] == [1, 1, 2, 2, 3]
    assert rank(10**12, 95) == 95 * 10**10  # no float rounding however large


def test_matches_the_definition_on_random_data() -> None:
    rng = random.Random(5)
    for _ in range(300):
        values = [rng.randint(0, 50) for _ in range(rng.randint(1, 60))]
        for p in (1, 5, 25, 50, 90, 95, 99, 100):
            assert nearest_rank(values, p) == by_definition(values, p), (values, p)
