"""The experiment loop's API: iterations, suggestions and their review, loop control, and
the experiment's live progress."""

from assay.api.iterations import facets as _facets  # noqa: F401  (registers its route)
from assay.api.iterations.routes import blp

__all__ = ["blp"]
