"""An iteration's facets (edison FR-RV-004) on one split of the experiment's cases: per
model, its case composites grouped by tag, input length and difficulty (core/stats/facets),
each group's mean with its case-clustered bootstrap interval.

The values are the iteration's aggregate (the composites the dashboard shows), so a facet
and the headline never disagree. The split is the aggregate's: "refinement" (the cases the
refiner sees), "holdout" (the cases it never sees: where a gain is honest) or "all". A
composite carries no verdict, so the groups' pass rates are empty (n = 0)."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.orm import Session

from assay.core import stats
from assay.core.errors import Invalid
from assay.core.experiments.aggregate import SETS
from assay.core.experiments.models import Experiment, Iteration
from assay.core.scoring.run_facets import version_case_facts
from assay.core.scoring.statistics import CONFIDENCE, RESAMPLES

SPLITS = SETS  # "all", "refinement", "holdout"


@dataclass(frozen=True)
class ModelFacets:
    label: str  # the run target's model and parameters, as the aggregate names it
    n_cases: int  # cases of the split with a composite
    facets: stats.Facets


def split_cases(experiment: Experiment, split: str) -> set[int] | None:
    """The split's case ids; None for "all" (every case the iteration scored)."""
    if split not in SPLITS:
        message = f"Must be one of: {', '.join(SPLITS)}."
        raise Invalid(f"Unknown split {split!r}", {"split": [message]})
    if split == "all":
        return None
    return set((experiment.refinement_case_ids if split == "refinement"
                else experiment.holdout_case_ids) or [])


def iteration_facets(session: Session, experiment: Experiment, iteration: Iteration,
                     split: str) -> list[ModelFacets]:
    """One entry per model of the iteration's aggregate (by label); none before it is
    aggregated."""
    members = split_cases(experiment, split)
    composites = ((iteration.aggregate or {}).get("cases") or {})
    if not composites:
        return []
    facts = version_case_facts(session, iteration.dataset_version_id
                               or experiment.dataset_version_id)
    found = []
    for label, per_case in sorted(composites.items()):
        records = []
        for key, value in per_case.items():
            case_id = int(key)
            if members is not None and case_id not in members:
                continue
            fact = facts.get(case_id)
            records.append(stats.FacetRecord(
                case=case_id, value=float(value), tags=fact.tags if fact else (),
                difficulty=fact.difficulty if fact else None,
                input_chars=fact.input_chars if fact else None))
        found.append(ModelFacets(label, len(records), stats.facets(
            records, length_of="input", confidence=CONFIDENCE, n_resamples=RESAMPLES)))
    return found
