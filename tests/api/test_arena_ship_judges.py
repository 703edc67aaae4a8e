"""Hidden sets stay on the server (issue 31 item 7): Ship to Prod judges only with a judge
the operator approved (ASSAY_ARENA_SHIP_JUDGES); a learner's own model, on an endpoint
they control, judges dev traces only, and that endpoint never receives a hidden trace."""

from __future__ import annotations

import dataclasses
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from sqlalchemy import func, select

from assay.core.challenges.models import Attempt
from assay.core.challenges.ship_judges import SETTING, ShipJudge, parse
from assay.core.llm.models import Credential, ModelConfig
from assay.core.projects.models import Role
from assay.core.reports.models import SpendDay
from assay.extensions import db
from assay.providers.fake import FakeProviderThread
from assay.runtime import current
from assay.settings import Settings
from tests.api.arena_helpers import approve, attempt, fixture, script_judge, seed, spec
from tests.engine.test_providers_engine import fake  # noqa: F401
from tests.factories import Factory

CID = "escalation-policy"
VERDICT = {"pass": True, "severity": "low", "cluster": "ok", "reason": "Looks fine.",
           "evidence": []}


class Recorder(BaseHTTPRequestHandler):
    """An OpenAI-compatible endpoint the learner controls: keeps every request body."""

    bodies: list[str]

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self.bodies.append(self.rfile.read(length).decode("utf-8", "replace"))
        reply = json.dumps({"id": "x", "object": "chat.completion", "model": "mine",
                            "choices": [{"index": 0, "finish_reason": "stop", "message": {
                                "role": "assistant", "content": json.dumps(VERDICT)}}],
                            "usage": {"prompt_tokens": 10, "completion_tokens": 5}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def recorder() -> Iterator[tuple[str, list[str]]]:
    bodies: list[str] = []
    handler = type("Handler", (Recorder,), {"bodies": bodies})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", bodies
    server.shutdown()
    server.server_close()


def _own_judge(project_id: int, kind: str, url: str) -> str:
    """The learner's judge: a model config on their credential pointed at `url`."""
    with db.factory() as session:
        credential = Credential(project_id=project_id, kind=kind, label=f"Mine {kind}",
                                base_url=url, config={})
        session.add(credential)
        session.flush()
        session.add(ModelConfig(project_id=project_id, credential_id=credential.id,
                                name=f"My {kind} judge", model="mine", params={}))
        session.commit()
    return f"My {kind} judge"


def _hidden_texts() -> list[str]:
    """Messages of the hidden traces that no dev trace has (tool results repeat)."""
    def texts(split: str) -> set[str]:
        return {str(m.get("content") or "") for t in spec(CID).traces if t.split == split
                for m in t.messages}
    dev = "\n".join(texts("dev"))
    return [t for t in texts("test") if len(t) > 20 and t not in dev]


def _attempts() -> int:
    with db.factory() as session:
        return int(session.scalar(select(func.count()).select_from(Attempt)) or 0)


@pytest.mark.parametrize("kind", ["openai_compatible", "fake"])  # fake: on the user's URL too
def test_a_learners_own_endpoint_never_receives_a_hidden_trace(
        factory: Factory, fake: FakeProviderThread,  # noqa: F811
        recorder: tuple[str, list[str]], monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    seed()
    url, bodies = recorder
    owner = factory.user()
    project = factory.project(owner, "Pays")
    mine = _own_judge(project.id, kind, url)
    browser = factory.login(factory.member(project, Role.editor))
    body = {"tab": "judge", "text": fixture(CID, "reference.judge.txt"),
            "project_id": project.id, "judge": mine}
    refused = attempt(browser, CID, set="test", **body)
    assert refused.status_code == 422 and refused.json["code"] == "JUDGE_NOT_APPROVED"
    assert SETTING in refused.json["message"] and refused.json["errors"]["allowed"] == []
    approved = approve(monkeypatch, fake.url, f"arena-judge-{CID}")
    refused = attempt(browser, CID, set="test", **body)
    assert refused.status_code == 422 and refused.json["code"] == "JUDGE_NOT_APPROVED"
    assert refused.json["errors"]["allowed"] == [approved]
    assert approved in refused.json["message"] and "judge" in refused.json["errors"]["json"]
    assert bodies == [] and _attempts() == 0
    # the same judge on the dev set is the learner's own business
    dev = attempt(browser, CID, set="dev", **body)
    assert dev.status_code == 201, dev.json
    assert bodies, "the dev run called the learner's judge"
    hidden = _hidden_texts()
    assert hidden and not [h for h in hidden for b in bodies if h in b or
                           json.dumps(h)[1:-1] in b]
    assert browser.get(f"/api/arena/challenges/{CID}").json["ship_judges"] == [
        {"id": approved, "kind": "fake", "model": f"arena-judge-{CID}"}]


def test_an_approved_judge_ships_and_the_project_pays_for_it(
        factory: Factory, fake: FakeProviderThread,  # noqa: F811
        monkeypatch: pytest.MonkeyPatch) -> None:
    seed()
    owner = factory.user()
    project = factory.project(owner, "Pays")
    script_judge(fake.url, project.id, CID)
    approved = approve(monkeypatch, fake.url, f"arena-judge-{CID}", 1_000_000)
    browser = factory.login(factory.member(project, Role.editor))
    for split in ("dev", "test"):  # calibrate on the judge you ship with, then ship
        reply = attempt(browser, CID, tab="judge", text=fixture(CID, "reference.judge.txt"),
                        set=split, project_id=project.id, judge=approved)
        assert reply.status_code == 201, reply.json
        assert reply.json["judge"] == approved and reply.json["cost_micros"] > 0
    with db.factory() as session:
        rows = session.execute(select(SpendDay.kind, SpendDay.model_key,
                                      SpendDay.spent_micros).where(
            SpendDay.project_id == project.id)).all()
    assert rows and {(k, m) for k, m, _ in rows} == {("arena_judge", 0)}
    assert sum(s for _, _, s in rows) > 0


def test_an_approved_judge_without_its_operator_key_is_refused_before_any_call(
        factory: Factory, monkeypatch: pytest.MonkeyPatch) -> None:
    seed()
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    rt = current()
    monkeypatch.setattr(rt, "settings", dataclasses.replace(
        rt.settings, arena_ship_judges=(ShipJudge("openai", "gpt-4o-mini", 1, 1),)))
    owner = factory.user()
    project = factory.project(owner, "Pays")
    reply = attempt(factory.login(owner), CID, tab="judge", set="test",
                    text=fixture(CID, "reference.judge.txt"), project_id=project.id,
                    judge="openai:gpt-4o-mini")
    assert reply.status_code == 422, reply.json
    assert "OPENAI_API_KEY" in reply.json["errors"]["json"]["judge"][0]
    assert _attempts() == 0


def test_the_setting_is_read_and_a_malformed_one_stops_the_start(tmp_path: Any) -> None:
    assert parse(" fake:fake-judge=500000/1500000 , anthropic:claude-3-5-haiku ") == (
        ShipJudge("fake", "fake-judge", 500_000, 1_500_000),
        ShipJudge("anthropic", "claude-3-5-haiku"))
    env = {"ASSAY_INSTANCE_PATH": str(tmp_path), SETTING: "openrouter:x/y"}
    assert Settings.from_env(env).arena_ship_judges == (ShipJudge("openrouter", "x/y"),)
    for bad in ("openai_compatible:mine", "azure_openai:gpt", "fake", "fake:", "mine",
                "fake:a=1", "fake:a=x/2", "fake:a=-1/2", "fake:a,fake:a"):
        with pytest.raises(ValueError, match=SETTING):
            Settings.from_env({**env, SETTING: bad})
