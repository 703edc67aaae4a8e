"""The package's public results are plain data: JSON through dataclasses.asdict."""

from __future__ import annotations

import dataclasses
import json

import pytest

import assay.core.stats as stats


def test_every_public_result_serialises_to_json() -> None:
    results = [
        stats.wilson_interval(3, 10),
        stats.mean_ci({"a": [0.1, 0.3], "b": [0.9]}, n_resamples=100),
        stats.compare_paired({1: 0.2, 2: 0.4, 3: 0.5}, {1: 0.6, 2: 0.5, 3: 0.9},
                             n_resamples=100),
        stats.criterion_breakdown([{"a": 0.5}])["a"],
        stats.flakiness({"a": [1, 0], "b": [1, 1]}),
        stats.cohens_kappa([1, 2, 3], [1, 2, 2]),
        stats.krippendorff_alpha([[1, 2, 3], [1, 2, 2]]),
        stats.judge_human_agreement({1: 0.5, 2: 1.0}, {1: 0.5, 2: 0.0}),
        stats.bradley_terry([("A", "B", "a"), ("B", "A", "tie")], n_resamples=100),
        stats.facets([stats.FacetRecord("c", 0.5, True, ("t",), "easy", 10, 10)],
                     n_resamples=100),
    ]
    for result in results:
        assert dataclasses.is_dataclass(result)
        text = json.dumps(dataclasses.asdict(result))  # type: ignore[arg-type]
        assert "NaN" not in text and "Infinity" not in text


def test_results_are_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        stats.wilson_interval(1, 2).k = 2  # type: ignore[misc]


def test_exports_exist() -> None:
    assert all(hasattr(stats, name) for name in stats.__all__)
