"""Runs API. Importing the package registers every route module on one blueprint."""

from assay.api.runs import control, results, routes, scores  # noqa: F401  (their routes)
from assay.api.runs.blueprint import blp

__all__ = ["blp"]
