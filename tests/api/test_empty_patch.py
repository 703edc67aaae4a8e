"""PATCH with no body or an empty object is a 422 that changes nothing, on every PATCH route;
a PATCH whose values are the current ones changes nothing either, and on a case makes no new
version and no new case id (issue 15 item 3)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from sqlalchemy import func, select

from assay.api.patch import EMPTY
from assay.core.projects.models import Role
from assay.extensions import db
from tests.factories import Factory, Session


@dataclass
class World:
    browser: Session
    urls: dict[str, str]


def _row_counts() -> dict[str, int]:
    with db.factory() as session:
        return {table.name: session.scalar(select(func.count()).select_from(table)) or 0
                for table in db.metadata.sorted_tables}


def _created(reply: Any) -> dict[str, Any]:
    assert reply.status_code == 201, reply.get_data(as_text=True)
    return dict(reply.json)


@pytest.fixture
def world(factory: Factory) -> World:
    owner = factory.user()
    project = factory.project(owner, "Patches")
    browser = factory.login(owner)
    base = f"/api/projects/{project.id}"
    credential = _created(browser.post(base + "/credentials", json={
        "kind": "fake", "label": "Fake", "base_url": factory.settings.fake_provider_url}))
    model = _created(browser.post(base + "/models", json={
        "name": "Fast", "credential_id": credential["id"], "model": "fake-fast"}))
    dataset = _created(browser.post(base + "/datasets", json={
        "name": "Capitals", "kind": "questions",
        "cases": [{"input": {"question": "Capital of France?"}, "tags": ["geo"]}]}))
    case = browser.get(f"{base}/datasets/{dataset['id']}/cases").json["items"][0]
    run_id = factory.finished_run(owner, project)
    member = factory.member(project, Role.viewer)
    experiment = _created(browser.post(base + "/experiments", json={"name": "Draft"}))
    return World(browser, {
        "experiment": f"{base}/experiments/{experiment['id']}",
        "project": base, "settings": base + "/settings",
        "credential": f"{base}/credentials/{credential['id']}",
        "model": f"{base}/models/{model['id']}",
        "dataset": f"{base}/datasets/{dataset['id']}",
        "case": f"{base}/datasets/{dataset['id']}/cases/{case['id']}",
        "run": f"{base}/runs/{run_id}", "member": f"{base}/members/{member.id}"})


def _read(world: World, route: str) -> Any:
    """What the route's resource looks like now (the case: its dataset's cases)."""
    url = world.urls[route]
    if route == "case":
        url = world.urls["dataset"] + "/cases"
    elif route == "member":
        url = world.urls["project"] + "/members"
    reply = world.browser.get(url)
    assert reply.status_code == 200, reply.json
    return reply.json


# Every PATCH route: its name, and the field a body must carry when it has required ones
PATCH_ROUTES = {"project": None, "settings": None, "credential": None, "model": None,
                "dataset": None, "case": None, "run": "budget_micros", "member": "role",
                "experiment": None}


def test_every_patch_route_is_listed(app: Any) -> None:
    patched = {rule.rule for rule in app.url_map.iter_rules() if "PATCH" in rule.methods}
    assert len(patched) == len(PATCH_ROUTES), sorted(patched)


@pytest.mark.parametrize("route", sorted(PATCH_ROUTES))
def test_no_body_and_an_empty_object_are_422_and_change_nothing(world: World,
                                                                 route: str) -> None:
    before, counts = _read(world, route), _row_counts()
    sends: list[Callable[[], Any]] = [
        lambda: world.browser.patch(world.urls[route]),  # no body, no content type
        lambda: world.browser.patch(world.urls[route], data="",
                                    content_type="application/json"),
        lambda: world.browser.patch(world.urls[route], json={}),
    ]
    for send in sends:
        reply = send()
        assert reply.status_code == 422, (route, reply.get_data(as_text=True))
        assert reply.json["code"] == "VALIDATION_ERROR"
        errors = reply.json["errors"]["json"]
        required = PATCH_ROUTES[route]
        if required is None:
            assert errors == {"_schema": [EMPTY]}, (route, errors)
        else:
            assert required in errors, (route, errors)
    assert _row_counts() == counts, f"an empty PATCH {route} wrote something"
    assert _read(world, route) == before


SAME: dict[str, Callable[[Any], dict[str, Any]]] = {
    "project": lambda now: {"name": now["name"], "description": now["description"]},
    "settings": lambda now: {"name": now["name"], "alert_threshold": now["alert_threshold"]},
    "credential": lambda now: {"label": now["label"]},
    "model": lambda now: {"name": now["name"], "model": now["model"]},
    "dataset": lambda now: {"name": now["name"], "tags": now["tags"]},
    "case": lambda now: {k: now["items"][0][k] for k in ("input", "tags", "metadata")},
    "experiment": lambda now: {"name": now["name"], "description": now["description"]},
}


@pytest.mark.parametrize("route", sorted(SAME))
def test_the_current_values_change_nothing(world: World, route: str) -> None:
    before, counts = _read(world, route), _row_counts()
    reply = world.browser.patch(world.urls[route], json=SAME[route](before))
    assert reply.status_code == 200, (route, reply.get_data(as_text=True))
    assert _row_counts() == counts, f"a PATCH {route} of the current values wrote something"
    assert _read(world, route) == before
    if route == "case":  # the current version and the same case, not a copy
        case = before["items"][0]
        assert reply.json["case"]["id"] == case["id"]
        assert reply.json["version"]["number"] == 1
    else:
        assert reply.json == before


def test_a_real_case_edit_still_makes_a_version(world: World) -> None:
    reply = world.browser.patch(world.urls["case"], json={"tags": ["geo", "europe"]})
    assert reply.status_code == 200, reply.json
    assert reply.json["version"]["number"] == 2 and reply.json["case"]["tags"] == [
        "geo", "europe"]


def test_the_document_says_a_patch_needs_a_field(client: Any) -> None:
    doc = client.get("/api/openapi.json").json
    for path, item in doc["paths"].items():
        if "patch" not in item:
            continue
        ref = item["patch"]["requestBody"]["content"]["application/json"]["schema"]["$ref"]
        schema = doc["components"]["schemas"][ref.rsplit("/", 1)[1]]
        assert schema.get("minProperties") == 1 or schema.get("required"), path
