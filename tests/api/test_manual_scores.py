"""Scores reviewers give by hand, through the API: one per reviewer, output and scorer
version (a second save updates it, a delete undoes it), checked against the scorer's scale,
audited before and after; and every score of an output in the output detail."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import func, select

from assay.core.auth.models import User
from assay.core.projects.models import AuditEvent, Project, Role
from assay.core.runs.models import Output
from assay.core.scoring.apply import CellScore, insert_scores, score_row
from assay.core.scoring.models import Score
from assay.extensions import db
from assay.scorers.base import Evidence, ScoreResult
from tests.factories import Factory, Session, race, succeed


@dataclass
class Review:
    """A project with a planned run (two outputs with replies, one pending), a 1-5 manual
    scorer, and a signed-in reviewer."""

    factory: Factory
    owner: User
    project: Project
    run_id: int
    outputs: list[int]  # succeeded
    pending: int
    scorer_id: int
    version_id: int
    reviewer: Session

    def url(self, output_id: int | None = None, version_id: int | None = None,
            run_id: int | None = None, project_id: int | None = None) -> str:
        return (f"/api/projects/{project_id or self.project.id}/runs/{run_id or self.run_id}"
                f"/outputs/{output_id or self.outputs[0]}/scores/{version_id or self.version_id}")

    def detail(self, output_id: int | None = None) -> dict[str, Any]:
        reply = self.reviewer.get(f"/api/projects/{self.project.id}/runs/{self.run_id}"
                                  f"/outputs/{output_id or self.outputs[0]}")
        assert reply.status_code == 200, reply.json
        return dict(reply.json)

    def member(self, role: Role) -> Session:
        return self.factory.login(self.factory.member(self.project, role))


def _outputs(run_id: int) -> list[int]:
    with db.factory() as session:
        return list(session.scalars(select(Output.id).where(Output.run_id == run_id)
                                    .order_by(Output.id)))


@pytest.fixture
def review(factory: Factory) -> Review:
    owner = factory.user()
    project = factory.project(owner, "Review")
    planned = factory.planned_run(owner, project, cases=3, targets=1)
    outputs = _outputs(planned.run_id)
    for output_id in outputs[:2]:
        succeed(output_id, f"Reply {output_id}")
    scorer_id, version_id = factory.scorer(project, "Helpfulness", params={"scale": "1-5"})
    reviewer = factory.login(factory.member(project, Role.reviewer))
    return Review(factory, owner, project, planned.run_id, outputs[:2], outputs[2],
                  scorer_id, version_id, reviewer)


def _scores() -> int:
    with db.factory() as session:
        return session.scalar(select(func.count()).select_from(Score)) or 0


def _audit(project_id: int, prefix: str = "score.") -> list[AuditEvent]:
    with db.factory() as session:
        return list(session.scalars(select(AuditEvent).where(
            AuditEvent.project_id == project_id, AuditEvent.action.startswith(prefix))
            .order_by(AuditEvent.id)))


def _put(review: Review, body: dict[str, Any], browser: Session | None = None,
         **where: Any) -> Any:
    return (browser or review.reviewer).request("PUT", review.url(**where), json=body)


def _field_error(reply: Any, location: str, field: str) -> str:
    assert reply.status_code == 422, reply.json
    assert reply.json["code"] == "VALIDATION_ERROR"
    errors = reply.json["errors"][location]
    assert list(errors) == [field], errors
    return str(errors[field])


def test_a_reviewer_scores_and_a_second_save_updates(review: Review) -> None:
    first = _put(review, {"rating": 4, "comment": "Clear"})
    assert first.status_code == 200, first.json
    score = first.json
    reviewer_id = review.reviewer.user_id
    assert score["value"] == 0.75 and score["passed"] is None and score["criteria"] == {}
    assert score["source"] == f"user:{reviewer_id}" and score["author_id"] == reviewer_id
    assert score["author_name"].endswith("@example.com")
    assert score["kind"] == "manual" and score["scorer_name"] == "Helpfulness"
    assert (score["scorer_id"], score["scorer_version_id"], score["version"]) == (
        review.scorer_id, review.version_id, 1)
    assert score["comment"] == "Clear" and score["error"] is None
    # the output in full shows it the same, its author named
    (shown,) = [s for s in review.detail()["scores"] if s["source"] == score["source"]]
    assert {k: shown[k] for k in ("author_name", "scorer_name", "scorer_id", "version")} == {
        k: score[k] for k in ("author_name", "scorer_name", "scorer_id", "version")}
    assert score["details"] == {"entered": {"rating": 4, "passed": None, "criteria": {}}}
    assert review.detail()["scores"] == [score]
    second = _put(review, {"rating": 2, "passed": False}).json
    assert second["id"] == score["id"] and second["value"] == 0.25
    assert second["passed"] is False and second["comment"] is None
    assert second["created_at"] == score["created_at"]
    assert second["updated_at"] > score["updated_at"]
    assert review.detail()["scores"] == [second] and _scores() == 1
    set_first, set_second = _audit(review.project.id)
    assert set_first.action == set_second.action == "score.manual_set"
    assert set_first.actor_id == reviewer_id and set_first.target_id == str(score["id"])
    after_first = {"value": 0.75, "passed": None, "rating": 4, "criteria": {},
                   "comment": "Clear"}
    assert set_first.data == {"run_id": review.run_id, "output_id": review.outputs[0],
                              "scorer_version_id": review.version_id, "before": None,
                              "after": after_first}
    assert set_second.data["before"] == after_first
    assert set_second.data["after"] == {"value": 0.25, "passed": False, "rating": 2,
                                        "criteria": {}, "comment": None}


def test_each_reviewer_has_their_own_score_and_deletes_only_it(review: Review) -> None:
    editor = review.member(Role.editor)
    mine = _put(review, {"rating": 5}).json
    theirs = _put(review, {"rating": 1}, editor).json
    assert mine["id"] != theirs["id"] and _scores() == 2
    assert {s["id"] for s in review.detail()["scores"]} == {mine["id"], theirs["id"]}
    reply = review.reviewer.delete(review.url())
    assert reply.status_code == 204 and reply.get_data() == b""
    assert [s["id"] for s in review.detail()["scores"]] == [theirs["id"]]
    again = review.reviewer.delete(review.url())
    assert again.status_code == 404 and again.json["code"] == "NOT_FOUND"
    deleted = _audit(review.project.id)[-1]
    assert deleted.action == "score.manual_deleted" and deleted.target_id == str(mine["id"])
    assert deleted.data["before"] == {"value": 1.0, "passed": None, "rating": 5,
                                      "criteria": {}, "comment": None}
    assert deleted.data["after"] is None and deleted.actor_id == review.reviewer.user_id
    assert len(_audit(review.project.id)) == 3  # two saves, one delete; the 404 wrote none


def test_pass_fail_and_criteria_scales(review: Review) -> None:
    _, pass_fail = review.factory.scorer(review.project, "Correct",
                                         params={"scale": "pass_fail"})
    _, criteria = review.factory.scorer(review.project, "Rubric", params={
        "scale": "criteria", "criteria": ["accuracy", "tone"]})
    failed = _put(review, {"passed": False}, version_id=pass_fail).json
    assert (failed["value"], failed["passed"]) == (0.0, False)
    rated = _put(review, {"criteria": {"tone": 2, "accuracy": 5}, "passed": True},
                 version_id=criteria).json
    assert rated["criteria"] == {"accuracy": 1.0, "tone": 0.25}
    assert rated["value"] == 0.625 and rated["passed"] is True
    assert rated["details"]["entered"]["criteria"] == {"tone": 2, "accuracy": 5}
    names = [s["scorer_name"] for s in review.detail()["scores"]]
    assert names == ["Correct", "Rubric"]


@pytest.mark.parametrize(("scale", "body", "field"), [
    ("1-5", {}, "rating"),
    ("1-5", {"passed": True}, "rating"),
    ("1-5", {"rating": 3, "criteria": {"accuracy": 3}}, "rating"),
    ("pass_fail", {}, "passed"),
    ("pass_fail", {"rating": 5}, "passed"),
    ("pass_fail", {"passed": True, "criteria": {"accuracy": 3}}, "passed"),
    ("criteria", {}, "criteria"),
    ("criteria", {"criteria": {"accuracy": 3}}, "criteria"),
    ("criteria", {"criteria": {"accuracy": 3, "tone": 3, "speed": 3}}, "criteria"),
    ("criteria", {"rating": 3, "criteria": {"accuracy": 3, "tone": 3}}, "rating"),
])
def test_values_that_do_not_fit_the_scale_are_refused(review: Review, scale: str,
                                                      body: dict[str, Any],
                                                      field: str) -> None:
    params: dict[str, Any] = {"scale": scale}
    if scale == "criteria":
        params["criteria"] = ["accuracy", "tone"]
    _, version_id = review.factory.scorer(review.project, f"Scale {scale}", params=params)
    _field_error(_put(review, body, version_id=version_id), "json", field)
    assert _scores() == 0 and _audit(review.project.id) == []


@pytest.mark.parametrize(("body", "field"), [
    ({"rating": 0}, "rating"), ({"rating": 6}, "rating"), ({"rating": 2.5}, "rating"),
    ({"rating": "4"}, "rating"), ({"rating": True}, "rating"),
    ({"rating": 4, "passed": "yes"}, "passed"), ({"rating": 4, "passed": 1}, "passed"),
    ({"criteria": {"accuracy": 6}}, "criteria"), ({"criteria": {"accuracy": 0}}, "criteria"),
    ({"criteria": {"": 3}}, "criteria"), ({"criteria": [3]}, "criteria"),
    ({"criteria": {f"c{i}": 3 for i in range(11)}}, "criteria"),
    ({"rating": 4, "comment": "x" * 2001}, "comment"), ({"rating": 4, "comment": 5}, "comment"),
    ({"rating": 4, "author_id": 1}, "author_id"), ({"rating": 4, "value": 1.0}, "value"),
])
def test_bad_bodies_are_refused_with_the_field(review: Review, body: dict[str, Any],
                                               field: str) -> None:
    _field_error(_put(review, body), "json", field)
    assert _scores() == 0


def test_only_outputs_with_a_reply_are_scored(review: Review) -> None:
    message = _field_error(_put(review, {"rating": 3}, output_id=review.pending),
                           "path", "output_id")
    assert "pending" in message
    with db.factory() as session:
        output = session.get(Output, review.outputs[1])
        assert output is not None
        output.status, output.error_class = "failed", "timeout"
        session.commit()
    assert "failed" in _field_error(_put(review, {"rating": 3}, output_id=review.outputs[1]),
                                    "path", "output_id")
    assert _scores() == 0


def _automatic_scorer(review: Review) -> int:
    """A scorer Assay applies itself: its version's id."""
    _, version_id = review.factory.scorer(review.project, "Pattern", kind="regex",
                                          params={"pattern": "^R"})
    return version_id


def test_only_manual_scorers_take_scores_by_hand(review: Review) -> None:
    automatic = _automatic_scorer(review)
    message = _field_error(_put(review, {"rating": 3}, version_id=automatic), "path",
                           "scorer_version_id")
    assert "'regex'" in message and "manual" in message
    reply = review.reviewer.delete(review.url(version_id=automatic))
    assert _field_error(reply, "path", "scorer_version_id")
    assert _scores() == 0


def test_archived_scorers_take_no_new_scores_but_allow_undo(review: Review) -> None:
    assert _put(review, {"rating": 3}).status_code == 200
    owner = review.factory.login(review.owner)
    archive = f"/api/projects/{review.project.id}/scorers/{review.scorer_id}/archive"
    assert owner.post(archive).status_code == 200
    message = _field_error(_put(review, {"rating": 4}), "path", "scorer_version_id")
    assert "archived" in message
    assert review.reviewer.delete(review.url()).status_code == 204
    assert _scores() == 0


def test_any_manual_scorer_and_version_of_the_project_may_be_used(review: Review) -> None:
    """The run pinned none: a reviewer may still score its outputs, at an older version."""
    owner = review.factory.login(review.owner)
    newer = owner.post(f"/api/projects/{review.project.id}/scorers/{review.scorer_id}"
                       "/versions", json={"params": {"scale": "pass_fail"}}).json
    old = _put(review, {"rating": 5}).json
    new = _put(review, {"passed": True}, version_id=newer["id"]).json
    assert (old["version"], new["version"]) == (1, 2) and _scores() == 2


def test_ids_of_another_run_or_project_are_not_found(review: Review) -> None:
    factory = review.factory
    other_run = factory.planned_run(review.owner, review.project, cases=1, targets=1)
    other_output = _outputs(other_run.run_id)[0]
    succeed(other_output)
    stranger = factory.user()
    elsewhere = factory.project(stranger, "Elsewhere")
    _, foreign_version = factory.scorer(elsewhere, "Theirs")
    foreign_run = factory.planned_run(stranger, elsewhere, cases=1, targets=1)
    foreign_output = _outputs(foreign_run.run_id)[0]
    succeed(foreign_output)
    cases = [
        {"output_id": other_output},  # an output of another run of the project
        {"output_id": foreign_output},
        {"version_id": foreign_version},  # a scorer of another project
        {"version_id": 2_000_000_000},
        {"run_id": foreign_run.run_id},
        {"output_id": foreign_output, "run_id": foreign_run.run_id},
    ]
    for where in cases:
        for method in ("PUT", "DELETE"):
            reply = review.reviewer.request(method, review.url(**where), json={"rating": 3})
            assert reply.status_code == 404 and reply.json["code"] == "NOT_FOUND", (
                method, where, reply.json)
    assert _scores() == 0 and _audit(review.project.id) == []


def test_roles(review: Review) -> None:
    viewer = review.member(Role.viewer)
    for method in ("PUT", "DELETE"):
        reply = viewer.request(method, review.url(), json={"rating": 3})
        assert reply.status_code == 403 and reply.json["code"] == "FORBIDDEN", method
    outsider = review.factory.signed_in()
    assert outsider.request("PUT", review.url(), json={"rating": 3}).status_code == 404
    for role in (Role.reviewer, Role.editor, Role.admin):
        assert _put(review, {"rating": 3}, review.member(role)).status_code == 200, role
    assert _put(review, {"rating": 3}, review.factory.login(review.owner)).status_code == 200
    assert _scores() == 4


def test_the_output_detail_shows_every_field_of_a_score(review: Review) -> None:
    assert review.detail()["scores"] == []
    version_id = _automatic_scorer(review)
    result = ScoreResult(0.0, False, rationale="No match", severity="error",
                         evidence=(Evidence(0, 0, 5, "Reply", "pattern"),),
                         flags=("pii:email",), details={"pattern": "^R"})
    with db.factory() as session:
        output = session.get(Output, review.outputs[0])
        assert output is not None
        insert_scores(session, [score_row(review.run_id, output.id, output.target_id,
                                          output.case_id, CellScore(version_id, "regex", result))])
        session.commit()
    manual = _put(review, {"rating": 5, "comment": "Great"}).json
    by_hand, automatic = review.detail()["scores"]  # by scorer name: Helpfulness, Pattern
    assert by_hand == manual
    assert automatic == {**automatic, "scorer_name": "Pattern", "kind": "regex", "source": "",
                         "value": 0.0, "passed": False, "rationale": "No match",
                         "severity": "error", "flags": ["pii:email"],
                         "details": {"pattern": "^R"}, "error": None, "author_id": None,
                         "author_name": None, "comment": None, "version": 1,
                         "evidence": [{"message_index": 0, "start": 0, "end": 5,
                                       "text": "Reply", "label": "pattern"}]}
    assert review.detail(review.outputs[1])["scores"] == []


def test_concurrent_first_saves_make_one_score(app: Flask, review: Review,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Both requests find no score before either inserts (a double click): one inserts, the
    other updates it on its retry."""
    reviewer = review.factory.member(review.project, Role.reviewer)
    token = review.factory.api_token(reviewer)
    replies = race(app, monkeypatch, "assay.core.scoring.manual.own_score",
                   [("PUT", review.url(), {"rating": 2}), ("PUT", review.url(), {"rating": 4})],
                   headers={"Authorization": f"Bearer {token}"})
    assert [r.status_code for r in replies] == [200, 200], [r.json for r in replies]
    assert replies[0].json["id"] == replies[1].json["id"]  # type: ignore[index]
    assert _scores() == 1
    first, second = _audit(review.project.id)
    assert first.data["before"] is None and second.data["before"] == first.data["after"]
