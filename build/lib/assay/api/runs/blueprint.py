"""The runs blueprint, shared by the route modules of this package (creation, control,
results), so each concern keeps its own module."""

from assay.api.base import Blueprint

blp = Blueprint("runs", __name__, url_prefix="/api/projects/<int:project_id>/runs",
                description="Runs: planning, control, progress and results")
