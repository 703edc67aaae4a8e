"""Runs API. Importing the package registers every route module on one blueprint."""

from assay.api.runs import (  # noqa: F401  (register their routes)
    attach,
    case_view,
    comparisons,
    control,
    grid,
    results,
    routes,
    scores,
    statistics,
)
from assay.api.runs.blueprint import blp

__all__ = ["blp"]
