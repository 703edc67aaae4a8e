"""Every challenge file, through HTTP: its reference rules and its reference judge rubric
(on the fake provider with scripted verdicts, see arena_helpers) are Dev ready and Prod
ready; its overfitted rules are Dev ready and not Prod ready: the hidden test set catches
an eval that memorises the dev set. Parametrised over seeds/challenges/*.yaml."""

from __future__ import annotations

import pytest

from assay.core.projects.models import Role
from assay.providers.fake import FakeProviderThread
from tests.api.arena_helpers import IDS, approve, attempt, fixture, script_judge, seed
from tests.engine.test_providers_engine import fake  # noqa: F401
from tests.factories import Factory


def _summary(browser: object, cid: str, **body: object) -> dict[str, object]:
    reply = attempt(browser, cid, **body)
    assert reply.status_code == 201, reply.get_data(as_text=True)
    return dict(reply.json["summary"])


@pytest.mark.parametrize("cid", IDS)
def test_reference_rules_ship_and_overfitted_rules_do_not(factory: Factory, cid: str) -> None:
    seed()
    browser = factory.signed_in()
    reference, overfit = fixture(cid, "reference.rules.yaml"), fixture(cid, "overfit.rules.yaml")
    for split in ("dev", "test"):
        summary = _summary(browser, cid, tab="rules", text=reference, set=split)
        assert summary["ready"] and summary["critical_count"] == 0, (split, summary)
    assert _summary(browser, cid, tab="rules", text=overfit, set="dev")["ready"]
    shipped = _summary(browser, cid, tab="rules", text=overfit, set="test")
    assert not shipped["ready"], shipped
    listed = browser.get("/api/arena/challenges").json["items"]
    assert next(c for c in listed if c["id"] == cid)["progress"] == {
        "dev_ready": True, "completed": True}


@pytest.mark.parametrize("cid", IDS)
def test_reference_judge_ships_with_a_critique(factory: Factory, cid: str,
                                               fake: FakeProviderThread,  # noqa: F811
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """On the operator's approved judge, calibrated on dev, then shipped."""
    seed()
    owner = factory.user()
    project = factory.project(owner, "Arena budget")
    script_judge(fake.url, project.id, cid)
    judge = approve(monkeypatch, fake.url, f"arena-judge-{cid}")
    browser = factory.login(factory.member(project, Role.editor))
    rubric = fixture(cid, "reference.judge.txt")
    for split in ("dev", "test"):
        reply = attempt(browser, cid, tab="judge", text=rubric, set=split,
                        project_id=project.id, judge=judge)
        assert reply.status_code == 201, reply.get_data(as_text=True)
        body = reply.json
        assert body["summary"]["ready"], (split, body["summary"])
        assert body["critique"]["critique"] and body["critique"]["error"] is None
        assert body["judge"] == judge and body["project_id"] == project.id
        if split == "dev":
            assert all(r["evidence"] for r in body["results"])
        else:
            assert body["results"] == []
