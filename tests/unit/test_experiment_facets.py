"""The split an iteration's facets cover: the experiment's refinement or held-out case ids,
or every case; an unknown split is refused with the field named (core, without HTTP)."""

from __future__ import annotations

import pytest

from assay.core.errors import Invalid
from assay.core.experiments.facets import SPLITS, split_cases
from assay.core.experiments.models import Experiment


def _experiment() -> Experiment:
    return Experiment(refinement_case_ids=[1, 2, 3], holdout_case_ids=[4, 5])


def test_each_split_names_its_cases() -> None:
    experiment = _experiment()
    assert split_cases(experiment, "refinement") == {1, 2, 3}
    assert split_cases(experiment, "holdout") == {4, 5}
    assert split_cases(experiment, "all") is None
    assert set(SPLITS) == {"all", "refinement", "holdout"}


@pytest.mark.parametrize("bad", ["held-out", "", "Refinement"])
def test_an_unknown_split_is_invalid_on_its_field(bad: str) -> None:
    with pytest.raises(Invalid) as raised:
        split_cases(_experiment(), bad)
    assert "refinement, holdout" in raised.value.errors["split"][0]
