"""Statistics behind Assay's reports (DESIGN §6): every aggregate with its uncertainty.

Pure functions over plain Python values (NumPy/SciPy inside); results are frozen
dataclasses of numbers, strings, None and tuples, so `dataclasses.asdict` gives JSON.
Bad input raises ValueError with a message meant for the user."""

from assay.core.stats.agreement import (
    JudgeHumanAgreement,
    judge_human_agreement,
    position_bias_rate,
)
from assay.core.stats.bootstrap import MeanCI, case_means, mean_ci
from assay.core.stats.bradley_terry import BradleyTerryResult, Rating, bradley_terry
from assay.core.stats.composite import (
    CriterionSummary,
    composite_score,
    criterion_breakdown,
    normalise_weights,
)
from assay.core.stats.facets import (
    LENGTH_BUCKETS,
    FacetGroup,
    FacetRecord,
    Facets,
    facets,
    length_bucket,
)
from assay.core.stats.flakiness import CaseFlakiness, FlakinessReport, flakiness
from assay.core.stats.intervals import Proportion, wilson_interval
from assay.core.stats.kappa import Kappa, cohens_kappa
from assay.core.stats.krippendorff import Alpha, krippendorff_alpha
from assay.core.stats.paired import PairedComparison, compare_paired, verdict

__all__ = [
    "LENGTH_BUCKETS",
    "Alpha",
    "BradleyTerryResult",
    "CaseFlakiness",
    "CriterionSummary",
    "FacetGroup",
    "FacetRecord",
    "Facets",
    "FlakinessReport",
    "JudgeHumanAgreement",
    "Kappa",
    "MeanCI",
    "PairedComparison",
    "Proportion",
    "Rating",
    "bradley_terry",
    "case_means",
    "cohens_kappa",
    "compare_paired",
    "composite_score",
    "criterion_breakdown",
    "facets",
    "flakiness",
    "judge_human_agreement",
    "krippendorff_alpha",
    "length_bucket",
    "mean_ci",
    "normalise_weights",
    "position_bias_rate",
    "verdict",
    "wilson_interval",
]
