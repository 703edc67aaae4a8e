"""No lost writes (issue 31 item 5): every write of an editable resource can name the version
it was based on (If-Match: its ETag) and one based on an older version is refused with 412
STALE_WRITE, the current state in the body, and nothing written. Two clients read the same
version, the first writes, the second's write is refused; with the ETag of the refusal it
goes through."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import func, select

from assay.core.projects.models import Project, Role
from assay.core.runs.models import Output
from assay.core.scoring.models import Score
from assay.extensions import db
from tests.api.arena_helpers import BASE, seed
from tests.factories import Factory, Session, race, succeed


@dataclass
class World:
    a: Session  # two browsers of people editing the same things
    b: Session
    urls: dict[str, str]
    ids: dict[str, int]
    project: Project


def _created(reply: Any) -> dict[str, Any]:
    assert reply.status_code == 201, reply.get_data(as_text=True)
    return dict(reply.json)


def _row_counts() -> dict[str, int]:
    with db.factory() as session:
        return {table.name: session.scalar(select(func.count()).select_from(table)) or 0
                for table in db.metadata.sorted_tables}


@pytest.fixture
def world(factory: Factory) -> World:
    owner = factory.user()
    project = factory.project(owner, "Shared")
    a, b = factory.login(owner), factory.login(owner)  # two tabs; other users: test below
    base = f"/api/projects/{project.id}"
    credential = _created(a.post(base + "/credentials", json={
        "kind": "fake", "label": "Fake", "base_url": factory.settings.fake_provider_url}))
    model = _created(a.post(base + "/models", json={
        "name": "Fast", "credential_id": credential["id"], "model": "fake-fast"}))
    dataset = _created(a.post(base + "/datasets", json={
        "name": "Capitals", "kind": "questions",
        "cases": [{"input": {"question": "Capital of France?"}}]}))
    case = a.get(f"{base}/datasets/{dataset['id']}/cases").json["items"][0]
    scorer = _created(a.post(base + "/scorers", json={
        "name": "Review", "kind": "manual", "params": {"scale": "1-5"}}))
    prompt = _created(a.post(base + "/prompts", json={"name": "Support", "template": "v1"}))
    experiment = _created(a.post(base + "/experiments", json={"name": "Draft"}))
    member = factory.member(project, Role.viewer)
    run_id = factory.finished_run(owner, project)
    with db.factory() as session:
        output = session.scalars(select(Output.id).where(Output.run_id == run_id)
                                 .order_by(Output.id)).first()
    assert output is not None
    succeed(output, "Paris")
    run = f"{base}/runs/{run_id}"
    review = a.get(f"{base}/scorers/{scorer['id']}").json["latest"]["id"]
    seed()
    return World(a, b, {
        "project": base, "settings": base + "/settings",
        "credential": f"{base}/credentials/{credential['id']}",
        "model": f"{base}/models/{model['id']}",
        "dataset": f"{base}/datasets/{dataset['id']}",
        "cases": f"{base}/datasets/{dataset['id']}/cases",
        "scorer": f"{base}/scorers/{scorer['id']}",
        "prompt": f"{base}/prompts/{prompt['id']}",
        "experiment": f"{base}/experiments/{experiment['id']}",
        "members": base + "/members", "member": f"{base}/members/{member.id}",
        "run": run, "output": f"{run}/outputs/{output}",
        "score": f"{run}/outputs/{output}/scores/{review}", "scores": f"{run}/scores/{review}",
        "arena": f"{BASE}/refund-verification",
    }, {"case": case["id"], "member": member.id, "prompt_v1": prompt["latest"]["id"],
        "owner": owner.id, "output": output}, project)


@dataclass
class Resource:
    """How to read a resource's ETag and state, write it (value 0 or 1) and see a value."""

    tag: Callable[[World, Session], str]
    state: Callable[[World, Session], Any]
    write: Callable[[World, Session, int, str], Any]
    shows: Callable[[Any, int], bool]


def _etag(route: str) -> Callable[[World, Session], str]:
    def read(world: World, browser: Session) -> str:
        reply = browser.get(world.urls[route])
        assert reply.status_code == 200, reply.json
        assert reply.headers["ETag"] == f'"{reply.json["row_version"]}"'
        return str(reply.headers["ETag"])
    return read


def _get(route: str) -> Callable[[World, Session], Any]:
    return lambda world, browser: browser.get(world.urls[route]).json


def _patch(route: str, body: Callable[[int], dict[str, Any]]
           ) -> Callable[[World, Session, int, str], Any]:
    return lambda world, browser, value, tag: browser.patch(
        world.urls[route], json=body(value), headers={"If-Match": tag})


NAMES = ("Name from A", "Name from B")
THRESHOLDS = (0.5, 0.6)


def _case_tag(world: World, browser: Session) -> str:
    return f'"{browser.get(world.urls["cases"]).json["items"][0]["id"]}"'


def _member(world: World, browser: Session) -> dict[str, Any]:
    items = browser.get(world.urls["members"]).json["items"]
    return next(m for m in items if m["user_id"] == world.ids["member"])


def _draft(world: World, browser: Session) -> dict[str, Any]:
    return dict(browser.get(world.urls["arena"]).json["tabs"]["rules"])


RATINGS = (2, 4)


def _own_score(world: World, browser: Session) -> dict[str, Any] | None:
    """The owner's manual score of the output, as the output's page shows it."""
    scores = browser.get(world.urls["output"]).json["scores"]
    return next((s for s in scores if s["source"] == f"user:{world.ids['owner']}"), None)


def _score_tag(world: World, browser: Session) -> str:
    own = _own_score(world, browser)
    return f'"{own["row_version"] if own else 0}"'  # "0": none yet


def _production(world: World, browser: Session, value: int, tag: str) -> Any:
    """A moves production to a new version; B, from the old page, to the first one."""
    target = world.ids["prompt_v1"]
    if value == 0:
        target = _created(world.a.post(world.urls["prompt"] + "/versions", json={
            "template": "v2", "note": "A second wording"}))["id"]
        tag = world.a.get(world.urls["prompt"]).headers["ETag"]
    return browser.request("PUT", world.urls["prompt"] + "/production",
                           json={"version_id": target}, headers={"If-Match": tag})


RESOURCES: dict[str, Resource] = {
    "experiment": Resource(_etag("experiment"), _get("experiment"),
                           _patch("experiment", lambda v: {"name": NAMES[v]}),
                           lambda now, v: now["name"] == NAMES[v]),
    "dataset": Resource(_etag("dataset"), _get("dataset"),
                        _patch("dataset", lambda v: {"name": NAMES[v]}),
                        lambda now, v: now["name"] == NAMES[v]),
    "case": Resource(
        _case_tag, _get("cases"),
        lambda world, browser, v, tag: browser.patch(
            f"{world.urls['cases']}/{tag.strip(chr(34))}",
            json={"input": {"question": NAMES[v]}}, headers={"If-Match": tag}),
        lambda now, v: now["input"] == {"question": NAMES[v]}),
    "scorer": Resource(
        _etag("scorer"), _get("scorer"),
        lambda world, browser, v, tag: browser.post(
            world.urls["scorer"] + "/versions", headers={"If-Match": tag},
            json={"params": {"scale": ("1-5", "pass_fail")[v]}, "note": NAMES[v]}),
        lambda now, v: now["latest"]["note"] == NAMES[v]),
    "prompt": Resource(
        _etag("prompt"), _get("prompt"),
        lambda world, browser, v, tag: browser.post(
            world.urls["prompt"] + "/versions", headers={"If-Match": tag},
            json={"template": NAMES[v], "note": "Reworded the prompt"}),
        lambda now, v: now["latest"]["template"] == NAMES[v]),
    "production": Resource(_etag("prompt"), _get("prompt"), _production,
                           lambda now, v: now["production_number"] == 2),
    "settings": Resource(_etag("settings"), _get("settings"),
                         _patch("settings", lambda v: {"alert_threshold": THRESHOLDS[v]}),
                         lambda now, v: now["alert_threshold"] == THRESHOLDS[v]),
    "project": Resource(_etag("project"), _get("project"),
                        _patch("project", lambda v: {"name": NAMES[v]}),
                        lambda now, v: now["name"] == NAMES[v]),
    "credential": Resource(_etag("credential"), _get("credential"),
                           _patch("credential", lambda v: {"label": NAMES[v]}),
                           lambda now, v: now["label"] == NAMES[v]),
    "model": Resource(_etag("model"), _get("model"),
                      _patch("model", lambda v: {"name": NAMES[v]}),
                      lambda now, v: now["name"] == NAMES[v]),
    "member": Resource(
        lambda world, browser: f'"{_member(world, browser)["row_version"]}"', _member,
        _patch("member", lambda v: {"role": ("reviewer", "editor")[v]}),
        lambda now, v: now["role"] == ("reviewer", "editor")[v]),
    "run": Resource(lambda world, browser: f'"{_get("run")(world, browser)["row_version"]}"',
                    _get("run"),
                    _patch("run", lambda v: {"budget_micros": (7_000_000, 9_000_000)[v]}),
                    lambda now, v: now["budget_micros"] == (7_000_000, 9_000_000)[v]),
    "arena draft": Resource(
        lambda world, browser: f'"{_draft(world, browser)["draft_row_version"]}"', _draft,
        lambda world, browser, v, tag: browser.request(
            "PUT", world.urls["arena"] + "/drafts/rules", json={"text": NAMES[v]},
            headers={"If-Match": tag}),
        lambda now, v: now["text"] == NAMES[v]),
    "manual score": Resource(
        _score_tag, _own_score,
        lambda world, browser, v, tag: browser.request(
            "PUT", world.urls["score"], json={"rating": RATINGS[v]}, headers={"If-Match": tag}),
        lambda now, v: now["details"]["entered"]["rating"] == RATINGS[v]),
}


def _ok(reply: Any) -> None:
    assert reply.status_code in (200, 201), reply.get_data(as_text=True)


@pytest.mark.parametrize("name", sorted(RESOURCES))
def test_a_write_based_on_an_older_version_is_refused_with_the_current_state(
        world: World, name: str) -> None:
    resource = RESOURCES[name]
    seen_a, seen_b = resource.tag(world, world.a), resource.tag(world, world.b)
    assert seen_a == seen_b
    first = resource.write(world, world.a, 0, seen_a)
    _ok(first)
    assert first.headers["ETag"] != seen_a
    state, counts = resource.state(world, world.a), _row_counts()

    stale = resource.write(world, world.b, 1, seen_b)
    assert stale.status_code == 412, stale.get_data(as_text=True)
    body = stale.json
    assert body["code"] == "STALE_WRITE" and "nothing was written" in body["message"]
    assert resource.shows(body["current"], 0), body["current"]  # the first write's value
    assert stale.headers["ETag"] == f'"{body["current_version"]}"'
    assert stale.headers["ETag"] == resource.tag(world, world.a)
    assert _row_counts() == counts, "a refused write wrote something"
    assert resource.state(world, world.a) == state

    again = resource.write(world, world.b, 1, stale.headers["ETag"])  # merged, sent anew
    _ok(again)


def test_two_users_conflict_like_two_tabs(factory: Factory, world: World) -> None:
    other = factory.login(factory.member(world.project, Role.editor))
    tag = world.a.get(world.urls["dataset"]).headers["ETag"]
    assert world.a.patch(world.urls["dataset"], json={"description": "mine"},
                         headers={"If-Match": tag}).status_code == 200
    reply = other.patch(world.urls["dataset"], json={"description": "theirs"},
                        headers={"If-Match": tag})
    assert reply.status_code == 412 and reply.json["current"]["description"] == "mine"


def test_a_write_without_if_match_applies_to_what_is_stored(world: World) -> None:
    """API and CLI clients that send no version keep working (the SPA always sends it)."""
    before = world.a.get(world.urls["experiment"]).headers["ETag"]
    assert world.a.patch(world.urls["experiment"], json={"name": "One"}).status_code == 200
    reply = world.b.patch(world.urls["experiment"], json={"name": "Two"})
    assert reply.status_code == 200 and reply.json["name"] == "Two"
    assert reply.headers["ETag"] == f'"{int(before.strip(chr(34))) + 2}"'
    star = world.a.patch(world.urls["experiment"], json={"name": "Three"},
                         headers={"If-Match": "*"})
    assert star.status_code == 200 and star.json["name"] == "Three"


def test_a_save_of_the_current_values_keeps_the_version(world: World) -> None:
    tag = world.a.get(world.urls["dataset"]).headers["ETag"]
    reply = world.a.patch(world.urls["dataset"], json={"name": "Capitals"},
                          headers={"If-Match": tag})
    assert reply.status_code == 200 and reply.headers["ETag"] == tag


BAD = {
    "1": "An ETag is in double quotes",
    'W/"1"': "A weak ETag cannot guard a write",
    '"1", "2"': "Send one ETag",
    '"abc"': "is not an ETag of this resource",
    '"' + "9" * 30 + '"': "is not an ETag of this resource",
    '"-1"': "is not an ETag of this resource",
    '"': "An ETag is in double quotes",
    '"' + "1" * 70 + '"': "At most 64 characters",
}


@pytest.mark.parametrize("route", ["experiment", "settings", "case"])
@pytest.mark.parametrize("value", sorted(BAD))
def test_a_malformed_if_match_is_a_422_that_writes_nothing(world: World, route: str,
                                                          value: str) -> None:
    url = f"{world.urls['cases']}/{world.ids['case']}" if route == "case" else world.urls[route]
    body = {"input": {"question": "x"}} if route == "case" else {"description": "changed"}
    state, counts = world.a.get(url.rsplit("/", 1)[0] if route == "case" else url).json, \
        _row_counts()
    reply = world.a.patch(url, json=body, headers={"If-Match": value})
    assert reply.status_code == 422, reply.get_data(as_text=True)
    assert reply.json["code"] == "VALIDATION_ERROR"
    [message] = reply.json["errors"]["headers"]["If-Match"]
    assert BAD[value] in message
    assert _row_counts() == counts
    assert world.a.get(url.rsplit("/", 1)[0] if route == "case" else url).json == state


def test_a_version_never_issued_is_stale(world: World) -> None:
    reply = world.a.patch(world.urls["experiment"], json={"name": "Future"},
                          headers={"If-Match": '"999"'})
    assert reply.status_code == 412
    assert reply.json["current"]["name"] == "Draft" and reply.json["current_version"] == 1


def test_editing_a_case_someone_deleted_is_stale_with_no_current_case(world: World) -> None:
    case = f"{world.urls['cases']}/{world.ids['case']}"
    assert world.a.delete(case).status_code == 200
    reply = world.b.patch(case, json={"input": {"question": "late"}})
    assert reply.status_code == 412 and reply.json["current"] is None
    assert world.a.get(world.urls["cases"]).json["items"] == []


def test_choosing_a_template_after_typing_keeps_one_draft_with_the_templates_content(
        world: World) -> None:
    """The wizard's flow: the objective typed made a draft; the template fills that draft,
    and the autosave of what was typed before, based on the older version, is refused."""
    project = world.urls["project"]
    typed = _created(world.a.post(project + "/experiments", json={
        "name": "Typed", "objective": {"goal": "Answer refund questions politely"}}))
    url = f"{project}/experiments/{typed['id']}"
    tag = world.a.get(url).headers["ETag"]
    count = world.a.get(project + "/experiments").json["total"]
    slug = world.a.get(project + "/experiment-templates").json[0]["slug"]
    applied = world.a.post(f"{project}/experiment-templates/{slug}/apply",
                           json={"experiment_id": typed["id"]}, headers={"If-Match": tag})
    assert applied.status_code == 201, applied.json
    filled = applied.json
    assert filled["id"] == typed["id"] and filled["template"] == slug
    assert filled["config"]["data"]["dataset_version_id"] is not None
    assert filled["config"]["objective"]["goal"] != "Answer refund questions politely"
    assert world.a.get(project + "/experiments").json["total"] == count

    late = world.a.patch(url, headers={"If-Match": tag}, json={
        "objective": {"goal": "Answer refund questions politely"},
        "rubric": {"criteria": []}, "data": {"dataset_version_id": None}})
    assert late.status_code == 412
    assert late.json["current"]["config"] == filled["config"]
    assert world.a.get(url).json["config"] == filled["config"]

    stale_apply = world.b.post(f"{project}/experiment-templates/{slug}/apply",
                               json={"experiment_id": typed["id"]}, headers={"If-Match": tag})
    assert stale_apply.status_code == 412


def test_a_second_score_from_a_stale_tab_is_refused_after_a_first_one(world: World) -> None:
    """Both tabs scored once; A changes it, B's change based on the first save is refused."""
    first = world.a.request("PUT", world.urls["score"], json={"rating": 3},
                            headers={"If-Match": '"0"'})
    assert first.status_code == 200 and first.headers["ETag"] == '"1"'
    assert first.json["row_version"] == 1
    assert world.a.request("PUT", world.urls["score"], json={"rating": 5},
                           headers={"If-Match": '"1"'}).headers["ETag"] == '"2"'
    stale = world.b.request("PUT", world.urls["score"], json={"rating": 1},
                            headers={"If-Match": '"1"'})
    assert stale.status_code == 412 and stale.json["current"]["details"]["entered"]["rating"] == 5
    assert world.a.request("DELETE", world.urls["score"]).status_code == 204
    gone = world.b.request("PUT", world.urls["score"], json={"rating": 1},
                           headers={"If-Match": '"2"'})  # deleted in the other tab meanwhile
    assert gone.status_code == 412 and gone.json["current"] is None
    assert _own_score(world, world.a) is None


def test_an_undo_from_a_stale_tab_does_not_remove_a_score_saved_since(world: World) -> None:
    """Tab B's undo (a DELETE) is based on its own save; A scored again since: refused, kept.
    The results grid carries each score's version, which is what the keys are based on."""
    grid = world.urls["run"] + "/grid"
    saved = world.b.request("PUT", world.urls["score"], json={"rating": 2},
                            headers={"If-Match": '"0"'})
    assert saved.status_code == 200 and saved.json["row_version"] == 1
    shown = [s for row in world.a.get(grid).json["rows"] for cell in row["cells"]
             for o in cell["outputs"] for s in o["scores"] if s["kind"] == "manual"]
    assert [s["row_version"] for s in shown] == [1]
    assert world.a.request("PUT", world.urls["score"], json={"rating": 4},
                           headers={"If-Match": '"1"'}).status_code == 200
    undo = world.b.request("DELETE", world.urls["score"], headers={"If-Match": '"1"'})
    assert undo.status_code == 412 and undo.json["current"]["details"]["entered"]["rating"] == 4
    assert undo.json["current_version"] == 2
    assert (_own_score(world, world.a) or {})["details"]["entered"]["rating"] == 4
    assert world.b.request("DELETE", world.urls["score"],
                           headers={"If-Match": '"2"'}).status_code == 204
    assert _own_score(world, world.a) is None
    missing = world.b.request("DELETE", world.urls["score"], headers={"If-Match": '"2"'})
    assert missing.status_code == 404  # gone already: undo's aim holds


def _bulk(world: World, browser: Session, rating: int, versions: Any) -> Any:
    return browser.request("PUT", world.urls["scores"], json={
        "rating": rating, "output_ids": [world.ids["output"]], "row_versions": versions})


def test_scoring_several_outputs_at_once_names_each_scores_version(world: World) -> None:
    assert _bulk(world, world.a, 3, [0]).status_code == 200
    counts = _row_counts()
    stale = _bulk(world, world.b, 1, [0])
    assert stale.status_code == 412, stale.json
    [current] = stale.json["current"]
    assert current["details"]["entered"]["rating"] == 3 and stale.json["current_version"] == 1
    assert _row_counts() == counts
    again = _bulk(world, world.b, 1, [1])
    assert again.status_code == 200 and again.json["items"][0]["row_version"] == 2
    unguarded = world.b.request("PUT", world.urls["scores"], json={
        "rating": 4, "output_ids": [world.ids["output"]]})  # clients that send no versions
    assert unguarded.status_code == 200


@pytest.mark.parametrize("versions", [[], [0, 0], [-1], ["1"], [10**19]])
def test_a_bad_list_of_score_versions_is_a_422_that_writes_nothing(
        world: World, versions: Any) -> None:
    counts = _row_counts()
    reply = _bulk(world, world.a, 3, versions)
    assert reply.status_code == 422, reply.get_data(as_text=True)
    assert "row_versions" in reply.json["errors"]["json"]
    assert _row_counts() == counts


def _scores() -> int:
    with db.factory() as session:
        return session.scalar(select(func.count()).select_from(Score)) or 0


def _bearer(factory: Factory, world: World) -> dict[str, str]:
    with db.factory() as session:
        from assay.core.auth.models import User
        owner = session.get_one(User, world.ids["owner"])
        session.expunge(owner)
    return {"Authorization": f"Bearer {factory.api_token(owner)}"}


@pytest.mark.parametrize("resource", ["arena draft", "manual score"])
def test_two_first_saves_at_once_keep_one_and_refuse_the_other(
        app: Flask, monkeypatch: pytest.MonkeyPatch, factory: Factory, world: World,
        resource: str) -> None:
    """Two tabs save a row that does not exist yet, both based on "never saved": one is
    stored, the other (its insert beaten) is a clean 412 with the first, never a 500."""
    url, held, bodies = {
        "arena draft": (world.urls["arena"] + "/drafts/rules",
                        "assay.core.challenges.service.draft",
                        [{"text": NAMES[0]}, {"text": NAMES[1]}]),
        "manual score": (world.urls["score"], "assay.core.scoring.manual.own_score",
                         [{"rating": RATINGS[0]}, {"rating": RATINGS[1]}]),
    }[resource]
    replies = race(app, monkeypatch, held, [("PUT", url, body) for body in bodies],
                   headers={**_bearer(factory, world), "If-Match": '"0"'})
    assert sorted(r.status_code for r in replies) == [200, 412], [r.json for r in replies]
    kept, refused = sorted(replies, key=lambda r: r.status_code)
    assert refused.json["code"] == "STALE_WRITE" and refused.json["current_version"] == 1
    kept_value = refused.json["current"].get("text") or \
        refused.json["current"]["details"]["entered"]["rating"]
    stored = RESOURCES[resource].state(world, world.a)
    assert kept_value == (stored.get("draft") or stored["details"]["entered"]["rating"])
    assert kept_value in (NAMES[0], NAMES[1], RATINGS[0], RATINGS[1])
    assert kept.json["row_version"] == 1


def test_two_first_saves_without_versions_both_apply(
        app: Flask, monkeypatch: pytest.MonkeyPatch, factory: Factory, world: World) -> None:
    """Clients that send no version: the later first save updates the earlier one."""
    replies = race(app, monkeypatch, "assay.core.challenges.service.draft",
                   [("PUT", world.urls["arena"] + "/drafts/rules", {"text": t}) for t in NAMES],
                   headers=_bearer(factory, world))
    assert [r.status_code for r in replies] == [200, 200], [r.json for r in replies]
    assert _draft(world, world.a)["draft"] in NAMES
    assert _draft(world, world.a)["draft_row_version"] == 2


def test_two_hints_revealed_at_once_are_one_reveal(
        app: Flask, monkeypatch: pytest.MonkeyPatch, factory: Factory, world: World) -> None:
    replies = race(app, monkeypatch, "assay.core.challenges.service._draft",
                   [("POST", world.urls["arena"] + "/hints/rules", None)] * 2,
                   headers=_bearer(factory, world))
    assert [r.status_code for r in replies] == [200, 200], [r.json for r in replies]
    assert replies[0].json["revealed_at"] is not None
