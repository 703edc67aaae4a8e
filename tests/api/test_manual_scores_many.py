"""One score given to every repeat of a cell at once (a manual scorer per criterion), all or
none: one bad output or value leaves every output as it was."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import func, select

from assay.core.projects.models import AuditEvent, Role
from assay.core.runs.models import Output
from assay.core.scoring.models import Score
from assay.extensions import db
from tests.factories import Factory, Session, succeed


@pytest.fixture
def cell(factory: Factory) -> dict[str, Any]:
    """A run of one case, one target and three repeats: two replied, one still pending."""
    owner = factory.user()
    project = factory.project(owner, "Repeats")
    planned = factory.planned_run(owner, project, cases=1, targets=1, repeats=3)
    with db.factory() as session:
        rows = session.execute(select(Output.id, Output.repeat).where(
            Output.run_id == planned.run_id).order_by(Output.repeat)).all()
    assert [r.repeat for r in rows] == [0, 1, 2]
    ids = [r.id for r in rows]
    for output_id in ids[:2]:
        succeed(output_id, f"Reply {output_id}")
    _, version_id = factory.scorer(project, "Quality", params={
        "scale": "criteria", "criteria": ["accuracy", "tone"]})
    reviewer = factory.login(factory.member(project, Role.reviewer))
    return {"project": project, "run_id": planned.run_id, "replied": ids[:2],
            "pending": ids[2], "version_id": version_id, "reviewer": reviewer,
            "url": f"/api/projects/{project.id}/runs/{planned.run_id}/scores/{version_id}"}


def _mine(output_ids: list[int]) -> dict[int, dict[str, Any]]:
    with db.factory() as session:
        scores = session.scalars(select(Score).where(Score.output_id.in_(output_ids)))
        return {s.output_id: s.details["entered"]["criteria"] for s in scores}


def test_every_repeat_of_a_cell_takes_the_same_score(cell: dict[str, Any]) -> None:
    reviewer: Session = cell["reviewer"]
    body = {"output_ids": cell["replied"], "criteria": {"accuracy": 5, "tone": 3}}
    reply = reviewer.request("PUT", cell["url"], json=body)
    assert reply.status_code == 200, reply.json
    items = reply.json["items"]
    assert [i["value"] for i in items] == [0.75, 0.75]
    assert [i["criteria"] for i in items] == [{"accuracy": 1.0, "tone": 0.5}] * 2
    assert all(i["author_id"] == reviewer.user_id for i in items)
    assert _mine(cell["replied"]) == {o: {"accuracy": 5, "tone": 3} for o in cell["replied"]}
    # again: both updated, still one score each
    again = {**body, "criteria": {"accuracy": 2, "tone": 2}}
    reply = reviewer.request("PUT", cell["url"], json=again)
    assert reply.status_code == 200
    assert _mine(cell["replied"]) == {o: {"accuracy": 2, "tone": 2} for o in cell["replied"]}
    with db.factory() as session:
        events = session.scalar(select(func.count()).select_from(AuditEvent).where(
            AuditEvent.action == "score.manual_set"))
    assert events == 4


@pytest.mark.parametrize(("body", "status", "field"), [
    ({"criteria": {"accuracy": 5}}, 422, "criteria"),  # a criterion missing
    ({"criteria": {"accuracy": 5, "tone": 4}, "with_pending": True}, 422, "output_id"),
    ({"criteria": {"accuracy": 5, "tone": 4}, "twice": True}, 422, "output_ids"),
    ({"criteria": {"accuracy": 5, "tone": 4}, "foreign": True}, 404, None),
])
def test_one_bad_output_or_value_leaves_every_output_unscored(
        cell: dict[str, Any], body: dict[str, Any], status: int, field: str | None) -> None:
    ids = list(cell["replied"])
    if body.pop("with_pending", False):
        ids.append(cell["pending"])
    if body.pop("twice", False):
        ids.append(ids[0])
    if body.pop("foreign", False):
        ids.append(10_000_000)
    reply = cell["reviewer"].request("PUT", cell["url"], json={"output_ids": ids, **body})
    assert reply.status_code == status, reply.json
    if field:
        errors = reply.json["errors"]
        assert any(field in fields for fields in errors.values()), errors
    assert _mine(cell["replied"]) == {}


def test_viewers_cannot_score_and_an_empty_list_is_refused(
        factory: Factory, cell: dict[str, Any]) -> None:
    viewer = factory.login(factory.member(cell["project"], Role.viewer))
    body = {"output_ids": cell["replied"], "criteria": {"accuracy": 5, "tone": 4}}
    assert viewer.request("PUT", cell["url"], json=body).status_code == 403
    reply = cell["reviewer"].request("PUT", cell["url"], json={**body, "output_ids": []})
    assert reply.status_code == 422 and "output_ids" in reply.json["errors"]["json"]
