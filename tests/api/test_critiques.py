"""The meta-judge over HTTP: an editor gets a model's critique of a rubric against a
contract (the fake provider scripted as the critic); a rubric or judge the user can fix is a
422 naming the field; a judge that fails, answers with something else or is too slow is a
502 in the one error shape, never a 500."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from assay.core.llm.models import Credential, ModelConfig
from assay.core.projects.models import Role
from assay.core.scoring import critiques
from assay.extensions import db
from assay.providers.fake import FakeProviderThread
from tests.engine.test_providers_engine import configure, fake  # noqa: F401
from tests.factories import Factory

CRITIC_MODEL = "fake-critic"  # the fake provider answers this model with CRITIQUE
CRITIQUE = {"references_contract": False, "missing_clauses": ["Never promise a refund date"],
            "defines_evidence": False, "vague_phrases": ["helpful"], "high_variance": True,
            "critique": "This rubric does not define what counts as evidence for refund "
                        "status. Expect inconsistent scoring."}
RUBRIC = "Pass when the agent is helpful about refunds."
CONTRACT = ["Look up the order before answering", "Never promise a refund date"]


def _model(project_id: int, name: str, model: str, base_url: str,
           secret_env: str | None = None) -> int:
    """A model config of the project on a fake-provider credential at `base_url`."""
    with db.factory() as session:
        found = session.scalar(select(ModelConfig.id).where(
            ModelConfig.project_id == project_id, ModelConfig.name == name))
        if found is not None:
            return int(found)
        credential = Credential(project_id=project_id, kind="fake", label=f"{name} account",
                                base_url=base_url, secret_env=secret_env, config={})
        session.add(credential)
        session.flush()
        row = ModelConfig(project_id=project_id, credential_id=credential.id, name=name,
                          model=model, params={"max_tokens": 500})
        session.add(row)
        session.commit()
        return row.id


def critic(project_id: int, fake_url: str) -> str:
    """A judge model "Critic" in the project whose replies (scripted on the shared fake
    provider, for its model id only) are a valid critique; returns its name."""
    _model(project_id, "Critic", CRITIC_MODEL, fake_url)
    config = httpx.get(f"{fake_url}/_fake/config").json()
    if not any(s.get("model") == CRITIC_MODEL for s in config["scripts"]):
        scripts = [*config["scripts"], {"model": CRITIC_MODEL, "pattern": "",
                                        "reply": json.dumps(CRITIQUE)}]
        httpx.post(f"{fake_url}/_fake/config", json={"scripts": scripts}).raise_for_status()
    return "Critic"


def critique_body(project_id: int, fake_url: str) -> dict[str, Any]:
    return {"rubric_text": RUBRIC, "contract": CONTRACT, "judge": critic(project_id, fake_url)}


class World:
    def __init__(self, factory: Factory, fake: FakeProviderThread) -> None:  # noqa: F811
        self.owner = factory.user()
        self.project = factory.project(self.owner, "Critiques")
        self.fake = fake
        self.url = f"/api/projects/{self.project.id}/critiques"
        self.browser = factory.login(factory.member(self.project, Role.editor))

    def body(self, **changes: Any) -> dict[str, Any]:
        return {**critique_body(self.project.id, self.fake.url), **changes}


@pytest.fixture
def world(factory: Factory, fake: FakeProviderThread) -> World:  # noqa: F811
    return World(factory, fake)


def _requests(fake: FakeProviderThread, model: str) -> int:  # noqa: F811
    return int(httpx.get(f"{fake.url}/_fake/stats").json()["requests"].get(model, 0))


def test_an_editor_gets_the_critique(world: World, factory: Factory) -> None:
    body = world.body()
    reply = world.browser.post(world.url, json=body)
    assert reply.status_code == 200, reply.json
    assert reply.json == {**CRITIQUE, "judge": "Critic"}
    assert _requests(world.fake, CRITIC_MODEL) == 1
    critic_id = str(_model(world.project.id, "Critic", CRITIC_MODEL, world.fake.url))
    by_id = world.browser.post(world.url, json={**body, "contract": [], "judge": critic_id})
    assert by_id.status_code == 200 and by_id.json["judge"] == critic_id
    viewer = factory.login(factory.member(world.project, Role.viewer))
    refused = viewer.post(world.url, json=body)
    assert refused.status_code == 403 and refused.json["code"] == "FORBIDDEN"
    assert _requests(world.fake, CRITIC_MODEL) == 2


def _error(reply: Any, status: int, code: str) -> dict[str, Any]:
    assert reply.status_code == status, reply.get_data(as_text=True)
    body = dict(reply.json)
    assert set(body) == {"code", "status", "message", "errors"}
    assert (body["code"], body["status"]) == (code, status) and body["message"]
    return body


def test_what_the_user_can_fix_is_a_422_naming_the_field(world: World) -> None:
    post = world.browser.post
    empty = _error(post(world.url, json=world.body(rubric_text=" \n ")), 422,
                   "VALIDATION_ERROR")
    assert "rubric_text" in empty["errors"]["json"]
    unknown = _error(post(world.url, json=world.body(judge="Nobody")), 422,
                     "VALIDATION_ERROR")
    assert "No model 'Nobody'" in unknown["errors"]["json"]["judge"][0]
    _model(world.project.id, "Keyless", CRITIC_MODEL, world.fake.url,
           secret_env="ASSAY_TEST_KEY_NOBODY_SET")
    keyless = _error(post(world.url, json=world.body(judge="Keyless")), 422,
                     "VALIDATION_ERROR")
    assert "ASSAY_TEST_KEY_NOBODY_SET" in keyless["errors"]["json"]["judge"][0]
    assert _requests(world.fake, CRITIC_MODEL) == 0


def test_a_judge_that_fails_is_a_502(world: World) -> None:
    post = world.browser.post
    _model(world.project.id, "Chatty", "fake-chatty", world.fake.url)  # answers in prose
    rejected = _error(post(world.url, json=world.body(judge="Chatty")), 502, "JUDGE_FAILED")
    assert "reply rejected" in rejected["message"]
    _model(world.project.id, "Gone", "fake-gone", "http://127.0.0.1:9")  # nothing listens
    failed = _error(post(world.url, json=world.body(judge="Gone")), 502, "JUDGE_FAILED")
    assert "call failed" in failed["message"]


def test_a_judge_that_takes_too_long_is_a_502(world: World,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    body = world.body()
    configure(world.fake, latency_ms=2000)
    monkeypatch.setattr(critiques, "DEADLINE_S", 0.2)
    slow = _error(world.browser.post(world.url, json=body), 502, "JUDGE_TIMEOUT")
    assert "did not answer within 0.2 s" in slow["message"]
