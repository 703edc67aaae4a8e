"""Tenancy: every project route x method x role, the owner-role rules, and the audit trail.

The expected minimum role of each route is written down in ROUTES; the table must cover
exactly the project routes found in the app's url_map, so a new route without a row (or a
row without a route) fails `test_routes_table_covers_every_project_route`.
"""

from __future__ import annotations

import io
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import func, select, update

from assay.core.auth.models import User
from assay.core.datasets.models import Dataset, DatasetVersion
from assay.core.datasets.service import create_dataset, latest_version, version_cases
from assay.core.llm.models import Credential, ModelConfig
from assay.core.projects.invites import create_invite
from assay.core.projects.models import AuditEvent, Membership, Project, Role
from assay.core.prompts.service import create_prompt
from assay.core.runs.models import Output, Run, RunTarget
from assay.core.scoring.judge_mode import scorer_version
from assay.core.scoring.manual import own_score, source_of
from assay.core.scoring.models import RunScorer, Score
from assay.extensions import db
from assay.runtime import current
from tests.api.arena_helpers import fixture
from tests.api.arena_helpers import seed as seed_arena
from tests.api.experiment_rows import diff_for, experiment_in_state
from tests.api.helpers_experiments import (
    ASSIST_RUBRIC,
    assist_model,
    draft_in,
    tiny_bundle,
)
from tests.api.stats_data import make_scorer, pin
from tests.api.test_comparisons import comparison_body
from tests.api.test_critiques import critique_body
from tests.api.test_generation import finished_job, make_document
from tests.factories import Factory, Session, first_output, succeed

PROJECT = "/api/projects/{project_id}"
DATASET = PROJECT + "/datasets/{dataset_id}"
SCORE = PROJECT + "/runs/{run_id}/outputs/{output_id}/scores/{scorer_version_id}"
FOREIGN = "foreign"
ACTORS = [*(role.value for role in Role), FOREIGN]


@dataclass
class World:
    """One project with a member of every role, a finished run, and a foreign user who
    owns a project of their own but is no member of this one."""

    factory: Factory
    project: Project
    users: dict[str, User]
    run_id: int
    target: User  # a viewer the member routes act on
    newcomer: User  # registered, not a member yet
    foreign_project: Project
    credential_id: int = 0  # an unused credential (deletable)
    model_id: int = 0  # a model no run used (deletable)
    dataset_id: int = 0  # a dataset no run used (deletable), with one case
    case_id: int = 0
    job_id: int = 0  # a finished generation job
    document_id: int = 0
    output_id: int = 0  # an output of run_id
    prompt_id: int = 0
    prompt_version_id: int = 0  # version 1 of prompt_id
    scorer_id: int = 0  # a manual scorer (scale 1-5)
    scorer_version_id: int = 0
    invite_id: int = 0  # set per call by fresh_invite
    experiment_id: int = 0  # a valid draft, new per call (start freezes it)
    actor: str = ""  # who the matrix calls the route as (the owner when unset)

    def path_args(self) -> dict[str, int]:
        return {"project_id": self.project.id, "run_id": self.run_id,
                "base_run_id": self.run_id, "user_id": self.target.id,
                "credential_id": self.credential_id, "model_id": self.model_id,
                "dataset_id": self.dataset_id, "case_id": self.case_id,
                "job_id": self.job_id, "document_id": self.document_id,
                "output_id": self.output_id,
                "prompt_id": self.prompt_id, "prompt_version_id": self.prompt_version_id,
                "scorer_id": self.scorer_id, "scorer_version_id": self.scorer_version_id,
                "invite_id": self.invite_id, "experiment_id": self.experiment_id,
                "number": 1, "slug": "customer-support", "challenge_id": ARENA_CHALLENGE,
                "tab": "rules", "attempt_id": 0}  # type: ignore[dict-item]

    def arena(self) -> dict[str, int]:
        """The challenges seeded (global content, read by any signed-in user)."""
        seed_arena()
        return {}

    def own_attempt(self) -> dict[str, int]:
        """A rules attempt of the actor's own on the challenge."""
        seed_arena()
        browser = self.factory.login(self.users.get(self.actor) or self.users["owner"])
        made = browser.post(ARENA.format(challenge_id=ARENA_CHALLENGE) + "/attempts", json={
            "tab": "rules", "text": fixture(ARENA_CHALLENGE, "reference.rules.yaml"),
            "set": "dev"})
        assert made.status_code == 201, made.json
        return {"attempt_id": made.json["id"]}

    def judge_attempt(self) -> dict[str, Any]:
        """A judge run paid by the project (editor+: no arena allowance is set)."""
        seed_arena()
        return {"tab": "judge", "text": fixture(ARENA_CHALLENGE, "reference.judge.txt"),
                "set": "dev", "project_id": self.project.id, "judge": str(self.model_id)}

    def fresh_invite(self) -> dict[str, int]:
        """A pending invite of the project to revoke."""
        with db.factory() as session:
            owner = session.merge(self.users[Role.owner.value])
            invite = create_invite(session, owner, Role.owner, session.merge(self.project),
                                   f"invitee{self.newcomer.id}@example.com", Role.viewer)
            session.commit()
            return {"invite_id": invite.id}

    def fresh_targets(self) -> None:
        """A new member to act on, a new user to add, an unused credential and model, and a
        score of the output by every actor, so each actor's call can succeed."""
        self.target = self.factory.member(self.project, Role.viewer)
        self.newcomer = self.factory.user()
        with db.factory() as session:
            spare = Credential(project_id=self.project.id, kind="fake", config={},
                               label=f"Spare {self.newcomer.id}",
                               base_url=self.factory.settings.fake_provider_url)
            session.add(spare)
            session.flush()
            demo = session.scalars(select(Credential.id).where(
                Credential.project_id == self.project.id, Credential.id != spare.id)).first()
            model = ModelConfig(project_id=self.project.id, credential_id=demo, model="fake-fast",
                                name=f"Spare {self.newcomer.id}", params={})
            session.add(model)
            project = session.merge(self.project)
            dataset = create_dataset(session, None, project, f"Spare {self.newcomer.id}",
                                     "questions", [{"input": {"question": "Why?"}}])
            prompt, first = create_prompt(session, None, project, {
                "name": f"Spare {self.newcomer.id}", "template": "Answer {{question}}"})
            session.commit()
            self.prompt_id, self.prompt_version_id = prompt.id, first.id
            self.credential_id, self.model_id = spare.id, model.id
            self.dataset_id = dataset.id
            self.case_id = version_cases(session, latest_version(session, dataset.id).id)[0].id
        self.document_id = make_document(self.project.id)
        with db.factory() as session:
            version_id = latest_version(session, self.dataset_id).id
        self.experiment_id = draft_in(self.project, self.model_id, version_id)
        self.score_by_everyone()

    def score_by_everyone(self) -> None:
        """A score of the output by every member and the foreign user, so each actor has
        one of their own to update or delete."""
        with db.factory() as session:
            output = session.get(Output, self.output_id)
            assert output is not None
            for user in self.users.values():
                if own_score(session, self.output_id, self.scorer_version_id, user) is None:
                    session.add(Score(run_id=self.run_id, output_id=self.output_id,
                                      target_id=output.target_id, case_id=output.case_id,
                                      scorer_version_id=self.scorer_version_id, kind="manual",
                                      source=source_of(user), value=1.0, author_id=user.id))
            session.commit()

    def tagged(self, body: dict[str, Any]) -> dict[str, Any]:
        """Tag the spare dataset "spare", so the tag manager finds a tag to change; `body`."""
        with db.factory() as session:
            dataset = session.get(Dataset, self.dataset_id)
            assert dataset is not None
            dataset.tags = ["spare"]
            session.commit()
        return body

    def run_case_id(self) -> int:
        """A case of the world's run (the world's own case_id is a spare dataset's)."""
        with db.factory() as session:
            output = session.get(Output, self.output_id)
            assert output is not None
            return output.case_id

    def run_in(self, status: str) -> dict[str, Any]:
        """Put the world's run in `status`, so a control action may succeed; no body."""
        with db.factory() as session:
            session.execute(update(Run).where(Run.id == self.run_id).values(status=status))
            session.commit()
        return {}

    def queued_job(self) -> int:
        """A questions job that waits for a worker (none runs here), so it can be cancelled."""
        from assay.core.generation import service

        rt = current()
        with db.factory() as session:
            state = service.start(session, rt.redis, rt.settings.redis_prefix,
                                  session.merge(self.users[Role.owner.value]),
                                  session.merge(self.project),
                                  "questions", {"model_id": self.model_id, "count": 2,
                                                "topic": "cancel", "type_tags": [],
                                                "instructions": None, "difficulty": None,
                                                "max_cost_micros": None})
            session.commit()
        return int(state["id"])

    def judge_the_run(self) -> None:
        """Make the world's run a judge-mode run (it applies a question-quality scorer), so
        its judgments can be read."""
        with db.factory() as session:
            version = scorer_version(session, None, session.merge(self.project),
                                     {"judges": [str(self.model_id)], "criteria": ["clarity"]})
            session.add(RunScorer(run_id=self.run_id, scorer_version_id=version.id,
                                  position=1))
            session.commit()

    def fresh_scorer_version(self) -> int:
        """A reference check not yet on the world's run, to attach to it."""
        return self.factory.scorer(self.project, f"Attach {uuid.uuid4().hex[:8]}", "contains",
                                   {"value": "ok"})[1]

    def run_body(self) -> dict[str, Any]:
        with db.factory() as session:
            run = session.get(Run, self.run_id)
            assert run is not None
            version = session.get(DatasetVersion, run.dataset_version_id)
            assert version is not None
            models = list(session.scalars(select(RunTarget.model_id).where(
                RunTarget.run_id == run.id).order_by(RunTarget.position)))
        return {"dataset_id": version.dataset_id, "targets": [{"model_id": m} for m in models],
                "name": "Tenancy"}


@dataclass(frozen=True)
class Rule:
    needs: Role
    ok: int = 200
    body: Callable[[World], dict[str, Any]] | None = None
    path: Callable[[World], dict[str, int]] | None = None  # overrides of World.path_args
    anyone: bool = False  # global content: every signed-in user, of any project or none
    query: str = ""  # a query string the route needs


ROUTES: dict[tuple[str, str], Rule] = {
    ("GET", PROJECT): Rule(Role.viewer),
    ("PATCH", PROJECT): Rule(Role.admin, 200, lambda w: {"name": "Renamed"}),
    ("DELETE", PROJECT): Rule(Role.owner, 204),
    ("GET", PROJECT + "/audit"): Rule(Role.admin),
    ("GET", PROJECT + "/settings"): Rule(Role.viewer),
    ("PATCH", PROJECT + "/settings"): Rule(Role.admin, 200, lambda w: {
        "description": f"Words {w.newcomer.id}", "default_max_retries": 1}),
    ("GET", PROJECT + "/invites"): Rule(Role.viewer),
    ("POST", PROJECT + "/invites"): Rule(Role.admin, 201, lambda w: {
        "email": f"invited{w.newcomer.id}@example.com", "role": "viewer"}),
    ("DELETE", PROJECT + "/invites/{invite_id}"): Rule(Role.admin, 204,
                                                     path=World.fresh_invite),
    ("GET", PROJECT + "/members"): Rule(Role.viewer),
    ("POST", PROJECT + "/members"): Rule(
        Role.admin, 201, lambda w: {"email": w.newcomer.email, "role": "viewer"}),
    ("PATCH", PROJECT + "/members/{user_id}"): Rule(Role.admin, 200,
                                                    lambda w: {"role": "reviewer"}),
    ("DELETE", PROJECT + "/members/{user_id}"): Rule(Role.admin, 204),
    ("GET", PROJECT + "/models"): Rule(Role.viewer),
    ("GET", PROJECT + "/credentials"): Rule(Role.viewer),
    ("POST", PROJECT + "/credentials"): Rule(Role.admin, 201, lambda w: {
        "kind": "fake", "label": f"Tenancy {w.newcomer.id}",
        "base_url": w.factory.settings.fake_provider_url}),
    ("GET", PROJECT + "/credentials/{credential_id}"): Rule(Role.viewer),
    ("PATCH", PROJECT + "/credentials/{credential_id}"): Rule(
        Role.admin, 200, lambda w: {"label": f"Renamed {w.newcomer.id}"}),
    ("DELETE", PROJECT + "/credentials/{credential_id}"): Rule(Role.admin, 204),
    ("POST", PROJECT + "/credentials/{credential_id}/test"): Rule(Role.admin),
    ("GET", PROJECT + "/credentials/{credential_id}/discover"): Rule(Role.admin),
    ("POST", PROJECT + "/models"): Rule(Role.editor, 201, lambda w: {
        "name": f"Tenancy {w.newcomer.id}", "credential_id": w.credential_id,
        "model": "fake-fast"}),
    ("GET", PROJECT + "/models/{model_id}"): Rule(Role.viewer),
    ("PATCH", PROJECT + "/models/{model_id}"): Rule(
        Role.editor, 200, lambda w: {"name": f"Renamed {w.newcomer.id}"}),
    ("DELETE", PROJECT + "/models/{model_id}"): Rule(Role.editor, 204),
    ("POST", PROJECT + "/models/{model_id}/archive"): Rule(Role.editor),
    ("POST", PROJECT + "/models/{model_id}/restore"): Rule(Role.editor),
    ("GET", PROJECT + "/datasets"): Rule(Role.viewer),
    ("POST", PROJECT + "/datasets"): Rule(Role.editor, 201, lambda w: {
        "name": f"Tenancy {w.newcomer.id}", "kind": "questions",
        "cases": [{"input": {"question": "Why?"}}]}),
    ("GET", DATASET): Rule(Role.viewer),
    ("PATCH", DATASET): Rule(Role.editor, 200, lambda w: {"description": "Words"}),
    ("DELETE", DATASET): Rule(Role.editor, 204),
    ("POST", DATASET + "/archive"): Rule(Role.editor),
    ("POST", DATASET + "/restore"): Rule(Role.editor),
    ("GET", DATASET + "/cases"): Rule(Role.viewer),
    ("POST", DATASET + "/cases"): Rule(Role.editor, 201, lambda w: {
        "input": {"question": "How?"}, "tags": ["t"]}),
    ("PATCH", DATASET + "/cases/{case_id}"): Rule(Role.editor, 200, lambda w: {
        "difficulty": "hard"}),
    ("DELETE", DATASET + "/cases/{case_id}"): Rule(Role.editor),
    ("POST", DATASET + "/cases/bulk"): Rule(Role.editor, 201, lambda w: {
        "cases": [{"input": {"question": "How?"}}, {"input": {"question": "Why?"}}]}),
    ("GET", PROJECT + "/datasets/tags"): Rule(Role.viewer),
    ("POST", PROJECT + "/datasets/tags/rename"): Rule(Role.editor, 200, lambda w: w.tagged(
        {"from": "spare", "to": "renamed"})),
    ("POST", PROJECT + "/datasets/tags/remove"): Rule(Role.editor, 200, lambda w: w.tagged(
        {"tag": "spare"})),
    ("GET", DATASET + "/versions"): Rule(Role.viewer),
    ("GET", DATASET + "/diff"): Rule(Role.viewer),
    ("POST", DATASET + "/import/preview"): Rule(Role.editor, 200, lambda w: {
        "format": "csv", "content": "question\nWhy?\n"}),
    ("POST", DATASET + "/import"): Rule(Role.editor, 201, lambda w: {
        "format": "csv", "content": "q\nWhy?\n", "mapping": {"variables": {"q": "question"}}}),
    ("GET", DATASET + "/export"): Rule(Role.viewer),
    ("GET", DATASET + "/coverage"): Rule(Role.viewer),
    ("GET", PROJECT + "/runs"): Rule(Role.viewer),
    ("POST", PROJECT + "/runs"): Rule(Role.editor, 202, World.run_body),
    ("POST", PROJECT + "/runs/demo"): Rule(Role.editor, 202),
    ("POST", PROJECT + "/runs/estimate"): Rule(Role.viewer, 200, lambda w: {
        k: v for k, v in w.run_body().items() if k != "name"}),
    ("GET", PROJECT + "/runs/{run_id}"): Rule(Role.viewer),
    ("PUT", PROJECT + "/runs/{run_id}/headline"): Rule(Role.editor, 200, lambda w: {
        "scorer_id": None}),
    ("PATCH", PROJECT + "/runs/{run_id}"): Rule(Role.editor, 200, lambda w: {
        "budget_micros": 1_000_000_000}),
    ("GET", PROJECT + "/runs/{run_id}/outputs"): Rule(Role.viewer),
    ("GET", PROJECT + "/runs/{run_id}/grid"): Rule(Role.viewer),
    ("GET", PROJECT + "/runs/{run_id}/outputs/{output_id}"): Rule(Role.viewer),
    ("GET", PROJECT + "/runs/{run_id}/progress"): Rule(Role.viewer),
    ("GET", PROJECT + "/runs/{run_id}/summary"): Rule(Role.viewer),
    ("GET", PROJECT + "/runs/{run_id}/cases/{case_id}"): Rule(Role.viewer, path=lambda w: {
        "case_id": w.run_case_id()}),
    ("GET", PROJECT + "/runs/{run_id}/events"): Rule(Role.viewer),
    ("GET", PROJECT + "/runs/{run_id}/statistics"): Rule(Role.viewer),
    ("GET", PROJECT + "/runs/{run_id}/statistics/facets"): Rule(Role.viewer),
    ("GET", PROJECT + "/runs/{run_id}/compare-targets"): Rule(Role.viewer),
    ("GET", PROJECT + "/runs/{run_id}/compare/{base_run_id}"): Rule(Role.viewer),
    ("POST", PROJECT + "/runs/{run_id}/comparisons"): Rule(
        Role.editor, 202, lambda w: comparison_body(w.project.id, w.run_id)),
    ("GET", PROJECT + "/runs/{run_id}/comparisons"): Rule(Role.viewer),
    ("GET", PROJECT + "/runs/{run_id}/comparisons/summary"): Rule(Role.viewer),
    ("POST", PROJECT + "/critiques"): Rule(Role.editor, 200, lambda w: critique_body(
        w.project.id, w.factory.settings.fake_provider_url)),
    ("GET", PROJECT + "/runs/{run_id}/export"): Rule(Role.viewer),
    ("GET", PROJECT + "/reports/leaderboard"): Rule(Role.viewer),
    ("GET", PROJECT + "/reports/costs"): Rule(Role.viewer),
    ("GET", PROJECT + "/reports/tokens"): Rule(Role.viewer),
    ("GET", PROJECT + "/reports/trend"): Rule(Role.viewer),
    ("GET", PROJECT + "/reports/runs/{run_id}/dashboard"): Rule(Role.viewer),
    ("GET", PROJECT + "/reports/runs/{run_id}/diff/{base_run_id}"): Rule(Role.viewer),
    ("POST", PROJECT + "/runs/{run_id}/pause"): Rule(Role.editor, 200,
                                                     lambda w: w.run_in("running")),
    ("POST", PROJECT + "/runs/{run_id}/resume"): Rule(Role.editor, 200,
                                                      lambda w: w.run_in("paused")),
    ("POST", PROJECT + "/runs/{run_id}/cancel"): Rule(Role.editor, 200,
                                                      lambda w: w.run_in("running")),
    ("POST", PROJECT + "/runs/{run_id}/retry-failed"): Rule(Role.editor, 200,
                                                            lambda w: w.run_in("failed")),
    # stopping a run's scoring or comparisons: 202 whether or not a job was in flight
    ("POST", PROJECT + "/runs/{run_id}/scorers/cancel"): Rule(Role.editor, 202),
    ("POST", PROJECT + "/runs/{run_id}/comparisons/cancel"): Rule(Role.editor, 202),
    ("POST", DATASET + "/judgments"): Rule(Role.editor, 202, lambda w: {
        "judges": [w.model_id], "criteria": ["clarity"]}),
    ("GET", DATASET + "/judgments"): Rule(Role.viewer),
    ("GET", PROJECT + "/runs/{run_id}/judgments"): Rule(Role.viewer),
    ("GET", PROJECT + "/reports/question-quality"): Rule(Role.viewer),
    ("GET", PROJECT + "/prompts"): Rule(Role.viewer),
    ("POST", PROJECT + "/prompts"): Rule(Role.editor, 201, lambda w: {
        "name": f"Tenancy {w.newcomer.id}", "template": "Say {{question}}"}),
    ("GET", PROJECT + "/prompts/{prompt_id}"): Rule(Role.viewer),
    ("GET", PROJECT + "/prompts/{prompt_id}/versions"): Rule(Role.viewer),
    ("POST", PROJECT + "/prompts/{prompt_id}/versions"): Rule(Role.editor, 201, lambda w: {
        "template": "Say {{ question }} again", "note": "Say it again"}),
    ("GET", PROJECT + "/prompts/{prompt_id}/versions/{prompt_version_id}/lineage"):
        Rule(Role.viewer),
    ("PUT", PROJECT + "/prompts/{prompt_id}/production"): Rule(Role.editor, 200, lambda w: {
        "version_id": w.prompt_version_id}),
    ("GET", PROJECT + "/generation"): Rule(Role.viewer),
    ("POST", PROJECT + "/generation/questions"): Rule(Role.editor, 202, lambda w: {
        "model_id": w.model_id, "count": 2, "topic": "Tenancy"}),
    ("POST", PROJECT + "/generation/questions/estimate"): Rule(Role.viewer, 200, lambda w: {
        "model_id": w.model_id, "count": 2, "topic": "Tenancy"}),
    ("POST", PROJECT + "/generation/cases"): Rule(Role.editor, 202, lambda w: {
        "model_id": w.model_id, "count": 10, "variables": ["topic"]}),
    ("POST", PROJECT + "/generation/cases/estimate"): Rule(Role.viewer, 200, lambda w: {
        "model_id": w.model_id, "count": 10, "variables": ["topic"]}),
    ("POST", PROJECT + "/generation/conversations"): Rule(Role.editor, 202, lambda w: {
        "model_id": w.model_id, "document_id": w.document_id, "count": 1, "turns": 2}),
    ("POST", PROJECT + "/generation/conversations/estimate"): Rule(Role.viewer, 200, lambda w: {
        "model_id": w.model_id, "document_id": w.document_id, "count": 1, "turns": 2}),
    ("GET", PROJECT + "/generation/{job_id}"): Rule(Role.viewer),
    ("POST", PROJECT + "/generation/{job_id}/cancel"): Rule(
        Role.editor, 202, path=lambda w: {"job_id": w.queued_job()}),
    ("GET", PROJECT + "/documents"): Rule(Role.viewer),
    ("POST", PROJECT + "/documents"): Rule(Role.editor, 201, lambda w: {
        "file": (io.BytesIO(b"The tenancy document."), "tenancy.txt")}),
    ("GET", PROJECT + "/documents/{document_id}"): Rule(Role.viewer),
    ("DELETE", PROJECT + "/documents/{document_id}"): Rule(Role.editor, 204),
    ("GET", PROJECT + "/documents/{document_id}/chunks"): Rule(Role.viewer),
    ("GET", PROJECT + "/documents/{document_id}/search"): Rule(
        Role.viewer, query="?query=refund&top_k=2"),
    ("GET", PROJECT + "/generation/{job_id}/events"): Rule(Role.viewer),
    ("POST", PROJECT + "/generation/{job_id}/accept"): Rule(Role.editor, 201, lambda w: {
        "dataset_name": f"Tenancy {w.newcomer.id}"}),
}
SCORERS = PROJECT + "/scorers"
ROUTES.update({
    ("GET", SCORERS): Rule(Role.viewer),
    ("POST", SCORERS): Rule(Role.editor, 201, lambda w: {
        "name": f"Tenancy {w.newcomer.id}", "kind": "manual", "params": {}}),
    ("GET", SCORERS + "/{scorer_id}"): Rule(Role.viewer),
    ("GET", SCORERS + "/{scorer_id}/versions"): Rule(Role.viewer),
    ("POST", SCORERS + "/{scorer_id}/versions"): Rule(Role.editor, 201, lambda w: {
        "params": {"scale": "pass_fail"}}),
    ("POST", SCORERS + "/{scorer_id}/archive"): Rule(Role.editor),
    ("POST", SCORERS + "/{scorer_id}/restore"): Rule(Role.editor),
    ("POST", SCORERS + "/preview"): Rule(Role.viewer, 200, lambda w: {
        "kind": "pairwise_judge", "params": {"judges": ["Judge"]}, "sample": {"output": "A"},
        "second": {"output": "B"}}),
    ("POST", SCORERS + "/try"): Rule(Role.editor, 200, lambda w: {
        "kind": "contains", "params": {"value": "ok"}, "sample": {"output": "ok"}}),
    ("POST", PROJECT + "/runs/{run_id}/scorers"): Rule(Role.editor, 202, lambda w: {
        "scorer_version_ids": [w.fresh_scorer_version()]}),
    ("POST", PROJECT + "/runs/{run_id}/scorers/estimate"): Rule(Role.viewer, 200, lambda w: {
        "scorer_version_ids": [w.fresh_scorer_version()]}),
    ("GET", PROJECT + "/runs/{run_id}/scorers/events"): Rule(Role.viewer),
    ("GET", PROJECT + "/reports/scorers"): Rule(Role.viewer),
    ("GET", PROJECT + "/reports/ratings"): Rule(Role.viewer),
    ("GET", PROJECT + "/reports/judge-calibration"): Rule(Role.viewer),
    ("GET", PROJECT + "/reports/rag"): Rule(Role.viewer),
    ("PUT", SCORE): Rule(Role.reviewer, 200, lambda w: {"rating": 4, "comment": "Fine"}),
    ("DELETE", SCORE): Rule(Role.reviewer, 204),
    ("PUT", PROJECT + "/runs/{run_id}/scores/{scorer_version_id}"): Rule(
        Role.reviewer, 200, lambda w: {"output_ids": [w.output_id], "rating": 3}),
})
EXPERIMENT = PROJECT + "/experiments/{experiment_id}"
ITERATION = EXPERIMENT + "/iterations/{number}"


def _loop(state: str = "awaiting_review", paused: bool = False) -> Any:
    return lambda w: experiment_in_state(w.project.id, w.factory.settings.fake_provider_url,
                                         state, paused)


ROUTES.update({
    ("GET", EXPERIMENT + "/iterations"): Rule(Role.viewer, path=_loop()),
    ("GET", ITERATION): Rule(Role.viewer, path=_loop()),
    ("GET", ITERATION + "/suggestion"): Rule(Role.viewer, path=_loop()),
    ("GET", ITERATION + "/facets"): Rule(Role.viewer, path=_loop()),
    ("POST", ITERATION + "/approve"): Rule(Role.reviewer, 200, lambda w: {}, _loop()),
    ("POST", ITERATION + "/reject"): Rule(Role.reviewer, 200, lambda w: {
        "reason": "Too long"}, _loop()),
    ("POST", ITERATION + "/edit"): Rule(Role.reviewer, 200, lambda w: {
        "diff": diff_for("Be brief and kind.")}, _loop()),
    ("POST", ITERATION + "/comments"): Rule(Role.reviewer, 201, lambda w: {
        "body": "Looks right"}, _loop()),
    ("POST", ITERATION + "/counterexamples"): Rule(Role.reviewer, 201, lambda w: {
        "cases": [{"input": {"question": "And now?"}}]}, _loop()),
    ("POST", EXPERIMENT + "/pause"): Rule(Role.editor, path=_loop()),
    ("POST", EXPERIMENT + "/resume"): Rule(Role.editor, path=_loop(paused=True)),
    ("POST", EXPERIMENT + "/cancel"): Rule(Role.editor, path=_loop()),
    ("GET", EXPERIMENT + "/progress"): Rule(Role.viewer, path=_loop()),
    ("GET", EXPERIMENT + "/events"): Rule(Role.viewer, path=_loop("ended")),
})
EXP = PROJECT + "/experiments"
ASSIST = PROJECT + "/assist"


def _assist(w: World, body: dict[str, Any]) -> dict[str, Any]:
    return {"model_id": assist_model(w.project.id, w.factory.settings.fake_provider_url),
            **body}


def _start(w: World) -> dict[str, Any]:
    with db.factory() as session:  # the loop runs for real: a budget needs priced models
        session.execute(update(ModelConfig).where(ModelConfig.project_id == w.project.id)
                        .values(input_price_per_mtok_micros=100_000,
                                output_price_per_mtok_micros=100_000))
        session.commit()
    return {}


ROUTES.update({
    ("GET", EXP): Rule(Role.viewer),
    ("POST", EXP): Rule(Role.editor, 201, lambda w: {"name": f"Tenancy {w.newcomer.id}"}),
    ("GET", EXP + "/{experiment_id}"): Rule(Role.viewer),
    ("PATCH", EXP + "/{experiment_id}"): Rule(Role.editor, 200, lambda w: {"name": "Renamed"}),
    ("POST", EXP + "/{experiment_id}/validate"): Rule(Role.viewer, 200, lambda w: {
        "steps": ["objective", "stop"]}),
    ("POST", EXP + "/{experiment_id}/start"): Rule(Role.editor, 200, _start),
    ("POST", EXP + "/{experiment_id}/duplicate"): Rule(Role.editor, 201),
    ("GET", EXP + "/{experiment_id}/config-versions"): Rule(Role.viewer),
    ("GET", EXP + "/{experiment_id}/estimate"): Rule(Role.viewer),
    ("GET", EXP + "/{experiment_id}/report"): Rule(Role.viewer),
    ("GET", EXP + "/{experiment_id}/report/export"): Rule(Role.viewer),
    ("POST", EXP + "/import"): Rule(Role.editor, 201, lambda w: {"content": tiny_bundle()}),
    ("GET", PROJECT + "/experiment-templates"): Rule(Role.viewer),
    ("POST", PROJECT + "/experiment-templates/{slug}/apply"): Rule(Role.editor, 201),
    ("POST", ASSIST + "/objectives"): Rule(Role.editor, 200, lambda w: _assist(w, {
        "hints": "support replies for a shop"})),
    ("POST", ASSIST + "/objective"): Rule(Role.editor, 200, lambda w: _assist(w, {
        "objective": "Answer customers"})),
    ("POST", ASSIST + "/rubric"): Rule(Role.editor, 200, lambda w: _assist(w, {
        "objective": "Answer customers"})),
    ("POST", ASSIST + "/prompts"): Rule(Role.editor, 200, lambda w: _assist(w, {
        "objective": "Answer customers", "rubric": ASSIST_RUBRIC})),
    ("POST", ASSIST + "/prompt"): Rule(Role.editor, 200, lambda w: _assist(w, {
        "objective": "Answer customers", "prompt": "Answer {{question}}"})),
    ("GET", PROJECT + "/prompts/{prompt_id}/diff"): Rule(Role.viewer),
    ("POST", PROJECT + "/prompts/{prompt_id}/diff-preview"): Rule(Role.editor, 200, lambda w: {
        "template": "Say {{question}} now"}),
    ("GET", PROJECT + "/prompts/{prompt_id}/tree"): Rule(Role.viewer),
})
# EvalArena: global content any signed-in user reads and practises on; a judge run is paid
# by the project it names, so that one route follows the project's roles (no allowance set).
ARENA = "/api/arena/challenges/{challenge_id}"
ARENA_CHALLENGE = "refund-verification"
ROUTES.update({
    ("GET", "/api/arena/challenges"): Rule(Role.viewer, path=World.arena, anyone=True),
    ("GET", ARENA): Rule(Role.viewer, path=World.arena, anyone=True),
    ("PUT", ARENA + "/drafts/{tab}"): Rule(Role.viewer, 200, lambda w: {"text": "rules: []"},
                                          World.arena, anyone=True),
    ("POST", ARENA + "/hints/{tab}"): Rule(Role.viewer, path=World.arena, anyone=True),
    ("POST", ARENA + "/validate"): Rule(Role.viewer, 200, lambda w: {
        "tab": "rules", "text": "rules: []"}, World.arena, anyone=True),
    ("POST", ARENA + "/attempts"): Rule(Role.editor, 201, World.judge_attempt),
    ("GET", ARENA + "/attempts"): Rule(Role.viewer, path=World.arena, anyone=True),
    ("GET", ARENA + "/attempts/{attempt_id}"): Rule(Role.viewer, path=World.own_attempt,
                                                    anyone=True),
})
SSE = {("GET", EXPERIMENT + "/events"): "experiment.finished",
       ("GET", PROJECT + "/runs/{run_id}/events"): "run.finished",
       ("GET", PROJECT + "/generation/{job_id}/events"): "generation.finished",
       ("GET", PROJECT + "/runs/{run_id}/scorers/events"): "run.scoring_finished"}
# Downloads: the file in its own content type, in its default format
DOWNLOADS = {("GET", DATASET + "/export"): "application/x-ndjson",
             ("GET", PROJECT + "/runs/{run_id}/export"): "application/json",
             ("GET", EXP + "/{experiment_id}/report/export"): "text/markdown"}


def _template(rule: str) -> str:
    """`/a/<int(min=1):project_id>/b` -> `/a/{project_id}/b`, whatever the converter."""
    return re.sub(r"<(?:[^<>:]+:)?([^<>:]+)>", r"{\1}", rule)


def project_routes(app: Flask) -> set[tuple[str, str]]:
    """The routes of a project, and EvalArena's (a judge run is paid by a project)."""
    found = set()
    for rule in app.url_map.iter_rules():
        if "project_id" not in rule.arguments and not rule.rule.startswith("/api/arena"):
            continue
        for method in (rule.methods or set()) - {"HEAD", "OPTIONS"}:
            found.add((method, _template(rule.rule)))
    return found


def test_routes_table_covers_every_project_route(app: Flask) -> None:
    found = project_routes(app)
    assert found, "no project routes found in url_map"
    assert set(ROUTES) - found == set(), "rows for routes that do not exist"
    assert found - set(ROUTES) == set(), "project routes without a row in ROUTES"
    project_itself = {key for key in found if key[1] == PROJECT}
    assert project_itself == {("GET", PROJECT), ("PATCH", PROJECT), ("DELETE", PROJECT)}


def _row_counts() -> dict[str, int]:
    with db.factory() as session:
        return {table.name: session.scalar(select(func.count()).select_from(table)) or 0
                for table in db.metadata.sorted_tables}


def build_world(factory: Factory) -> World:
    owner = factory.user()
    project = factory.project(owner, "Tenant")
    users = {Role.owner.value: owner}
    for role in (Role.viewer, Role.reviewer, Role.editor, Role.admin):
        users[role.value] = factory.member(project, role)
    foreign = factory.user()
    foreign_project = factory.project(foreign, "Elsewhere")
    users[FOREIGN] = foreign
    run_id = factory.finished_run(owner, project)
    pin(run_id, make_scorer(project.id))  # the run's statistics have a scorer to speak of
    factory.finished_run(foreign, foreign_project)
    world = World(factory=factory, project=project, users=users, run_id=run_id,
                  target=factory.member(project, Role.viewer), newcomer=factory.user(),
                  foreign_project=foreign_project)
    world.output_id = first_output(run_id)
    succeed(world.output_id)
    world.scorer_id, world.scorer_version_id = factory.scorer(project)
    world.fresh_targets()
    comparison_body(project.id, run_id)  # a pairwise scorer exists before any row count
    world.judge_the_run()
    world.job_id = finished_job(owner.id, project.id, world.model_id)
    world.document_id = make_document(project.id)
    finished_job(foreign.id, foreign_project.id, _any_model(foreign_project))
    return world


def _any_model(project: Project) -> int:
    with db.factory() as session:
        found = session.scalar(select(ModelConfig.id).where(ModelConfig.project_id == project.id))
    assert found is not None
    return found


@pytest.fixture
def world(factory: Factory) -> World:
    return build_world(factory)


def _expected(actor: str, rule: Rule) -> int:
    if rule.anyone:
        return rule.ok
    if actor == FOREIGN:
        return 404
    return rule.ok if Role(actor).at_least(rule.needs) else 403


def _call(browser: Session, method: str, url: str,
          body: dict[str, Any] | None) -> Any:
    kwargs: dict[str, Any] = {} if body is None else {"json": body}
    if body is not None and isinstance(body.get("file"), tuple):  # an upload
        kwargs = {"data": body, "content_type": "multipart/form-data"}
    return browser.request(method, url, **kwargs)


# Refused actors first, then upwards: the owner (who alone may delete) goes last.
MATRIX_ORDER = [FOREIGN, *(role.value for role in Role)]


def _check_cell(world: World, method: str, route: str, actor: str) -> str | None:
    """Call the route as `actor`; a description of what is wrong, or None."""
    rule = ROUTES[(method, route)]
    expected = _expected(actor, rule)
    world.fresh_targets()
    world.actor = actor
    url = route.format(**{**world.path_args(), **(rule.path(world) if rule.path else {})}) \
        + rule.query
    body = rule.body(world) if rule.body else None
    browser = world.factory.login(world.users[actor])
    before = _row_counts()
    reply = _call(browser, method, url, body)
    text = reply.get_data(as_text=True)
    where = f"{method} {route} as {actor}: expected {expected}, got {reply.status_code}"
    if reply.status_code != expected:
        return f"{where} {text[:200]}"
    if expected >= 400:
        code = {403: "FORBIDDEN", 404: "NOT_FOUND"}[expected]
        if reply.json is None or reply.json.get("code") != code \
                or reply.json.get("status") != expected:
            return f"{where}, but the body is {text[:200]}"
        if expected == 404 and "Tenant" in text:
            return f"{where}, but the body names the project"
        if _row_counts() != before:
            return f"{where}, but a refused request wrote something"
    elif (method, route) in SSE:
        if reply.mimetype != "text/event-stream" \
                or f"event: {SSE[(method, route)]}" not in text:
            return f"{where}, but the stream is {reply.mimetype} {text[:200]}"
    elif (method, route) in DOWNLOADS:
        if reply.mimetype != DOWNLOADS[(method, route)] \
                or not reply.headers.get("Content-Disposition", "").startswith("attachment"):
            return f"{where}, but the download is {reply.mimetype} {text[:200]}"
    elif expected != 204 and reply.json is None:
        return f"{where}, but no JSON body"
    return None


@pytest.mark.parametrize(("method", "route"), sorted(ROUTES))
def test_role_matrix(world: World, method: str, route: str) -> None:
    """Foreign users get 404, members below the route's role 403, the others success."""
    problems = [problem for actor in MATRIX_ORDER
                if (problem := _check_cell(world, method, route, actor))]
    assert not problems, "\n".join(problems)


def test_matrix_order_covers_every_actor() -> None:
    assert sorted(MATRIX_ORDER) == sorted(ACTORS) and MATRIX_ORDER[-1] == Role.owner.value


def test_every_project_route_refuses_anonymous_requests(app: Flask, world: World) -> None:
    client = app.test_client()
    for method, route in ROUTES:
        reply = client.open(route.format(**world.path_args()), method=method, json={})
        assert reply.status_code == 401, (method, route)
        assert reply.json is not None and reply.json["code"] == "UNAUTHORIZED"


def test_a_project_that_does_not_exist_is_404_for_everyone(world: World) -> None:
    browser = world.factory.login(world.users[Role.owner.value])
    missing = {**world.path_args(), "project_id": world.foreign_project.id + 1000}
    for (method, route), rule in ROUTES.items():
        if "{project_id}" not in route:  # EvalArena's: test_arena_tenancy.py
            continue
        body = rule.body(world) if rule.body else None
        reply = _call(browser, method, route.format(**missing) + rule.query, body)
        assert reply.status_code == 404, (method, route)


def test_nested_ids_of_another_project_are_not_found(world: World) -> None:
    """A foreign owner addressing this project's run or member through their own project."""
    browser = world.factory.login(world.users[FOREIGN])
    theirs = {**world.path_args(), "project_id": world.foreign_project.id}
    nested = [(method, route, rule.body(world) if rule.body else None)  # bodies may add rows
              for (method, route), rule in ROUTES.items()
              if any(f"{{{name}}}" in route
                     for name in ("run_id", "user_id", "credential_id", "model_id",
                                  "dataset_id", "case_id", "job_id",
                                  "document_id", "output_id", "scorer_id",
                                  "scorer_version_id"))]
    before = _row_counts()
    for method, route, body in nested:
        reply = _call(browser, method, route.format(**theirs) + ROUTES[(method, route)].query, body)
        assert reply.status_code == 404, (method, route, reply.json)
    # Starting a run in their project on this project's dataset and models.
    reply = browser.post(f"/api/projects/{world.foreign_project.id}/runs",
                         json=world.run_body())
    assert reply.status_code in (404, 422), reply.json
    assert _row_counts() == before
    assert world.target.id in _members(world.project)


def test_the_project_list_never_shows_foreign_projects(world: World) -> None:
    foreign = world.factory.login(world.users[FOREIGN])
    listed = foreign.get("/api/projects").json
    assert listed is not None
    assert [p["name"] for p in listed["items"]] == ["Elsewhere"]
    for query in ({"q": "Tenant"}, {"role": "viewer"}, {"page_size": 100}):
        found = foreign.get("/api/projects", query_string=query).json
        assert found is not None
        assert "Tenant" not in [p["name"] for p in found["items"]]


# --- the owner role -----------------------------------------------------------------------


def _members(project: Project) -> dict[int, str]:
    with db.factory() as session:
        return dict(session.execute(select(Membership.user_id, Membership.role).where(
            Membership.project_id == project.id)).all())


def _code(reply: Any) -> tuple[int, str]:
    return reply.status_code, (reply.json or {}).get("code")


def test_the_last_owner_cannot_be_removed_or_demoted(factory: Factory) -> None:
    owner = factory.user()
    project = factory.project(owner)
    browser = factory.login(owner)
    url = f"/api/projects/{project.id}/members/{owner.id}"
    for role in ("admin", "editor", "viewer"):
        assert _code(browser.patch(url, json={"role": role})) == (409, "LAST_OWNER")
    assert _code(browser.delete(url)) == (409, "LAST_OWNER")
    assert _members(project) == {owner.id: "owner"}
    assert browser.patch(url, json={"role": "owner"}).status_code == 200  # a no-op is fine


def test_with_two_owners_one_may_go_but_not_the_last(factory: Factory) -> None:
    owner = factory.user()
    project = factory.project(owner)
    second = factory.member(project, Role.owner)
    browser = factory.login(owner)
    base = f"/api/projects/{project.id}/members"
    assert browser.patch(f"{base}/{second.id}", json={"role": "admin"}).status_code == 200
    assert _code(browser.patch(f"{base}/{owner.id}", json={"role": "admin"})) == \
        (409, "LAST_OWNER")
    assert browser.patch(f"{base}/{second.id}", json={"role": "owner"}).status_code == 200
    assert browser.delete(f"{base}/{second.id}").status_code == 204
    assert _code(browser.delete(f"{base}/{owner.id}")) == (409, "LAST_OWNER")
    assert _members(project) == {owner.id: "owner"}


def test_an_owner_may_leave_when_another_owner_stays(factory: Factory) -> None:
    owner = factory.user()
    project = factory.project(owner)
    heir = factory.member(project, Role.owner)
    browser = factory.login(owner)
    assert browser.delete(f"/api/projects/{project.id}/members/{owner.id}").status_code == 204
    assert _members(project) == {heir.id: "owner"}


def test_an_admin_cannot_touch_owners_nor_grant_owner(factory: Factory) -> None:
    owner = factory.user()
    project = factory.project(owner)
    admin = factory.member(project, Role.admin)
    member = factory.member(project, Role.viewer)
    newcomer = factory.user()
    browser = factory.login(admin)
    base = f"/api/projects/{project.id}/members"
    before = (_members(project), _row_counts())
    attempts = [
        browser.patch(f"{base}/{owner.id}", json={"role": "admin"}),   # change an owner
        browser.patch(f"{base}/{owner.id}", json={"role": "owner"}),
        browser.delete(f"{base}/{owner.id}"),                          # remove an owner
        browser.post(base, json={"email": newcomer.email, "role": "owner"}),  # grant owner
        browser.patch(f"{base}/{member.id}", json={"role": "owner"}),
        browser.patch(f"{base}/{admin.id}", json={"role": "owner"}),   # promote oneself
    ]
    for reply in attempts:
        assert _code(reply) == (403, "FORBIDDEN"), reply.json
    assert (_members(project), _row_counts()) == before
    assert browser.patch(f"{base}/{member.id}", json={"role": "admin"}).status_code == 200


# --- the audit trail --------------------------------------------------------------------------


def _latest_audit(browser: Session, project_id: int) -> dict[str, Any]:
    reply = browser.get(f"/api/projects/{project_id}/audit")
    assert reply.status_code == 200 and reply.json is not None
    return dict(reply.json["items"][0])


def test_every_mutation_writes_an_audit_event(factory: Factory) -> None:
    owner = factory.user()
    browser = factory.login(owner)
    made = browser.post("/api/projects", json={"name": "Audited"})
    assert made.status_code == 201 and made.json is not None
    pid = made.json["id"]
    event = _latest_audit(browser, pid)
    assert event["action"] == "project.created" and event["actor_email"] == owner.email
    assert event["target_type"] == "project" and event["target_id"] == str(pid)

    assert browser.patch(f"/api/projects/{pid}", json={"name": "Audited Too"}).status_code == 200
    event = _latest_audit(browser, pid)
    assert event["action"] == "project.updated"
    assert event["data"] == {"before": {"name": "Audited"}, "after": {"name": "Audited Too"}}

    member = factory.user()
    base = f"/api/projects/{pid}/members"
    assert browser.post(base, json={"email": member.email, "role": "viewer"}).status_code == 201
    event = _latest_audit(browser, pid)
    assert event["action"] == "member.added" and event["target_id"] == str(member.id)
    assert event["data"]["role"] == "viewer"

    assert browser.patch(f"{base}/{member.id}", json={"role": "editor"}).status_code == 200
    event = _latest_audit(browser, pid)
    assert event["action"] == "member.role_changed"
    assert event["data"] == {"before": "viewer", "after": "editor"}

    assert browser.delete(f"{base}/{member.id}").status_code == 204
    event = _latest_audit(browser, pid)
    assert event["action"] == "member.removed" and event["target_id"] == str(member.id)

    started = browser.post(f"/api/projects/{pid}/runs/demo")
    assert started.status_code == 202 and started.json is not None
    event = _latest_audit(browser, pid)
    assert event["action"] == "run.created" and event["target_id"] == str(started.json["id"])
    assert event["actor_email"] == owner.email

    trail = browser.get(f"/api/projects/{pid}/audit", query_string={"page_size": 100}).json
    assert trail is not None
    actions = [item["action"] for item in trail["items"]]
    for action in ("project.created", "project.updated", "member.added",
                   "member.role_changed", "member.removed", "run.created"):
        assert actions.count(action) == 1, actions
    assert trail["total"] == len(actions)

    assert browser.delete(f"/api/projects/{pid}").status_code == 204
    with db.factory() as session:
        deleted = session.scalars(select(AuditEvent).where(
            AuditEvent.action == "project.deleted")).all()
    assert [(e.target_id, e.actor_id, e.data["name"]) for e in deleted] == \
        [(str(pid), owner.id, "Audited Too")]


def test_refused_mutations_write_no_audit_event(world: World) -> None:
    viewer = world.factory.login(world.users[Role.viewer.value])
    with db.factory() as session:
        before = session.scalar(select(func.count()).select_from(AuditEvent))
    assert viewer.patch(f"/api/projects/{world.project.id}",
                        json={"name": "Nope"}).status_code == 403
    assert viewer.post(f"/api/projects/{world.project.id}/runs/demo").status_code == 403
    with db.factory() as session:
        assert session.scalar(select(func.count()).select_from(AuditEvent)) == before


def test_token_mutations_are_audited(factory: Factory) -> None:
    browser = factory.signed_in()
    made = browser.post("/api/auth/tokens", json={"name": "ci"})
    assert made.status_code == 201 and made.json is not None
    assert browser.delete(f"/api/auth/tokens/{made.json['id']}").status_code == 204
    with db.factory() as session:
        actions = list(session.scalars(select(AuditEvent.action).where(
            AuditEvent.actor_id == browser.user_id).order_by(AuditEvent.id)))
    assert actions[-2:] == ["token.created", "token.deleted"]
