"""AI assist through the API, on the fake provider scripted per model: each kind answers
with the JSON the spec asks for, its cost is returned and charged to the project (and to
the experiment's assist phase); a model that answers badly is a clear 502, still charged;
an experiment without budget left refuses the call before it is made."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from sqlalchemy import select

from assay.core import ledger
from assay.core.experiments.models import Experiment
from assay.core.llm.models import Credential, ModelConfig
from assay.core.projects.models import Project, Role
from assay.core.reports.models import SpendDay
from assay.extensions import db
from tests.api.helpers_experiments import (
    ASSIST_MODEL,
    ASSIST_RUBRIC,
    ASSIST_SCRIPTS,
    CRITERIA,
    Lab,
    make_lab,
)
from tests.factories import Factory

GOOD, BAD = ASSIST_MODEL, "assist-bad"
RUBRIC = ASSIST_RUBRIC
# the good model's replies are the shared ones; the bad one answers prose, not JSON
SCRIPTS = [*ASSIST_SCRIPTS,
           {"model": BAD, "pattern": "", "reply": "Sure! Here are some ideas: be clear."}]


def _model(project_id: int, model: str, fake_url: str) -> int:
    with db.factory() as session:
        credential = Credential(project_id=project_id, kind="fake", label=f"{model} account",
                                base_url=fake_url, config={})
        session.add(credential)
        session.flush()
        row = ModelConfig(project_id=project_id, credential_id=credential.id, name=model,
                          model=model, params={}, input_price_per_mtok_micros=1_000_000,
                          output_price_per_mtok_micros=2_000_000)
        session.add(row)
        session.commit()
        return row.id


@pytest.fixture
def lab(factory: Factory) -> Lab:
    fake_url = factory.settings.fake_provider_url
    config = httpx.get(f"{fake_url}/_fake/config").json()
    kept = [s for s in config["scripts"] if s.get("model") not in (GOOD, BAD)]
    httpx.post(f"{fake_url}/_fake/config", json={"scripts": [*kept, *SCRIPTS]}
               ).raise_for_status()
    return make_lab(factory)


def _spent(project_id: int) -> tuple[int, int]:
    with db.factory() as session:
        project = session.get(Project, project_id)
        days = session.scalars(select(SpendDay).where(SpendDay.project_id == project_id,
                                                      SpendDay.kind == "assist")).all()
        assert project is not None
        return project.spent_micros, sum(d.spent_micros for d in days)


CASES: list[tuple[str, dict[str, Any], str]] = [
    ("objectives", {"hints": "support replies for a shop"}, "options"),
    ("objective", {"objective": "Answer customers", "mode": "details"}, "text"),
    ("rubric", {"objective": "Answer customers well"}, "criteria"),
    ("prompts", {"objective": "Answer customers well", "rubric": CRITERIA}, "prompts"),
    ("prompt", {"objective": "Answer customers", "prompt": "Answer {{question}}"},
     "improved"),
]


def test_each_kind_of_assist_is_answered_and_charged(lab: Lab, factory: Factory) -> None:
    good = _model(lab.project_id, GOOD, factory.settings.fake_provider_url)
    draft = lab.draft()
    total = 0
    for kind, body, key in CASES:
        reply = lab.browser.post(f"/api/projects/{lab.project_id}/assist/{kind}",
                                 json={"model_id": good, "experiment_id": draft["id"], **body})
        assert reply.status_code == 200, (kind, reply.json)
        assert key in reply.json["result"] and reply.json["model"] == GOOD
        assert reply.json["cost_micros"] > 0 and reply.json["tokens_in"] > 0
        total += reply.json["cost_micros"]
        if kind == "rubric":  # weights the model rounded are put back to sum to 1
            weights = [c["weight"] for c in reply.json["result"]["criteria"]]
            assert abs(sum(weights) - 1) < 1e-9 and weights[0] > weights[1]
        if kind == "prompts":
            assert [p["systemText"] for p in reply.json["result"]["prompts"]] == [None] * 3
    assert _spent(lab.project_id) == (total, total)
    with db.factory() as session:
        experiment = session.get(Experiment, draft["id"])
        assert experiment is not None and experiment.assist_micros == total
    # the cost report counts it too: its total is the project's spend
    report = lab.browser.get(f"/api/projects/{lab.project_id}/reports/costs").json["total"]
    assert report["spent_micros"] == total
    assert {k["kind"]: k["spent_micros"] for k in report["by_kind"]}["assist"] == total


def test_a_bad_answer_is_a_clear_error_and_still_charged(lab: Lab, factory: Factory) -> None:
    bad = _model(lab.project_id, BAD, factory.settings.fake_provider_url)
    url = f"/api/projects/{lab.project_id}/assist/objectives"
    reply = lab.browser.post(url, json={"model_id": bad, "hints": "support replies please"})
    assert reply.status_code == 502 and reply.json["code"] == "ASSIST_BAD_REPLY"
    assert "did not answer with JSON" in reply.json["message"]
    spent, charged = _spent(lab.project_id)
    assert spent == charged > 0


def test_wrong_shapes_unknown_models_budget_and_roles(lab: Lab, factory: Factory) -> None:
    good = _model(lab.project_id, GOOD, factory.settings.fake_provider_url)
    base = f"/api/projects/{lab.project_id}/assist"
    count = lab.browser.post(base + "/objectives",  # the script gives 3, 2 were asked
                             json={"model_id": good, "hints": "support replies", "count": 2})
    assert count.status_code == 502 and "options" in count.json["message"]
    other = factory.project(factory.user(), "Elsewhere")
    foreign = _model(other.id, GOOD, factory.settings.fake_provider_url)
    unknown = lab.browser.post(base + "/rubric", json={"model_id": foreign,
                                                       "objective": "Answer customers"})
    assert unknown.status_code == 422 and "model_id" in unknown.json["errors"]["json"]
    assert lab.browser.post(base + "/objectives", json={"model_id": good, "hints": "short"}
                            ).status_code == 422
    draft = lab.draft(stop={"max_budget_micros": 0})
    broke = lab.browser.post(base + "/rubric", json={
        "model_id": good, "objective": "Answer customers", "experiment_id": draft["id"]})
    assert broke.status_code == 409 and broke.json["code"] == "BUDGET_EXCEEDED"
    viewer = factory.login(factory.member(lab.project, Role.viewer))
    assert viewer.post(base + "/rubric", json={"model_id": good, "objective": "x"}
                       ).status_code == 403
    assert _spent(lab.project_id)[0] == _spent(lab.project_id)[1]


def _held(project_id: int, experiment_id: int) -> tuple[int, int]:
    with db.factory() as session:
        project = session.get(Project, project_id)
        experiment = session.get(Experiment, experiment_id)
        assert project is not None and experiment is not None
        return project.reserved_micros, experiment.reserved_micros


def test_an_assist_call_holds_its_cost_while_it_runs_and_settles_it(
        lab: Lab, factory: Factory, monkeypatch: pytest.MonkeyPatch) -> None:
    """The call's maximum cost is held against both caps while the model thinks (another
    spender sees it), then swapped for the actual cost."""
    from assay.core.experiments import assist

    good = _model(lab.project_id, GOOD, factory.settings.fake_provider_url)
    draft = lab.draft()
    seen: list[tuple[int, int]] = []
    real = assist.ModelJudge

    class Watching(real):  # type: ignore[misc, valid-type]
        async def __call__(self, *args: Any, **kwargs: Any) -> Any:
            seen.append(_held(lab.project_id, draft["id"]))
            return await super().__call__(*args, **kwargs)

    monkeypatch.setattr(assist, "ModelJudge", Watching)
    reply = lab.browser.post(f"/api/projects/{lab.project_id}/assist/rubric", json={
        "model_id": good, "objective": "Answer customers well", "experiment_id": draft["id"]})
    assert reply.status_code == 200, reply.json
    # 3,000 reply tokens at $2/Mtok alone: the hold covers the most the call can cost
    assert len(seen) == 1 and seen[0][0] == seen[0][1] >= 6000 > reply.json["cost_micros"]
    assert _held(lab.project_id, draft["id"]) == (0, 0)
    assert _spent(lab.project_id) == (reply.json["cost_micros"],) * 2


def test_an_assist_call_the_project_budget_cannot_cover_is_refused_before_it_is_sent(
        lab: Lab, factory: Factory, monkeypatch: pytest.MonkeyPatch) -> None:
    from assay.core.experiments import assist

    good = _model(lab.project_id, GOOD, factory.settings.fake_provider_url)
    sent: list[Any] = []
    monkeypatch.setattr(assist, "ModelJudge", lambda *a: sent.append(a))
    with db.factory() as session:
        project = session.get(Project, lab.project_id)
        assert project is not None
        project.budget_micros, project.spent_micros = 10_000, 7_000
        session.commit()
    url = f"/api/projects/{lab.project_id}/assist/objectives"
    reply = lab.browser.post(url, json={"model_id": good, "hints": "support replies please"})
    assert reply.status_code == 409 and reply.json["code"] == "BUDGET_EXCEEDED", reply.json
    assert "0.0030 USD left" in reply.json["message"] and "may cost up to" in reply.json[
        "message"]
    assert sent == [] and _spent(lab.project_id) == (7_000, 0)
    with db.factory() as session:
        project = session.get(Project, lab.project_id)
        assert project is not None and project.reserved_micros == 0


def test_a_failed_assist_call_gives_its_hold_back(
        lab: Lab, factory: Factory, monkeypatch: pytest.MonkeyPatch) -> None:
    from assay.core.experiments import assist

    good = _model(lab.project_id, GOOD, factory.settings.fake_provider_url)
    draft = lab.draft(stop={"max_budget_micros": 20_000})

    class Slow:
        def __init__(self, *args: Any) -> None:
            pass

        async def __call__(self, *args: Any, **kwargs: Any) -> Any:
            raise TimeoutError

    monkeypatch.setattr(assist, "ModelJudge", Slow)
    body = {"model_id": good, "objective": "Answer customers well",
            "experiment_id": draft["id"]}
    url = f"/api/projects/{lab.project_id}/assist/rubric"
    for _ in range(3):  # a leaked hold would use up the experiment's $0.02 by the third
        reply = lab.browser.post(url, json=body)
        assert reply.status_code == 502 and reply.json["code"] == "ASSIST_TIMEOUT", reply.json
    assert _held(lab.project_id, draft["id"]) == (0, 0)
    assert _spent(lab.project_id) == (0, 0)


def test_two_holds_cannot_share_the_last_of_a_budget(lab: Lab) -> None:
    """The reservation itself (core): what one hold takes, the next cannot."""
    from assay.core.experiments import spend

    draft = lab.draft(stop={"max_budget_micros": 10_000})
    with db.factory() as session:
        first = spend.reserve(session, lab.project_id, draft["id"], 6_000)
        session.commit()
        with pytest.raises(spend.BudgetExceeded, match=r"0\.0040 USD left"):
            spend.reserve(session, lab.project_id, draft["id"], 6_000)
        session.rollback()
        tab = ledger.Tab()
        tab.add(None, 1, 2_500, 10, 20)
        spend.settle(session, first, "assist", tab)
        session.commit()
        spend.reserve(session, lab.project_id, draft["id"], 7_500)  # now it fits
        session.rollback()
        experiment = session.get(Experiment, draft["id"])
        assert experiment is not None
        assert (experiment.reserved_micros, experiment.assist_micros) == (0, 2_500)


UNSCRIPTED = "fake-judge"  # no script answers it: the fake provider's own assist replies


def test_each_kind_is_answered_by_the_shipped_fake_provider_without_scripts(
        lab: Lab, factory: Factory) -> None:
    """Every assist kind gets valid content built from what was sent (the bug: each was a
    502 'did not answer with JSON', charged)."""
    model = _model(lab.project_id, UNSCRIPTED, factory.settings.fake_provider_url)
    url = f"/api/projects/{lab.project_id}/assist"

    def ask(kind: str, **body: Any) -> dict[str, Any]:
        reply = lab.browser.post(f"{url}/{kind}", json={"model_id": model, **body})
        assert reply.status_code == 200, (kind, reply.json)
        assert reply.json["cost_micros"] > 0
        return dict(reply.json["result"])

    options = ask("objectives", hints="refund emails for a bike shop", count=2)["options"]
    assert len(options) == 2 and all("bike" in o["text"] for o in options)
    assert options[0]["title"] != options[1]["title"]
    details = ask("objective", objective="Answer bike shop customers.", mode="details")
    assert details["text"].startswith("Answer bike shop customers.") and details["changes"]
    criteria = ask("rubric", objective="Accurate, friendly and concise replies.")["criteria"]
    names = [c["name"] for c in criteria]
    assert 4 <= len(names) <= 6 and {"Accuracy", "Tone", "Conciseness"} <= set(names)
    assert abs(sum(c["weight"] for c in criteria) - 1) < 1e-9
    prompts = ask("prompts", objective="Answer bike shop customers.", rubric=CRITERIA,
                  count=3)["prompts"]
    assert len(prompts) == 3 and all("{{input}}" in p["text"] for p in prompts)
    assert len({p["name"] for p in prompts}) == 3
    improved = ask("prompt", objective="Answer customers", prompt="Answer {{question}}")
    assert improved["improved"].startswith("Answer {{question}}")
    assert improved["improved"] != "Answer {{question}}" and improved["changes"]
    # the same request gets the same reply
    assert ask("objectives", hints="refund emails for a bike shop", count=2)["options"] == \
        options
