"""The results grid through the API: rows are cases in dataset order, one cell per target
with its outputs and scores; sorting, filtering (targets, score range, verdict, status, error
class, tag), paging by offset, and a clear 422 for each bad argument."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from sqlalchemy import select, update

from assay.core.auth.models import User
from assay.core.datasets.models import Case
from assay.core.projects.models import Project, Role
from assay.core.runs.models import CellStatus, Output
from assay.core.scoring.apply import CellScore, insert_scores, score_row
from assay.extensions import db
from assay.scorers.base import ScoreResult
from tests.factories import Factory, Session


@dataclass
class Grid:
    factory: Factory
    owner: User
    project: Project
    run_id: int
    targets: list[int]
    cases: list[int]
    outputs: dict[tuple[int, int], int]  # (case index, target index) -> output id
    scorer_id: int
    version_id: int
    viewer: Session

    def get(self, **args: Any) -> Any:
        query = "&".join(f"{k}={v}" for k, v in args.items())
        return self.viewer.get(f"/api/projects/{self.project.id}/runs/{self.run_id}/grid"
                               f"?{query}")

    def ok(self, **args: Any) -> dict[str, Any]:
        reply = self.get(**args)
        assert reply.status_code == 200, reply.json
        return dict(reply.json)


def _set(output_id: int, **values: Any) -> None:
    with db.factory() as session:
        session.execute(update(Output).where(Output.id == output_id).values(**values))
        session.commit()


@pytest.fixture
def world(factory: Factory) -> Grid:
    """4 cases x 2 targets. Target 0 answers every case (latency 100 * (case + 1), cost
    10 * (case + 1)), scored 1.0 / 0.25 / 0.5 / none by a judge-like scorer; target 1 fails
    case 1 with a timeout and answers the rest. Case 2 is tagged "hard"."""
    owner = factory.user()
    project = factory.project(owner, "Grid")
    planned = factory.planned_run(owner, project, cases=4, targets=2)
    scorer_id, version_id = factory.scorer(project, "Exact", kind="regex",
                                         params={"pattern": "^Reply"})
    outputs: dict[tuple[int, int], int] = {}
    with db.factory() as session:
        for o in session.scalars(select(Output).where(Output.run_id == planned.run_id)):
            outputs[(planned.case_ids.index(o.case_id), planned.target_ids.index(o.target_id))] \
                = o.id
        session.execute(update(Case).where(Case.id == planned.case_ids[2]).values(
            tags=["hard", "math"]))
        session.commit()
    for (c, t), output_id in outputs.items():
        if (c, t) == (1, 1):
            _set(output_id, status=CellStatus.failed, error_class="timeout",
                 error_message="Timed out after 30 s", attempts=1)
        else:
            _set(output_id, status=CellStatus.succeeded, text=f"Reply {c}-{t} " + "x" * 500,
                 latency_ms=100 * (c + 1) + t, cost_micros=10 * (c + 1), tokens_in=5,
                 tokens_out=c, attempts=1)
    rows = []
    for c, value in ((0, 1.0), (1, 0.25), (2, 0.5)):
        rows.append(score_row(planned.run_id, outputs[(c, 0)], planned.target_ids[0],
                              planned.case_ids[c], CellScore(version_id, "regex",
                              ScoreResult(value, value >= 0.5, rationale=f"Because {c}"))))
    with db.factory() as session:
        insert_scores(session, rows)
        session.commit()
    viewer = factory.login(factory.member(project, Role.viewer))
    return Grid(factory, owner, project, planned.run_id, planned.target_ids, planned.case_ids,
                outputs, scorer_id, version_id, viewer)


def _cases(body: dict[str, Any], world: Grid) -> list[int]:
    return [world.cases.index(r["case_id"]) for r in body["rows"]]


def test_rows_are_cases_with_one_cell_per_target(world: Grid) -> None:
    body = world.ok()
    assert body["total"] == 4 and body["offset"] == 0 and body["limit"] == 50
    assert [t["target_id"] for t in body["targets"]] == world.targets
    assert _cases(body, world) == [0, 1, 2, 3]
    first = body["rows"][0]
    assert first["input"] == "Question 0?" and first["position"] == 0
    assert [c["target_id"] for c in first["cells"]] == world.targets
    out = first["cells"][0]["outputs"][0]
    assert out["id"] == world.outputs[(0, 0)] and out["status"] == "succeeded"
    assert out["text"].startswith("Reply 0-0 ") and len(out["text"]) == 400
    assert out["text_length"] == len("Reply 0-0 ") + 500
    assert (out["latency_ms"], out["cost_micros"], out["tokens_in"], out["tokens_out"]) \
        == (100, 10, 5, 0)
    [score] = out["scores"]
    assert score["scorer_name"] == "Exact" and score["value"] == 1.0 and score["passed"]
    assert score["rationale"] == "Because 0" and score["scorer_version_id"] == world.version_id
    failed = body["rows"][1]["cells"][1]["outputs"][0]
    assert failed["status"] == "failed" and failed["error_class"] == "timeout"
    assert failed["error"] == "Timed out after 30 s" and failed["scores"] == []
    assert body["rows"][2]["tags"] == ["hard", "math"]


def test_pages_by_offset_and_limit(world: Grid) -> None:
    body = world.ok(offset=1, limit=2)
    assert body["total"] == 4 and _cases(body, world) == [1, 2]
    assert _cases(world.ok(offset=3, limit=2), world) == [3]


def test_sorts(world: Grid) -> None:
    assert _cases(world.ok(order="desc"), world) == [3, 2, 1, 0]
    # mean score over the row; case 3 has none: last either way
    assert _cases(world.ok(sort="score"), world) == [1, 2, 0, 3]
    assert _cases(world.ok(sort="score", order="desc"), world) == [0, 2, 1, 3]
    assert _cases(world.ok(sort="latency", order="desc"), world) == [3, 2, 1, 0]
    assert _cases(world.ok(sort="errors", order="desc"), world)[0] == 1
    # one target's column: target 1 has no latency on case 1 (it failed): last
    assert _cases(world.ok(sort="latency", sort_target_id=world.targets[1]), world) \
        == [0, 2, 3, 1]
    # case 1 costs 20 (its failed cell cost nothing), as much as case 0: dataset order
    assert _cases(world.ok(sort="cost", order="desc"), world) == [3, 2, 0, 1]


def test_filters(world: Grid) -> None:
    only = world.ok(target_ids=world.targets[1])
    assert [t["target_id"] for t in only["targets"]] == [world.targets[1]]
    assert all(len(r["cells"]) == 1 for r in only["rows"])
    assert _cases(world.ok(error_class="timeout"), world) == [1]
    assert _cases(world.ok(status="failed"), world) == [1]
    assert _cases(world.ok(verdict="passed"), world) == [0, 2]
    assert _cases(world.ok(verdict="failed"), world) == [1]
    # target 0 of case 3 has no score, and target 1 has none anywhere
    assert _cases(world.ok(verdict="unscored", target_ids=world.targets[0]), world) == [3]
    assert _cases(world.ok(score_min=0.4, score_max=0.6), world) == [2]
    assert _cases(world.ok(score_min=0.5, scorer_id=world.scorer_id), world) == [0, 2]
    assert _cases(world.ok(tag="hard"), world) == [2]
    assert world.ok(tag="har")["total"] == 0
    # any text is a tag to look for, never broken JSON or SQL
    for odd in ('a"b', "back\\slash", "new\nline", "tab\t", "%", "ünï"):
        reply = world.viewer.get(f"/api/projects/{world.project.id}/runs/{world.run_id}/grid",
                                 query_string={"tag": odd})
        assert reply.status_code == 200 and reply.json["total"] == 0, (odd, reply.json)
    # cell filters match one cell together: target 1 never timed out on a passed cell
    assert world.ok(error_class="timeout", verdict="passed")["total"] == 0
    empty = world.ok(error_class="rate_limited")
    assert empty["total"] == 0 and empty["rows"] == []


def test_a_manual_score_shows_with_its_rating(world: Grid) -> None:
    _, version_id = world.factory.scorer(world.project, "Helpfulness", params={"scale": "1-5"})
    reviewer = world.factory.login(world.factory.member(world.project, Role.reviewer))
    output_id = world.outputs[(3, 1)]
    reply = reviewer.request("PUT", f"/api/projects/{world.project.id}/runs/{world.run_id}"
                             f"/outputs/{output_id}/scores/{version_id}", json={"rating": 4})
    assert reply.status_code == 200, reply.json
    cell = world.ok(offset=3)["rows"][0]["cells"][1]["outputs"][0]
    [score] = cell["scores"]
    assert score["kind"] == "manual" and score["rating"] == 4 and score["value"] == 0.75
    assert score["author_id"] == reviewer.user_id


@pytest.mark.parametrize(("args", "field"), [
    ({"sort": "colour"}, "sort"),
    ({"order": "up"}, "order"),
    ({"score_min": 0.8, "score_max": 0.2}, "score_min"),
    ({"score_min": 1.5}, "score_min"),
    ({"limit": 0}, "limit"),
    ({"limit": 201}, "limit"),
    ({"offset": -1}, "offset"),
    ({"offset": 4}, "offset"),
    ({"verdict": "maybe"}, "verdict"),
    ({"target_ids": "1,x"}, "target_ids"),
    ({"error_class": "Bad Class"}, "error_class"),
    ({"status": "done"}, "status"),
])
def test_bad_arguments_are_422_naming_the_argument(world: Grid, args: dict[str, Any],
                                                    field: str) -> None:
    reply = world.get(**args)
    assert reply.status_code == 422, reply.json
    assert reply.json["code"] == "VALIDATION_ERROR"
    assert field in reply.json["errors"]["query"], reply.json


def test_targets_and_scorers_of_elsewhere_are_422(world: Grid) -> None:
    other = world.factory.project(world.owner, "Other")
    other_run = world.factory.planned_run(world.owner, other, cases=1, targets=1)
    foreign_scorer, _ = world.factory.scorer(other, "Foreign")
    for args, field in (({"target_ids": f"{world.targets[0]},{other_run.target_ids[0]}"},
                         "target_ids"),
                        ({"sort_target_id": other_run.target_ids[0]}, "sort_target_id"),
                        ({"scorer_id": foreign_scorer}, "scorer_id")):
        reply = world.get(**args)
        assert reply.status_code == 422, (args, reply.json)
        assert field in reply.json["errors"]["query"]


def test_another_projects_run_is_404(world: Grid) -> None:
    outsider = world.factory.signed_in()
    reply = outsider.get(f"/api/projects/{world.project.id}/runs/{world.run_id}/grid")
    assert reply.status_code in (403, 404)
