"""The hidden test traces never reach a client. A canary string is planted in every hidden
trace (each message, each tool call's arguments, the authoring note); then the whole API
is walked as every role - every route of the tenancy matrix, every other GET route, and
every EvalArena route including rules and judge runs on both sets, failures and refusals
- and every response body and header, every SSE event and export, every error message,
every log line and the OpenAPI document are searched for the canaries and for the hidden
replies' own words."""

from __future__ import annotations

import logging
import re
import uuid
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import select

from assay.core.challenges.models import ChallengeTrace
from assay.core.projects.models import Role
from assay.extensions import db
from assay.providers.fake import FakeProviderThread
from tests.api.arena_helpers import BASE, IDS, approve, fixture, seed
from tests.api.test_tenancy import ACTORS, FOREIGN, ROUTES, World, _call, build_world
from tests.engine.test_providers_engine import fake  # noqa: F401
from tests.factories import Factory, Session

CANARY = "zqhidden"
JUDGE_RUNNERS = (Role.editor.value, Role.owner.value)


def plant() -> list[str]:
    """A canary per hidden trace, in every place it has text; returns what to search for:
    the canaries and each hidden final reply as written."""
    needles = []
    with db.factory() as session:
        for trace in session.scalars(select(ChallengeTrace).where(
                ChallengeTrace.split == "test")):
            canary = f"{CANARY}{uuid.uuid4().hex[:12]}"
            needles.append(canary)
            final = str(trace.messages[-1].get("content") or "")
            if len(final) > 40:
                needles.append(final)
            messages = []
            for message in trace.messages:
                planted = {**message, "content": f"{message.get('content') or ''} {canary}"}
                if message.get("tool_calls"):
                    planted["tool_calls"] = [{**c, "arguments": {**c["arguments"],
                                                                 "note": canary}}
                                             for c in message["tool_calls"]]
                messages.append(planted)
            trace.messages = messages
            trace.hidden_fail_reason = f"{trace.hidden_fail_reason or ''} {canary}"
        session.commit()
    return needles


class Walk:
    def __init__(self, needles: list[str]) -> None:
        self.needles, self.seen, self.leaks = needles, 0, []  # type: ignore[var-annotated]

    def check(self, where: str, reply: Any) -> Any:
        self.seen += 1
        text = reply.get_data(as_text=True) + "\n" + str(dict(reply.headers))
        for needle in self.needles:
            if needle in text:
                self.leaks.append(f"{where}: {needle[:60]}")
        return reply


def _arena_walk(walk: Walk, browser: Session, actor: str, project_id: int,
                judge: str) -> None:
    for cid in IDS:
        url = f"{BASE}/{cid}"
        for text in (fixture(cid, "reference.rules.yaml"), fixture(cid, "overfit.rules.yaml"),
                     "rules:\n  - id: all\n    when: agent_says(\"re:.\")\n"
                     "    action: fail\n    severity: low\n"):
            for split in ("dev", "test"):
                walk.check(f"rules {split} {cid} {actor}", browser.post(
                    f"{url}/attempts", json={"tab": "rules", "text": text, "set": split}))
        walk.check("broken rules on test", browser.post(f"{url}/attempts", json={
            "tab": "rules", "text": "rules: [", "set": "test"}))
        for split in ("dev", "test"):  # a judge run costs: the others are refused or cheap
            walk.check(f"judge {split} {cid} {actor}", browser.post(f"{url}/attempts", json={
                "tab": "judge", "text": fixture(cid, "reference.judge.txt"), "set": split,
                "project_id": project_id,
                "judge": judge if actor in JUDGE_RUNNERS else "Nobody"}))
        walk.check("judge unknown", browser.post(f"{url}/attempts", json={
            "tab": "judge", "text": "Fail when the contract is broken.", "set": "test",
            "project_id": project_id, "judge": "Nobody"}))
        for tab in ("rules", "judge"):
            walk.check("draft", browser.request("PUT", f"{url}/drafts/{tab}",
                                                json={"text": "x"}))
            walk.check("hint", browser.post(f"{url}/hints/{tab}"))
            walk.check("validate", browser.post(f"{url}/validate",
                                                json={"tab": tab, "text": "rules:"}))
        walk.check("workspace", browser.get(url))
        history = walk.check("history", browser.get(f"{url}/attempts",
                                                    query_string={"page_size": 100}))
        for item in history.json["items"]:
            walk.check("attempt", browser.get(f"{url}/attempts/{item['id']}"))
    walk.check("library", browser.get(BASE))


def _other_gets(app: Flask, world: World) -> list[str]:
    """GET routes outside the tenancy matrix whose path arguments we can fill."""
    args = {**world.path_args(), "challenge_id": IDS[0]}
    urls = []
    for rule in app.url_map.iter_rules():
        if "GET" not in (rule.methods or ()) or rule.rule.startswith("/api/arena") \
                or "project_id" in rule.arguments or not rule.rule.startswith("/api"):
            continue
        if rule.arguments <= set(args):
            urls.append(re.sub(r"<(?:[^<>:]+:)?([^<>:]+)>", lambda m: str(args[m.group(1)]),
                               rule.rule))
    return urls


@pytest.mark.timeout(600)
def test_no_hidden_trace_reaches_any_client(app: Flask, factory: Factory,
                                            fake: FakeProviderThread,  # noqa: F811
                                            caplog: pytest.LogCaptureFixture,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    caplog.set_level(logging.DEBUG)
    seed()
    needles = plant()
    assert len([n for n in needles if n.startswith(CANARY)]) >= 20 * len(IDS)
    world = build_world(factory)
    walk = Walk(needles)
    # the fake's own verdicts, which quote the trace: approved, so shipping runs it
    judge = approve(monkeypatch, fake.url, "fake-arena-canary")
    browsers = {actor: factory.login(world.users[actor]) for actor in ACTORS}
    for actor, browser in browsers.items():
        _arena_walk(walk, browser, actor, world.project.id, judge)
    anonymous = app.test_client()
    walk.check("anonymous", anonymous.get(BASE))
    walk.check("anonymous run", anonymous.post(f"{BASE}/{IDS[0]}/attempts", json={}))
    routes = sorted(ROUTES, key=lambda key: (key[0] == "DELETE", key[1].count("/") == 3))
    for actor in [FOREIGN, *(r.value for r in Role)]:
        for method, route in routes:
            if method == "DELETE" and actor != Role.owner.value:
                continue
            rule = ROUTES[(method, route)]
            url = route.format(**{**world.path_args(),
                                  **(rule.path(world) if rule.path else {})})
            try:
                body = rule.body(world) if rule.body else None
            except Exception:  # a body needing a state this walk does not keep
                body = None
            walk.check(f"{method} {route} as {actor}", _call(browsers[actor], method, url,
                                                              body))
    for url in _other_gets(app, world):
        walk.check(f"GET {url}", browsers[Role.owner.value].get(url))
    walk.check("openapi", anonymous.get("/api/openapi.json"))
    assert walk.seen > 300
    logged = caplog.text + "\n".join(str(r.args) for r in caplog.records)
    walk.leaks += [f"log: {n[:60]}" for n in needles if n in logged]
    assert not walk.leaks, "\n".join(walk.leaks[:20])
