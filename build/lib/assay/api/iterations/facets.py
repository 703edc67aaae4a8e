"""An iteration's facets on the refinement, held-out or all cases (viewer and up)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from marshmallow import Schema, fields, validate

from assay.api.base import session
from assay.api.iterations.routes import ONE, _iteration, blp
from assay.api.runs.statistics_schemas import StatsFacetGroupSchema
from assay.core.experiments.facets import SPLITS, iteration_facets, split_cases
from assay.core.experiments.models import Experiment
from assay.core.projects.models import Role

GROUPS = ("by_tag", "by_length", "by_difficulty")


class IterationFacetArgs(Schema):
    split = fields.String(load_default="all", validate=validate.OneOf(SPLITS), metadata={
        "description": "refinement: the cases the refiner sees; holdout: the cases it never "
                       "sees; all: every case the iteration scored"})


class IterationModelFacetsSchema(Schema):
    label = fields.String(required=True, metadata={
        "description": "The model and parameters (names the model across iterations)"})
    n_cases = fields.Integer(required=True, metadata={
        "description": "Cases of the split with a composite"})
    by_tag = fields.List(fields.Nested(StatsFacetGroupSchema), required=True)
    by_length = fields.List(fields.Nested(StatsFacetGroupSchema), required=True)
    by_difficulty = fields.List(fields.Nested(StatsFacetGroupSchema), required=True)


class IterationFacetsSchema(Schema):
    number = fields.Integer(required=True)
    split = fields.String(required=True, validate=validate.OneOf(SPLITS))
    length_of = fields.String(required=True, metadata={
        "description": "Length buckets count the characters of the case's input"})
    split_cases = fields.Integer(required=True, allow_none=True, metadata={
        "description": "Cases in the split (null for all)"})
    models = fields.List(fields.Nested(IterationModelFacetsSchema), required=True, metadata={
        "description": "Empty until the iteration is aggregated"})


@blp.get(ONE + "/facets")
@blp.arguments(IterationFacetArgs, location="query")
@blp.response(200, IterationFacetsSchema)
def get_iteration_facets(args: dict[str, Any], project_id: int, experiment_id: int,
                         number: int) -> Any:
    """Per model, the iteration's case composites on one split grouped by tag, input length
    and difficulty, each group's mean with its 95% interval clustered by case"""
    iteration = _iteration(project_id, experiment_id, number, Role.viewer)
    experiment = session().get(Experiment, iteration.experiment_id)
    assert experiment is not None
    split = args["split"]
    found = iteration_facets(session(), experiment, iteration, split)
    members = split_cases(experiment, split)
    return {"number": iteration.number, "split": split, "length_of": "input",
            "split_cases": None if members is None else len(members),
            "models": [{"label": item.label, "n_cases": item.n_cases,
                        **{name: [asdict(group) for group in getattr(item.facets, name)]
                           for name in GROUPS}} for item in found]}
