"""Prompt lineage beyond the chain: the tree of versions with their authors and children,
a diff between any two versions, and the preview of an edit before it is saved."""

from __future__ import annotations

from typing import Any

from assay.core.projects.models import Role
from tests.factories import Factory


def test_tree_diff_and_preview(factory: Factory) -> None:
    owner = factory.user()
    project = factory.project(owner, "Lineage")
    browser = factory.login(owner)
    base = f"/api/projects/{project.id}/prompts"
    prompt = browser.post(base, json={"name": "Support", "system": "Be kind.",
                                      "template": "Answer {{question}}\nBe brief."}).json
    url = f"{base}/{prompt['id']}"
    v1 = prompt["versions"][0]["id"]
    v2 = browser.post(url + "/versions", json={
        "template": "Answer {{question}}\nBe brief and specific.",
        "system": "Be kind.", "note": "More specific answers"}).json["id"]
    v3 = browser.post(url + "/versions", json={  # a branch from v1
        "template": "Answer {{question}} in French.", "system": None,
        "note": "Try French replies", "parent_id": v1}).json["id"]
    tree = browser.get(url + "/tree").json
    assert [n["id"] for n in tree] == [v1, v2, v3]
    assert tree[0]["children"] == [v2, v3] and tree[1]["children"] == []
    assert tree[0]["is_production"] and not tree[2]["is_production"]
    assert tree[1]["author"] and tree[2]["note"] == "Try French replies"
    reply = browser.get(url + f"/diff?from_id={v1}&to_id={v2}")
    assert reply.status_code == 200, reply.json
    found: dict[str, Any] = reply.json
    assert "-Be brief.\n" in found["diff"] and "+Be brief and specific.\n" in found["diff"]
    assert (found["added"], found["removed"], found["identical"]) == (1, 1, False)
    assert found["from_number"] == 1 and found["to_number"] == 2
    across = browser.get(url + f"/diff?from_id={v2}&to_id={v3}").json
    assert "-[system]\n" in across["diff"]  # the system text was dropped
    same = browser.get(url + f"/diff?from_id={v2}&to_id={v2}").json
    assert same["identical"] and same["diff"] == ""
    assert browser.get(url + f"/diff?from_id={v1}&to_id=999999").status_code == 422
    edit = {"template": "Answer {{question}}\nBe brief and specific!", "system": "Be kind."}
    latest = browser.post(url + "/diff-preview", json=edit)
    assert latest.status_code == 200 and latest.json["from_id"] == v3  # the latest
    preview = browser.post(url + "/diff-preview", json={**edit, "parent_id": v2})
    assert preview.json["from_id"] == v2 and preview.json["to_id"] is None
    assert (preview.json["added"], preview.json["removed"]) == (1, 1)
    versions = browser.get(url + "/versions").json["total"]
    assert versions == 3  # a preview saves nothing
    other = factory.project(owner, "Other")
    foreign = browser.post(f"/api/projects/{other.id}/prompts",
                           json={"name": "X", "template": "Y {{z}}"}).json
    assert browser.get(url + f"/diff?from_id={v1}&to_id="
                             f"{foreign['versions'][0]['id']}").status_code == 422
    viewer = factory.login(factory.member(project, Role.viewer))
    assert viewer.get(url + "/tree").status_code == 200
    assert viewer.post(url + "/diff-preview", json={"template": "x"}).status_code == 403


def test_the_default_diff_is_the_latest_version_against_its_parent(factory: Factory) -> None:
    owner = factory.user()
    project = factory.project(owner, "Defaults")
    browser = factory.login(owner)
    base = f"/api/projects/{project.id}/prompts"
    prompt = browser.post(base, json={"name": "P", "template": "One {{x}}"}).json
    url = f"{base}/{prompt['id']}"
    assert browser.get(url + "/diff").json["identical"]  # one version: itself
    browser.post(url + "/versions", json={"template": "Two {{x}}", "note": "Second version"})
    found = browser.get(url + "/diff").json
    assert (found["from_number"], found["to_number"], found["added"]) == (1, 2, 1)
