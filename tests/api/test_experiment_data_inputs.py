"""The wizard's data as edison writes it: JSONL rows with `"expected": "text"`; and a
started experiment's seed version, which nobody marked for production."""

from __future__ import annotations

import json

from sqlalchemy import select

from assay.core.projects.models import AuditEvent
from assay.core.prompts.models import Prompt
from assay.extensions import db
from tests.api.helpers_experiments import make_lab
from tests.factories import Factory


def test_jsonl_import_takes_expected_as_text_or_as_an_object(factory: Factory) -> None:
    user = factory.user()
    project = factory.project(user, "Imports")
    browser = factory.login(user)
    made = browser.post(f"/api/projects/{project.id}/datasets",
                        json={"name": "Cases", "kind": "cases"})
    base = f"/api/projects/{project.id}/datasets/{made.json['id']}"
    rows = [{"input": {"city": "Rome"}, "expected": "Pasta", "tags": ["it"]},
            {"input": {"city": "Bern"}, "expected": {"output": "Rösti"}},
            {"input": {"city": "Oslo"}, "expected": "  "}]
    content = "\n".join(json.dumps(r) for r in rows) + "\n"
    reply = browser.post(base + "/import", json={"format": "jsonl", "content": content})
    assert reply.status_code == 201, reply.json
    cases = browser.get(base + "/cases").json["items"]
    assert [c["expected"] for c in cases] == [{"output": "Pasta"}, {"output": "Rösti"}, None]
    bad = json.dumps({"input": {"city": "Lima"}, "expected": 7}) + "\n"
    refused = browser.post(base + "/import", json={"format": "jsonl", "content": bad})
    assert refused.status_code == 422
    assert refused.json["errors"]["rows"] == [
        {"row": 1, "field": "expected", "reason": "must be text, {\"output\": text} or null"}]


def test_the_seed_version_is_not_marked_for_production(factory: Factory) -> None:
    lab = make_lab(factory)
    draft = lab.draft()
    reply = lab.browser.post(lab.url(f"/{draft['id']}/start"))
    assert reply.status_code == 200, reply.json
    prompt_id = reply.json["prompt_id"]
    shown = lab.browser.get(f"/api/projects/{lab.project_id}/prompts/{prompt_id}").json
    assert shown["production_version_id"] is None
    with db.factory() as session:
        prompt = session.get(Prompt, prompt_id)
        assert prompt is not None and prompt.production_version_id is None
        marked = session.scalars(select(AuditEvent.action).where(
            AuditEvent.action == "prompt.production_set")).all()
    assert marked == []
    seed = reply.json["current_prompt_version_id"]
    done = lab.browser.request("PUT", f"/api/projects/{lab.project_id}/prompts/{prompt_id}"
                               "/production", json={"version_id": seed})
    assert done.status_code in (200, 204), done.json
    with db.factory() as session:
        assert session.scalars(select(AuditEvent.action).where(
            AuditEvent.action == "prompt.production_set")).all() == ["prompt.production_set"]
