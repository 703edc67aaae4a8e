"""Bad input to EvalArena's endpoints beyond what the OpenAPI-driven walk of
test_bad_input.py sends (it covers types, sizes, NUL bytes and unknown ids of every body,
query and path): rules text that YAML itself chokes on - nesting deeper than the parser's
recursion, alias bombs - judge runs naming what does not exist, and attempts addressed
through another challenge. Each is a clear 4xx in the one error shape, never a 500, and
writes nothing."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import func, select

from assay.core.challenges.models import Attempt, Draft
from assay.core.projects.models import Role
from assay.extensions import db
from tests.api.arena_helpers import BASE, IDS, attempt, fixture, seed
from tests.factories import Factory, Session

CID = "refund-verification"
BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n"
    for i in range(8)) + "rules: [*i]\n"
YAML_THAT_BREAKS = {
    "flow nesting": "rules: " + "[" * 20_000,
    "mapping nesting": "rules:\n  - id: deep\n    when: " + "{a: " * 5_000,
    "block nesting": "rules:\n" + "  - " * 3_000 + "x",
    "alias bomb": BOMB,
    "undefined alias": "rules: [*nowhere]",
    "python tag": "rules: !!python/object/apply:os.system ['true']",
    "byte order mark": "\ufeffrules:\n  - id: x\n",
    "tabs": "rules:\n\t- id: x\n",
    "a scalar": "42",
    "a list": "- id: x",
}


def _counts() -> tuple[int, int]:
    with db.factory() as session:
        return (session.scalar(select(func.count()).select_from(Attempt)) or 0,
                session.scalar(select(func.count()).select_from(Draft)) or 0)


def _error(reply: Any, status: int, code: str | None = None) -> dict[str, Any]:
    assert reply.status_code == status, (reply.status_code, reply.get_data(as_text=True)[:300])
    body = reply.json
    assert set(body) == {"code", "status", "message", "errors"} and body["message"], body
    if code:
        assert body["code"].endswith(code), body  # NOT_FOUND, CHALLENGE_NOT_FOUND
    return dict(body)


@pytest.fixture
def browser(factory: Factory) -> Session:
    seed()
    return factory.signed_in()


@pytest.mark.parametrize("name", sorted(YAML_THAT_BREAKS))
def test_rules_yaml_that_breaks_the_parser_is_a_clear_error(browser: Session,
                                                             name: str) -> None:
    text = YAML_THAT_BREAKS[name]
    before = _counts()
    checked = browser.post(f"{BASE}/{CID}/validate", json={"tab": "rules", "text": text})
    assert checked.status_code == 200, checked.get_data(as_text=True)[:300]
    assert not checked.json["ok"] and checked.json["problems"][0]["message"]
    for split in ("dev", "test"):
        body = _error(attempt(browser, CID, tab="rules", text=text, set=split), 422,
                      "RULES_INVALID")
        problem = body["errors"]["problems"][0]
        assert problem["line"] >= 1 and problem["column"] >= 1 and problem["message"]
    assert _counts() == before


def test_judge_runs_naming_what_does_not_exist(factory: Factory) -> None:
    seed()
    owner = factory.user()
    project = factory.project(owner, "Pays")
    other = factory.project(factory.user(), "Elsewhere")
    browser = factory.login(owner)
    rubric = fixture(CID, "reference.judge.txt")
    before = _counts()
    for project_id in (other.id, other.id + 1000):  # not a member; no such project
        _error(attempt(browser, CID, tab="judge", text=rubric, set="dev",
                       project_id=project_id, judge="Judge"), 404, "NOT_FOUND")
    for judge in ("Nobody", "0", str(2**31), str(2**40), "x" * 200, "\u202e", "²", "٣"):
        body = _error(attempt(browser, CID, tab="judge", text=rubric, set="test",
                              project_id=project.id, judge=judge), 422)
        assert "judge" in body["errors"]["json"], body
    _error(attempt(browser, CID, tab="judge", text="short", set="dev", project_id=project.id,
                   judge="Nobody"), 422)
    assert _counts() == before


def test_attempts_and_tabs_addressed_wrongly_are_not_found(browser: Session) -> None:
    made = attempt(browser, CID, tab="rules", text=fixture(CID, "reference.rules.yaml"),
                   set="dev")
    assert made.status_code == 201
    other = next(i for i in IDS if i != CID)
    before = _counts()
    for url in (f"{BASE}/{other}/attempts/{made.json['id']}",  # through another challenge
                f"{BASE}/{CID}/attempts/{made.json['id'] + 1}",
                f"{BASE}/{CID}/attempts/0", f"{BASE}/{CID}/attempts/-1",
                f"{BASE}/{CID}/attempts/{2**63}", f"{BASE}/{CID}/attempts/1e3",
                f"{BASE}/{CID.upper()}", f"{BASE}/{CID}%00", f"{BASE}/..%2F{CID}",
                f"{BASE}/{CID}%20", f"{BASE}/{'é' * 40}"):
        _error(browser.get(url), 404, "NOT_FOUND")
    for tab in ("Rules", "rules ", "yaml", "judge%00", "%E2%80%AE", "r" * 300):
        _error(browser.request("PUT", f"{BASE}/{CID}/drafts/{tab}", json={"text": "x"}), 404,
               "NOT_FOUND")
        _error(browser.post(f"{BASE}/{CID}/hints/{tab}"), 404, "NOT_FOUND")
    for query in ({"tab": "yaml"}, {"set": "hidden"}, {"tab": "rules\x00"}):
        _error(browser.get(f"{BASE}/{CID}/attempts", query_string=query), 422)
    assert _counts() == before


def test_a_member_of_the_paying_project_reads_only_their_own_attempts(
        factory: Factory) -> None:
    seed()
    owner = factory.user()
    project = factory.project(owner, "Pays")
    mine = factory.login(factory.member(project, Role.viewer))
    made = attempt(mine, CID, tab="rules", text=fixture(CID, "reference.rules.yaml"),
                   set="test")
    assert made.status_code == 201
    for reader in (factory.login(owner), factory.signed_in()):
        _error(reader.get(f"{BASE}/{CID}/attempts/{made.json['id']}"), 404, "NOT_FOUND")
        assert reader.get(f"{BASE}/{CID}/attempts").json["total"] == 0
        assert reader.get(BASE).json["items"][0]["progress"]["completed"] is False
