"""Bad input, driven by the OpenAPI document: every JSON body, every query argument, every
id in a path. Each bad request is a 422 (413 when too large, 404 for an id that cannot
exist) in the one error shape, and writes nothing.

VALID holds one valid body per operation that takes a JSON body; it must cover exactly the
operations of the document and every property of their schemas, so a new endpoint or field
without an entry fails `test_valid_bodies_cover_the_document`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import func, select

from assay.api.experiments.reports import BODY_BYTES
from assay.core.auth.models import ApiToken, User
from assay.core.datasets.models import Dataset
from assay.core.datasets.service import latest_version, version_cases
from assay.core.llm.models import Credential, ModelConfig
from assay.core.projects.invites import create_invite
from assay.core.projects.models import Project, Role
from assay.core.prompts.service import create_prompt
from assay.extensions import db
from assay.runtime import current
from tests.api.arena_helpers import fixture
from tests.api.arena_helpers import seed as seed_arena
from tests.api.experiment_rows import diff_for, experiment_in_state
from tests.api.helpers_experiments import (
    ASSIST_RUBRIC,
    assist_model,
    draft_in,
    steps,
    tiny_bundle,
)
from tests.api.test_comparisons import comparison_body
from tests.api.test_critiques import critique_body
from tests.api.test_generation import finished_job, make_document
from tests.factories import PASSWORD, Factory, Session, first_output, succeed

STRONG = "Sturdy-passw0rd!"
ONE_MB = 1_000_000


@dataclass
class World:
    owner: User
    browser: Session
    project: Project
    run_id: int
    target: User
    newcomer: User
    token_id: int
    dataset_id: int
    model_ids: list[int]
    credential_id: int
    case_id: int
    job_id: int
    document_id: int
    output_id: int
    version_id: int = 0  # the dataset's latest version
    prompt_id: int = 0
    prompt_version_id: int = 0
    scorer_id: int = 0  # a manual scorer (scale 1-5)
    scorer_version_id: int = 0
    invite_id: int = 0
    attachable_version_id: int = 0  # a reference check not pinned on run_id
    attempt_id: int = 0  # the owner's EvalArena attempt
    experiment_id: int = 0  # a valid draft
    assist_model_id: int = 0  # a model scripted to answer every kind of assist
    loop_experiment_id: int = 0  # its iteration 1 awaits review

    def args_for(self, path: str) -> dict[str, Any]:
        """The path's arguments: the loop's routes act on an experiment past its start."""
        args = self.path_args()
        if "/iterations" in path or path.endswith(("/pause", "/resume", "/cancel",
                                                   "/progress", "/events")):
            args["experiment_id"] = self.loop_experiment_id
        return args

    def path_args(self) -> dict[str, Any]:
        return {"challenge_id": ARENA_CHALLENGE, "tab": "rules", "attempt_id": self.attempt_id,
                "project_id": self.project.id, "run_id": self.run_id,
                "base_run_id": self.run_id, "user_id": self.target.id, "token_id": self.token_id,
                "credential_id": self.credential_id, "model_id": self.model_ids[0],
                "dataset_id": self.dataset_id, "case_id": self.case_id,
                "job_id": self.job_id, "document_id": self.document_id,
                "output_id": self.output_id,
                "prompt_id": self.prompt_id, "prompt_version_id": self.prompt_version_id,
                "scorer_id": self.scorer_id,
                "scorer_version_id": self.scorer_version_id, "invite_id": self.invite_id,
                "experiment_id": self.experiment_id, "number": 1,
                "slug": "customer-support"}  # type: ignore[dict-item]


def run_body(w: World) -> dict[str, Any]:
    """Every field of RunCreate, valid."""
    return {"name": "Checked", "dataset_id": w.dataset_id, "dataset_version_id": w.version_id,
            "targets": [{"model_id": w.model_ids[0], "params": {"temperature": 0.5},
                         "prompt_version_id": w.prompt_version_id,
                         "grid": {"max_tokens": [64, 128]}}],
            "repeats": 1, "concurrency": 8, "cache": False, "timeout_s": 30, "stream": False,
            "max_retries": 1, "max_history_pairs": 5, "budget_micros": 10**9,
            "alert_threshold": 0.5,
            "shards": 2, "scorer_ids": [w.scorer_id], "scorer_version_ids": [], "rag": None}


TOOL = {"name": "lookup", "description": "Find an order",
        "parameters": {"type": "object", "properties": {"id": {"type": "string"}}}}
SCORE = "/api/projects/{project_id}/runs/{run_id}/outputs/{output_id}/scores/{scorer_version_id}"


def _tagged(w: World, body: dict[str, Any]) -> dict[str, Any]:
    """The world's dataset tagged "a", so renaming or removing that tag succeeds; `body`."""
    with db.factory() as session:
        dataset = session.get(Dataset, w.dataset_id)
        assert dataset is not None
        dataset.tags = ["a"]
        session.commit()
    return body


IMPORT = "/api/projects/{project_id}/datasets/{dataset_id}/import"
ARENA_CHALLENGE = "refund-verification"
ARENA = "/api/arena/challenges/{challenge_id}"
ITERATION = "/api/projects/{project_id}/experiments/{experiment_id}/iterations/{number}"
EXP = "/api/projects/{project_id}/experiments"
ASSIST = "/api/projects/{project_id}/assist"


def experiment_body(w: World) -> dict[str, Any]:
    return {"name": "Checked", "description": "words",
            **steps(w.model_ids[0], w.version_id)}


def assist_body(w: World, **body: Any) -> dict[str, Any]:
    return {"model_id": w.assist_model_id, "experiment_id": w.experiment_id, **body}
VALID: dict[tuple[str, str], Callable[[World], dict[str, Any]]] = {
    ("POST", "/api/auth/register"): lambda w: {
        "email": "fresh@example.com", "name": "Fresh", "password": STRONG,
        "confirm_password": STRONG},
    ("POST", "/api/auth/login"): lambda w: {
        "email": w.owner.email, "password": PASSWORD, "remember_me": False},
    ("POST", "/api/auth/tokens"): lambda w: {"name": "ci"},
    ("POST", ITERATION + "/approve"): lambda w: {"comment": "Good change"},
    ("POST", ITERATION + "/reject"): lambda w: {"reason": "Too vague"},
    ("POST", ITERATION + "/edit"): lambda w: {"diff": diff_for("Be brief and kind."),
                                              "comment": "Shorter"},
    ("POST", ITERATION + "/comments"): lambda w: {"body": "Looks right"},
    ("POST", ITERATION + "/counterexamples"): lambda w: {
        "cases": [{"input": {"question": "And now?"}}]},
    ("POST", "/api/projects"): lambda w: {"name": "New one", "description": "words"},
    ("PATCH", "/api/projects/{project_id}"): lambda w: {"name": "Renamed",
                                                         "description": "words"},
    ("POST", "/api/projects/{project_id}/members"): lambda w: {
        "email": w.newcomer.email, "role": "viewer"},
    ("PATCH", "/api/projects/{project_id}/members/{user_id}"): lambda w: {"role": "editor"},
    ("PATCH", "/api/projects/{project_id}/settings"): lambda w: {
        "name": "Renamed", "description": "words", "budget_micros": 10**9,
        "alert_threshold": 0.5, "default_concurrency": 4, "default_timeout_s": 30,
        "default_max_retries": 1, "code_execution": True, "arena_allowance_micros": 10**6},
    ("POST", "/api/projects/{project_id}/invites"): lambda w: {
        "email": "invited@example.com", "role": "viewer"},
    ("POST", "/api/projects/{project_id}/runs"): lambda w: run_body(w),
    ("POST", EXP): experiment_body,
    ("PATCH", EXP + "/{experiment_id}"): experiment_body,
    ("POST", EXP + "/{experiment_id}/validate"): lambda w: {"steps": ["objective", "data"]},
    # into a new draft: the world's draft stays as it is for the other operations
    ("POST", "/api/projects/{project_id}/experiment-templates/{slug}/apply"):
        lambda w: {"experiment_id": None},
    ("POST", EXP + "/import"): lambda w: {"content": tiny_bundle()},
    ("POST", ASSIST + "/objectives"): lambda w: assist_body(
        w, hints="support replies for a shop", count=3),
    ("POST", ASSIST + "/objective"): lambda w: assist_body(
        w, objective="Answer customers", mode="details"),
    ("POST", ASSIST + "/rubric"): lambda w: assist_body(w, objective="Answer customers"),
    ("POST", ASSIST + "/prompts"): lambda w: assist_body(
        w, objective="Answer customers", count=3, rubric=[
            {**c, "scale": {**c["scale"], "labels": {"0": "bad"}}} for c in ASSIST_RUBRIC]),
    ("POST", ASSIST + "/prompt"): lambda w: assist_body(
        w, objective="Answer customers", prompt="Answer {{question}}", focus=["tone"]),
    ("POST", "/api/projects/{project_id}/prompts/{prompt_id}/diff-preview"): lambda w: {
        "template": "Answer again: {{question}}", "system": "Be kind.",
        "parent_id": w.prompt_version_id},
    ("POST", "/api/projects/{project_id}/runs/estimate"): lambda w: run_body(w),
    ("PATCH", "/api/projects/{project_id}/runs/{run_id}"): lambda w: {
        "budget_micros": 1_000_000_000, "alert_threshold": 0.5},
    ("POST", "/api/projects/{project_id}/prompts"): lambda w: {
        "name": "Checked", "description": "words", "template": "Answer {{question}}",
        "system": "Be brief", "few_shots": [{"input": "2+2?", "output": "4"}], "note": "v1",
        "tools": [TOOL]},
    ("POST", "/api/projects/{project_id}/prompts/{prompt_id}/versions"): lambda w: {
        "template": "Answer {{ question }} briefly", "system": "Be brief",
        "few_shots": [{"input": "2+2?", "output": "4"}], "note": "Shorter answers",
        "tools": [TOOL], "parent_id": w.prompt_version_id},
    ("PUT", "/api/projects/{project_id}/prompts/{prompt_id}/production"): lambda w: {
        "version_id": w.prompt_version_id},
    ("POST", "/api/projects/{project_id}/scorers"): lambda w: {
        "name": "Checked", "kind": "manual", "params": {"scale": "criteria",
                                                        "criteria": ["accuracy"]},
        "description": "words", "note": "v1"},
    ("POST", "/api/projects/{project_id}/scorers/{scorer_id}/versions"): lambda w: {
        "params": {"scale": "pass_fail"}, "note": "v2"},
    ("POST", "/api/projects/{project_id}/scorers/preview"): lambda w: {
        "kind": "pairwise_judge", "params": {"judges": ["Judge"]},
        "sample": {"output": "One", "input": {"question": "Why?"}, "reference": "Two",
                   "context": "Grounding"},
        "second": {"output": "Two", "input": None, "reference": None, "context": None}},
    ("POST", "/api/projects/{project_id}/scorers/try"): lambda w: {
        "kind": "contains", "params": {"value": "ok"}, "output_id": None,
        "sample": {"output": "ok then", "input": None, "reference": None, "context": None}},
    ("PUT", "/api/projects/{project_id}/runs/{run_id}/headline"): lambda w: {
        "scorer_id": None},
    ("POST", "/api/projects/{project_id}/runs/{run_id}/scorers"): lambda w: {
        "scorer_version_ids": [w.attachable_version_id]},
    ("POST", "/api/projects/{project_id}/runs/{run_id}/scorers/estimate"): lambda w: {
        "scorer_version_ids": [w.attachable_version_id]},
    ("PUT", SCORE): lambda w: {"rating": 4, "passed": True, "criteria": {}, "comment": "Apt"},
    ("PUT", "/api/projects/{project_id}/runs/{run_id}/scores/{scorer_version_id}"): lambda w: {
        "output_ids": [w.output_id], "row_versions": [0], "rating": 4, "passed": True,
        "criteria": {}, "comment": "Apt"},
    ("POST", "/api/projects/{project_id}/credentials"): lambda w: {
        "kind": "fake", "label": "Checked", "base_url": "http://127.0.0.1:9",
        "api_key": "sk-checked-12345678", "secret_env": "CHECKED_API_KEY", "config": {},
        "concurrency_ceiling": 8, "is_default": True},
    ("PATCH", "/api/projects/{project_id}/credentials/{credential_id}"): lambda w: {
        "label": "Renamed", "base_url": "http://127.0.0.1:9", "api_key": "sk-renamed-12345678",
        "secret_env": "CHECKED_API_KEY", "config": {}, "concurrency_ceiling": None,
        "is_default": True},
    ("POST", "/api/projects/{project_id}/models"): lambda w: {
        "name": "Checked", "credential_id": w.credential_id, "model": "fake-fast",
        "input_price_per_mtok_micros": 150_000, "output_price_per_mtok_micros": 600_000,
        "context_window": 8192, "params": {"temperature": 0.5, "max_tokens": 256}},
    ("PATCH", "/api/projects/{project_id}/models/{model_id}"): lambda w: {
        "name": "Renamed", "credential_id": w.credential_id, "model": "fake-smart",
        "input_price_per_mtok_micros": 150_000, "output_price_per_mtok_micros": 600_000,
        "context_window": 8192, "params": {"temperature": 0.5, "max_tokens": 256}},
    ("POST", "/api/projects/{project_id}/datasets"): lambda w: {
        "name": "Checked", "kind": "questions", "description": "words", "split": "dev",
        "tags": ["a"], "cases": [{"input": {"question": "Why?"}, "tags": ["a"]}]},
    ("PATCH", "/api/projects/{project_id}/datasets/{dataset_id}"): lambda w: {
        "name": "Renamed", "description": "words", "split": "test", "tags": ["a"]},
    ("POST", "/api/projects/{project_id}/datasets/{dataset_id}/cases"): lambda w: {
        "input": {"question": "How?"}, "expected": {"answer": "So."}, "trace": None,
        "tags": ["a"], "difficulty": "easy", "metadata": {"source": "x"}, "note": "added"},
    ("POST", "/api/projects/{project_id}/datasets/{dataset_id}/cases/bulk"): lambda w: {
        "cases": [{"input": {"question": "How?"}, "tags": ["a"], "difficulty": "easy"}],
        "note": "added"},
    ("POST", "/api/projects/{project_id}/datasets/tags/rename"): lambda w: _tagged(w, {
        "from": "a", "to": "b"}),
    ("POST", "/api/projects/{project_id}/datasets/tags/remove"): lambda w: _tagged(
        w, {"tag": "a"}),
    ("PATCH", "/api/projects/{project_id}/datasets/{dataset_id}/cases/{case_id}"): lambda w: {
        "input": {"question": "How?"}, "expected": {"answer": "So."}, "trace": None,
        "tags": ["a"], "difficulty": "hard", "metadata": {"source": "x"}, "note": "edited"},
    ("POST", IMPORT + "/preview"): lambda w: {
        "format": "csv", "content": "question\nWhy?\n", "base64": False},
    ("POST", IMPORT): lambda w: {
        "format": "csv", "content": "q\nWhy?\n", "base64": False, "note": "imported",
        "mapping": {"variables": {"q": "question"}, "expected": None, "tags": None,
                    "difficulty": None}},
    ("POST", "/api/projects/{project_id}/generation/questions"): lambda w: {
        "model_id": w.model_ids[0], "count": 3, "topic": "Rivers", "instructions": "Be brief",
        "type_tags": ["logic"], "difficulty": "easy", "max_cost_micros": 10**9},
    ("POST", "/api/projects/{project_id}/generation/questions/estimate"): lambda w: {
        "model_id": w.model_ids[0], "count": 3, "topic": "Rivers", "instructions": "Be brief",
        "type_tags": ["logic"], "difficulty": "easy", "max_cost_micros": 10**9},
    ("POST", "/api/projects/{project_id}/generation/cases"): lambda w: {
        "model_id": w.model_ids[0], "count": 10, "diversity": 3, "domain_hints": "Support",
        "variables": ["question"], "include_edge_cases": False, "max_cost_micros": 10**9,
        "prompt_template": "Answer {{question}} briefly."},
    ("POST", "/api/projects/{project_id}/generation/cases/estimate"): lambda w: {
        "model_id": w.model_ids[0], "count": 10, "diversity": 3, "domain_hints": "Support",
        "variables": ["question"], "include_edge_cases": False, "max_cost_micros": 10**9,
        "prompt_template": "Answer {{question}} briefly."},
    ("POST", "/api/projects/{project_id}/generation/conversations"): lambda w: {
        "model_id": w.model_ids[0], "document_id": w.document_id, "count": 2, "turns": 2,
        "max_cost_micros": 10**9},
    ("POST", "/api/projects/{project_id}/generation/conversations/estimate"): lambda w: {
        "model_id": w.model_ids[0], "document_id": w.document_id, "count": 2, "turns": 2,
        "max_cost_micros": 10**9},
    ("POST", "/api/projects/{project_id}/generation/{job_id}/accept"): lambda w: {
        "dataset_name": "Checked", "selected": [0]},
    ("POST", "/api/projects/{project_id}/runs/{run_id}/comparisons"): lambda w: {
        **comparison_body(w.project.id, w.run_id), "base_run_id": None, "base_target_id": None},
    ("PUT", ARENA + "/drafts/{tab}"): lambda w: {"text": "rules: []"},
    ("POST", ARENA + "/validate"): lambda w: {"tab": "rules", "text": "rules: []"},
    ("POST", ARENA + "/attempts"): lambda w: {
        "tab": "rules", "text": fixture(ARENA_CHALLENGE, "reference.rules.yaml"), "set": "dev",
        "project_id": w.project.id, "judge": "Not used by the rules tab"},
    ("POST", "/api/projects/{project_id}/critiques"): lambda w: critique_body(
        w.project.id, current().settings.fake_provider_url),
    ("POST", "/api/projects/{project_id}/datasets/{dataset_id}/judgments"): lambda w: {
        "judges": [w.model_ids[0]], "criteria": ["clarity", "overall"],
        "instruction": "Be strict.", "dataset_version_id": w.version_id},
}
# Import bodies carry a file of up to 10 MB (base64): their limit is 15 MB, not 1 MB.
LARGE_BODIES = {("POST", IMPORT + "/preview"): 15_000_000, ("POST", IMPORT): 15_000_000,
                ("POST", EXP + "/import"): BODY_BYTES}


@pytest.fixture(scope="module")
def openapi(app: Flask) -> dict[str, Any]:
    reply = app.test_client().get("/api/openapi.json")
    assert reply.status_code == 200 and reply.json is not None
    return dict(reply.json)


def _resolve(doc: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        node: Any = doc
        for part in schema["$ref"].removeprefix("#/").split("/"):
            node = node[part]
        schema = node
    return schema


def _operations(doc: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, item in doc["paths"].items():
        for method, operation in item.items():
            if method in {"get", "post", "put", "patch", "delete"}:
                yield method.upper(), path, operation


def body_variants(doc: dict[str, Any], method: str, path: str) -> dict[str, dict[str, Any]]:
    """The body's schema by discriminator value ({"": schema} without a discriminator)."""
    operation = doc["paths"][path][method.lower()]
    content = operation["requestBody"]["content"]
    # a file may come as a form too (api/files.py): that form is tested where it is
    assert list(content) in (["application/json"], ["application/json", *UPLOADS]), (
        method, path, list(content))
    schema = _resolve(doc, content["application/json"]["schema"])
    if "discriminator" not in schema:
        return {"": schema}
    return {value: _resolve(doc, {"$ref": ref})
            for value, ref in schema["discriminator"]["mapping"].items()}


def body_schema(doc: dict[str, Any], method: str, path: str, world: World) -> dict[str, Any]:
    """The body's schema; for one discriminated by kind (a scorer's), the variant of the
    valid body's kind."""
    variants = body_variants(doc, method, path)
    return variants.get("") or variants[VALID[(method, path)](world)["kind"]]


def _flat(prop: dict[str, Any]) -> dict[str, Any]:
    """A nullable enum, allOf [{type, enum}] + nullable, as one schema."""
    inner = prop.get("allOf", [])
    if len(inner) != 1 or "$ref" in inner[0]:
        return prop
    return {**inner[0], **{key: value for key, value in prop.items() if key != "allOf"}}


def _properties(doc: dict[str, Any], schema: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {name: _flat(_resolve(doc, prop))
            for name, prop in schema.get("properties", {}).items()}


@pytest.fixture(autouse=True)
def _checked_key_granted(monkeypatch: pytest.MonkeyPatch) -> None:
    """The valid credential bodies name CHECKED_API_KEY: the operator grants it."""
    monkeypatch.setenv("ASSAY_CREDENTIAL_ENV", "CHECKED_API_KEY=*")
    monkeypatch.setenv("ASSAY_CREDENTIAL_ENV_URLS", "CHECKED_API_KEY=http://127.0.0.1:9")


@pytest.fixture
def world(factory: Factory) -> World:
    seed_arena()
    owner = factory.user()
    project = factory.project(owner, "Input")
    run_id = factory.finished_run(owner, project)
    comparison_body(project.id, run_id)  # the rows these bodies need exist before any count
    critique_body(project.id, factory.settings.fake_provider_url)
    target = factory.member(project, Role.viewer)
    factory.api_token(owner)
    with db.factory() as session:
        token_id = session.scalar(select(ApiToken.id).where(ApiToken.user_id == owner.id))
        dataset_id = session.scalar(select(Dataset.id).where(Dataset.project_id == project.id))
        model_ids = list(session.scalars(select(ModelConfig.id).where(  # not the judges
            ModelConfig.project_id == project.id,
            ModelConfig.input_price_per_mtok_micros.is_not(None)).order_by(ModelConfig.id)))
        credential_id = session.scalar(select(Credential.id).where(
            Credential.project_id == project.id))
    assert token_id is not None and dataset_id is not None and model_ids
    assert credential_id is not None
    with db.factory() as session:
        version = latest_version(session, dataset_id)
        version_id = version.id
        case_id = version_cases(session, version.id)[0].id
        prompt, prompt_version = create_prompt(session, None, session.merge(project), {
            "name": "Input prompt", "template": "Answer: {{question}}"})
        session.commit()
        prompt_id, prompt_version_id = prompt.id, prompt_version.id
        invite_id = create_invite(session, session.merge(owner), Role.owner,
                                  session.merge(project), "pending@example.com", Role.viewer).id
        session.commit()
    scorer_id, scorer_version_id = factory.scorer(project)
    _, attachable_version_id = factory.scorer(project, "Attach", "contains", {"value": "ok"})
    output_id = first_output(run_id)
    succeed(output_id)
    world = World(owner=owner, browser=factory.login(owner), project=project, run_id=run_id,
                  target=target, newcomer=factory.user(), token_id=token_id,
                  dataset_id=dataset_id, model_ids=model_ids, credential_id=credential_id,
                  case_id=case_id, job_id=finished_job(owner.id, project.id, model_ids[0]),
                  document_id=make_document(project.id), output_id=output_id,
                  version_id=version_id,
                  prompt_id=prompt_id, prompt_version_id=prompt_version_id,
                  scorer_id=scorer_id, scorer_version_id=scorer_version_id,
                  invite_id=invite_id, attachable_version_id=attachable_version_id,
                  experiment_id=draft_in(project, model_ids[0], version_id),
                  assist_model_id=assist_model(project.id, factory.settings.fake_provider_url),
                  loop_experiment_id=experiment_in_state(
                      project.id, factory.settings.fake_provider_url)["experiment_id"])
    world.attempt_id = world.browser.post(
        ARENA.format(challenge_id=ARENA_CHALLENGE) + "/attempts",
        json=VALID[("POST", ARENA + "/attempts")](world)).json["id"]
    return world


def _row_counts() -> dict[str, int]:
    with db.factory() as session:
        return {table.name: session.scalar(select(func.count()).select_from(table)) or 0
                for table in db.metadata.sorted_tables}


def _send(world: World, method: str, path: str, data: str | bytes,
          content_type: str = "application/json", query: dict[str, Any] | None = None) -> Any:
    return world.browser.request(method, path.format(**world.args_for(path)), data=data,
                                 content_type=content_type, query_string=query)


def _expect(reply: Any, status: int, context: object) -> dict[str, Any]:
    """The one error shape, with the given status."""
    assert reply.status_code == status, (context, reply.status_code,
                                         reply.get_data(as_text=True)[:500])
    body = reply.json
    assert isinstance(body, dict), context
    assert set(body) == {"code", "status", "message", "errors"}, (context, body)
    assert body["status"] == status and isinstance(body["message"], str) and body["message"]
    assert isinstance(body["errors"], dict)
    if status == 422:
        assert body["code"] == "VALIDATION_ERROR", (context, body)
    return body


def _field_error(reply: Any, field: str, context: object, location: str = "json") -> list[str]:
    body = _expect(reply, 422, context)
    errors = body["errors"].get(location)
    assert isinstance(errors, dict) and field in errors, (context, body)
    messages = errors[field]
    assert messages, (context, body)
    return messages if isinstance(messages, list) else [json.dumps(messages)]


BODY_OPERATIONS = sorted(VALID)
UPLOADS = ["multipart/form-data"]  # file uploads: their bad input is tested where they are


def test_valid_bodies_cover_the_document(openapi: dict[str, Any], world: World) -> None:
    with_body = {(method, path) for method, path, op in _operations(openapi)
                 if "requestBody" in op and list(op["requestBody"]["content"]) != UPLOADS}
    assert with_body, "the document lists no operation with a body"
    assert set(VALID) == with_body
    for method, path in with_body:
        schema = body_schema(openapi, method, path, world)
        assert schema.get("additionalProperties") is False, (method, path)
        assert set(VALID[(method, path)](world)) == set(schema["properties"]), (method, path)


def test_every_string_input_is_bounded(openapi: dict[str, Any]) -> None:
    """Oversized input is refused field by field, not only by the 1 MB body limit."""
    for method, path in BODY_OPERATIONS:
        for schema in body_variants(openapi, method, path).values():
            for name, prop in _properties(openapi, schema).items():
                if prop.get("type") == "string" and "enum" not in prop:
                    assert "maxLength" in prop, (method, path, name)
    for method, path, operation in _operations(openapi):
        for param in operation.get("parameters", []):
            schema = _flat(_resolve(openapi, param["schema"]))
            if schema.get("type") == "string" and "enum" not in schema:
                assert "maxLength" in schema, (method, path, param["name"])


@pytest.mark.parametrize(("method", "path"), BODY_OPERATIONS)
def test_the_valid_body_is_accepted(world: World, method: str, path: str) -> None:
    """The control: the bodies mutated below are valid before the mutation."""
    reply = _send(world, method, path, json.dumps(VALID[(method, path)](world)))
    assert 200 <= reply.status_code < 300, reply.get_data(as_text=True)


MALFORMED = ['{"name": ', "{name: 1}", "{'name': 'x'}", '{"name": "x",}', "{}}", "nul",
             '{"a": NaN}x', b"\xff\xfe{}", b'{"name": "\xc3\x28"}']


@pytest.mark.parametrize(("method", "path"), BODY_OPERATIONS)
def test_malformed_json(world: World, method: str, path: str) -> None:
    before = _row_counts()
    for data in MALFORMED:
        body = _expect(_send(world, method, path, data), 422, (method, path, data))
        assert "json" in body["errors"], (data, body)
    assert _row_counts() == before


@pytest.mark.parametrize(("method", "path"), BODY_OPERATIONS)
def test_json_that_is_not_an_object(world: World, method: str, path: str) -> None:
    before = _row_counts()
    valid = VALID[(method, path)](world)
    for data in ([valid], [], "a string", 42, 1.5, True, None):
        reply = _send(world, method, path, json.dumps(data))
        _field_error(reply, "_schema", (method, path, data))
    assert _row_counts() == before


def _wrong_values(prop: dict[str, Any]) -> list[Any]:
    if "anyOf" in prop or "allOf" in prop:  # nested: allOf [$ref] (+ nullable), anyOf [refs]
        prop = {"type": "object", "nullable": bool(prop.get("nullable"))}
    kind = prop.get("type") or ("object" if "$ref" in prop else None)  # a nested schema
    values: list[Any] = {
        "string": [123, 1.5, True, {}, ["x"]],
        "integer": ["abc", "7", 1.5, True, {}, [1]],
        "number": ["abc", True, {}, [1]],
        "boolean": ["maybe", "true", 1, 0, {}, [True]],
        "array": ["x", 1, {}, True],
        "object": ["x", 1, [], True],
    }[kind]
    if not prop.get("nullable"):
        values.append(None)
    if kind == "array":
        item = prop["items"]
        values += [[wrong] for wrong in _wrong_values(item)]
    return values


@pytest.mark.parametrize(("method", "path"), BODY_OPERATIONS)
def test_wrong_types(openapi: dict[str, Any], world: World, method: str, path: str) -> None:
    before = _row_counts()
    props = _properties(openapi, body_schema(openapi, method, path, world))
    for name, prop in props.items():
        for wrong in _wrong_values(prop):
            body = {**VALID[(method, path)](world), name: wrong}
            _field_error(_send(world, method, path, json.dumps(body)), name,
                         (method, path, name, wrong))
    assert _row_counts() == before


@pytest.mark.parametrize(("method", "path"), BODY_OPERATIONS)
def test_each_required_field_missing(openapi: dict[str, Any], world: World, method: str,
                                     path: str) -> None:
    before = _row_counts()
    for name in body_schema(openapi, method, path, world).get("required", []):
        body = VALID[(method, path)](world)
        del body[name]
        messages = _field_error(_send(world, method, path, json.dumps(body)), name,
                                (method, path, name))
        assert messages == ["Missing data for required field."]
    assert _row_counts() == before


def _too_long(name: str, limit: int) -> str:
    if "email" in name:
        return "a" * (limit + 1 - len("@example.com")) + "@example.com"
    return "Aa1!" + "a" * (limit - 3)


@pytest.mark.parametrize(("method", "path"), BODY_OPERATIONS)
def test_oversized_strings(openapi: dict[str, Any], world: World, method: str,
                           path: str) -> None:
    before = _row_counts()
    for name, prop in _properties(openapi, body_schema(openapi, method, path, world)).items():
        if "maxLength" not in prop:
            continue
        value = _too_long(name, prop["maxLength"])
        assert len(value) == prop["maxLength"] + 1
        body = {**VALID[(method, path)](world), name: value}
        if name == "password" and "confirm_password" in body:
            body["confirm_password"] = value
        messages = _field_error(_send(world, method, path, json.dumps(body)), name,
                                (method, path, name))
        assert any("length" in m.lower() for m in messages), messages
    assert _row_counts() == before


@pytest.mark.parametrize(("method", "path"), BODY_OPERATIONS)
def test_out_of_range_numbers_and_sizes(openapi: dict[str, Any], world: World, method: str,
                                        path: str) -> None:
    before = _row_counts()
    for name, prop in _properties(openapi, body_schema(openapi, method, path, world)).items():
        bad: list[Any] = []
        if prop.get("type") == "integer":
            assert "maximum" in prop, (method, path, name)  # ids and counts are bounded
            bad += [prop["maximum"] + 1, 2**63, 10**30]
            if "minimum" in prop:
                bad.append(prop["minimum"] - 1)
        if prop.get("type") == "string" and prop.get("minLength", 0) > 0:
            bad.append("")
        if prop.get("type") == "array":
            item = _resolve(openapi, prop["items"])
            if "minItems" in prop:
                bad.append([])
            if "maxItems" in prop:
                bad.append([1] * (prop["maxItems"] + 1))
            if item.get("type") == "integer":
                bad += [[item["maximum"] + 1], [10**30]] + (
                    [[item["minimum"] - 1]] if "minimum" in item else [])
        if "enum" in prop:
            bad += ["not-in-the-enum", prop["enum"][0].upper()]
        for value in bad:
            body = {**VALID[(method, path)](world), name: value}
            _field_error(_send(world, method, path, json.dumps(body)), name,
                         (method, path, name, value))
    assert _row_counts() == before


@pytest.mark.parametrize(("method", "path"), BODY_OPERATIONS)
def test_unknown_fields(world: World, method: str, path: str) -> None:
    before = _row_counts()
    for extra in ("unexpected", "id", "role_id", "is_admin"):
        body = {**VALID[(method, path)](world), extra: 1}
        if extra in VALID[(method, path)](world):
            continue
        messages = _field_error(_send(world, method, path, json.dumps(body)), extra,
                                (method, path, extra))
        assert messages == ["Unknown field."]
    assert _row_counts() == before


@pytest.mark.parametrize(("method", "path"), BODY_OPERATIONS)
def test_text_the_database_cannot_store(openapi: dict[str, Any], world: World, method: str,
                                        path: str) -> None:
    """NUL characters (PostgreSQL refuses them) and lone surrogates (not UTF-8)."""
    before = _row_counts()
    for name, prop in _properties(openapi, body_schema(openapi, method, path, world)).items():
        if prop.get("type") != "string":
            continue
        valid = VALID[(method, path)](world)
        for bad in ("\x00", "\ud800"):
            value = valid[name][:1] + bad + valid[name][1:]
            body = {**valid, name: value}
            if name == "password" and "confirm_password" in body:
                body["confirm_password"] = value
            data = json.dumps(body, ensure_ascii=True)  # "\\ud800" reaches the server as is
            _field_error(_send(world, method, path, data), name, (method, path, name, bad))
    assert _row_counts() == before


@pytest.mark.parametrize(("method", "path"), BODY_OPERATIONS)
def test_deeply_nested_json(world: World, method: str, path: str) -> None:
    before = _row_counts()
    for depth in (500, 100_000):
        data = "[" * depth + "]" * depth
        _expect(_send(world, method, path, data), 422, (method, path, depth))
        data = '{"a":' * depth + "1" + "}" * depth
        _expect(_send(world, method, path, data), 422, (method, path, depth))
    assert _row_counts() == before


@pytest.mark.parametrize(("method", "path"), BODY_OPERATIONS)
def test_bodies_over_one_megabyte_are_413(world: World, method: str, path: str) -> None:
    before = _row_counts()
    valid = VALID[(method, path)](world)
    # an oversized string field, or (bodies without one) an extra key: the size is refused
    # before anything reads the fields
    name = next((key for key, value in valid.items() if isinstance(value, str)), "padding")
    limit = LARGE_BODIES.get((method, path), ONE_MB)
    data = json.dumps({**valid, name: "x" * (limit + 10)})
    body = _expect(_send(world, method, path, data), 413, (method, path))
    assert body["code"] == "PAYLOAD_TOO_LARGE"
    assert _row_counts() == before


# --- query strings ----------------------------------------------------------------------------


def _query_operations(doc: dict[str, Any]) -> list[tuple[str, str, list[dict[str, Any]]]]:
    found = []
    for method, path, operation in _operations(doc):
        params = [p for p in operation.get("parameters", []) if p["in"] == "query"]
        if params:
            found.append((method, path, params))
    return found


def _bad_query_values(schema: dict[str, Any]) -> list[str]:
    kind = schema.get("type")
    bad: list[str] = []
    if kind == "integer":
        bad += ["abc", "1.5", "", "1e3", str(10**30)]
        if "minimum" in schema:
            bad.append(str(schema["minimum"] - 1))
        if "maximum" in schema:
            bad.append(str(schema["maximum"] + 1))
    if kind == "string":
        if "maxLength" in schema:
            bad.append("q" * (schema["maxLength"] + 1))
        bad.append("a\x00b")
    if "enum" in schema:
        bad += ["not-in-the-enum"]
    return bad


def test_every_paginated_list_validates_page_and_page_size(openapi: dict[str, Any],
                                                           world: World) -> None:
    paginated = 0
    before = _row_counts()
    for method, path, operation in _operations(openapi):
        ok = operation["responses"].get("200", {}).get("content", {}).get("application/json")
        schema = _resolve(openapi, ok["schema"]) if ok else {}
        if not {"items", "total", "page", "page_size"} <= set(schema.get("properties", {})):
            continue
        paginated += 1
        names = {p["name"] for p in operation.get("parameters", []) if p["in"] == "query"}
        assert {"page", "page_size"} <= names, (method, path)
        for query, field in (({"page": 0}, "page"), ({"page_size": 1000}, "page_size"),
                             ({"page": "abc"}, "page"), ({"page_size": 0}, "page_size"),
                             ({"page": -1}, "page")):
            reply = world.browser.get(path.format(**world.args_for(path)), query_string=query)
            _field_error(reply, field, (path, query), location="query")
        reply = world.browser.get(path.format(**world.args_for(path)),
                                  query_string={"page": 1, "page_size": 100})
        # the world's run is an evaluation run: its judgments page is a clear 404
        expected = 404 if path.endswith("/runs/{run_id}/judgments") else 200
        assert reply.status_code == expected, (path, reply.json)
    assert paginated >= 7
    assert _row_counts() == before


def test_every_query_argument_is_validated(openapi: dict[str, Any], world: World) -> None:
    operations = _query_operations(openapi)
    assert operations
    before = _row_counts()
    for method, path, params in operations:
        for param in params:
            for value in _bad_query_values(_flat(_resolve(openapi, param["schema"]))):
                reply = world.browser.request(method, path.format(**world.args_for(path)),
                                              query_string={param["name"]: value})
                _field_error(reply, param["name"], (method, path, param["name"], value),
                             location="query")
    assert _row_counts() == before


# --- ids in paths -----------------------------------------------------------------------------


def test_ids_that_cannot_exist_are_404(openapi: dict[str, Any], world: World) -> None:
    """Zero, negative, beyond the 32-bit ids of the database, or not a number: 404, never 500."""
    checked = 0
    for method, path, operation in _operations(openapi):
        params = [p for p in operation.get("parameters", [])
                  + openapi["paths"][path].get("parameters", []) if p["in"] == "path"]
        for param in params:
            kind = _resolve(openapi, param["schema"]).get("type")
            assert kind in ("integer", "string"), (path, param)
            # string ids (EvalArena's challenge ids and tabs) are names that do not exist
            values = ("0", "-1", str(2**31), str(2**63), str(10**30), "1.0", "abc", "%00") \
                if kind == "integer" else ("nope", "x" * 300, "%00")
            for value in values:
                url = path.format(**{**world.args_for(path), param["name"]: value})
                before = _row_counts()
                reply = world.browser.request(method, url, json=VALID.get((method, path),
                                                                          lambda w: {})(world))
                _expect(reply, 404, (method, url))
                assert _row_counts() == before
                checked += 1
    assert checked > 0
