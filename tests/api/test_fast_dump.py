"""Response bodies dumped by api/dump.py's compiled dumpers are exactly marshmallow's: the
same reads answered with the fast path on and off, over a run with outputs of every kind
(succeeded with text, failed with an error, scored with a rationale, tagged cases)."""

from __future__ import annotations

import pytest
from flask import Flask

from assay.api import dump, kept_reads
from assay.api.base import page_of
from assay.api.runs.grid_schemas import ResultsGridSchema
from assay.api.runs.results_schemas import OutputDetailSchema, OutputSchema, ProgressSchema
from assay.api.runs.schemas import RunSchema
from tests.api.test_run_grid import Grid, world  # noqa: F401  (the populated run fixture)


@pytest.mark.parametrize("schema", [RunSchema(), RunSchema(many=True), OutputDetailSchema(),
                                    page_of(OutputSchema, estimated=True)(), ProgressSchema(),
                                    ResultsGridSchema()])
def test_the_hot_read_schemas_have_a_fast_dumper(schema: object) -> None:
    assert dump.compiled(schema) is not None  # type: ignore[arg-type]


def test_every_read_answers_the_same_with_and_without_the_fast_dump(
        app: Flask, world: Grid) -> None:  # noqa: F811
    project = f"/api/projects/{world.project.id}"
    run = f"{project}/runs/{world.run_id}"
    output = world.outputs[(0, 0)]
    paths = [
        "/api/projects", project, f"{project}/members", f"{project}/datasets",
        f"{project}/models", f"{project}/scorers", f"{project}/runs", run, f"{run}/progress",
        f"{run}/summary", f"{run}/outputs?page_size=3", f"{run}/outputs?status=failed",
        f"{run}/outputs/{output}", f"{run}/grid", f"{run}/grid?sort=score&order=desc",
        f"{run}/grid?tag=hard", f"{run}/statistics", f"{run}/cases/{world.cases[1]}",
        f"/api/projects/{world.project.id}/scorers/{world.scorer_id}/versions",
    ]
    for path in paths:
        kept_reads.forget(app)  # each answer made by its view, not one kept from the other
        fast = world.viewer.get(path)
        kept_reads.forget(app)
        dump.ENABLED = False
        try:
            slow = world.viewer.get(path)
        finally:
            dump.ENABLED = True
        assert fast.status_code == slow.status_code == 200, (path, fast.json)
        assert fast.json == slow.json, path


def test_a_schema_with_instance_options_leaves_its_class_dumper_alone() -> None:
    assert dump.compiled(RunSchema(many=True, exclude=("name",))) is None
    assert dump.compiled(RunSchema(many=True)) is not None


def test_a_schema_loaded_before_it_is_first_dumped_keeps_its_fast_dumper() -> None:
    from marshmallow import Schema, fields

    class Loaded(Schema):
        n = fields.Integer()

    Loaded().load({"n": 1})  # marshmallow's hook table gains empty entries on a load
    assert dump.compiled(Loaded()) is not None
