"""Runs API. Importing the package registers every route module on one blueprint."""

from assay.api.runs import control, results, routes  # noqa: F401  (register their routes)
from assay.api.runs.blueprint import blp

__all__ = ["blp"]
