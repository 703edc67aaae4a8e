"""Experiments through the API: drafts auto-saved step by step, each step checked against
the spec's limits with field errors, start (frozen config, seed prompt version, scorers,
pinned dataset version, stratified reproducible split) and duplicate; roles."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import func, select

from assay.core.experiments.models import Experiment, ExperimentConfigVersion
from assay.core.experiments.split import split_cases
from assay.core.projects.models import Role
from assay.core.prompts.models import Prompt
from assay.extensions import db
from tests.api.helpers_experiments import CRITERIA, Lab, make_lab
from tests.factories import Factory


@pytest.fixture
def lab(factory: Factory) -> Lab:
    return make_lab(factory)


@pytest.fixture
def loop_begins(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    begun: list[int] = []
    monkeypatch.setattr("assay.core.experiments.loop.begin",
                        lambda session, experiment: begun.append(experiment.id))
    return begun


def _count(model: Any) -> int:
    with db.factory() as session:
        return session.scalar(select(func.count()).select_from(model)) or 0


def test_a_draft_saves_partial_steps_and_reports_what_is_missing(lab: Lab) -> None:
    reply = lab.browser.post(lab.url(), json={"name": "Blank"})
    assert reply.status_code == 201, reply.json
    draft = reply.json
    assert draft["status"] == "draft" and draft["config"]["stop"]["max_iterations"] == 10
    assert "objective.goal" in draft["problems"]["objective"]
    assert draft["problems"]["stop"] == {}
    url = lab.url(f"/{draft['id']}")
    saved = lab.browser.patch(url, json={"objective": {"goal": "Too short"}})
    assert saved.status_code == 200
    assert saved.json["config"]["objective"]["goal"] == "Too short"
    # a field of a step is merged into it: the rest of the step stays
    saved = lab.browser.patch(url, json={"prompt": {"system": "Be brief."}})
    assert saved.json["config"]["prompt"]["system"] == "Be brief."
    assert saved.json["config"]["prompt"]["few_shots"] == []
    assert lab.browser.get(url).json["config"]["objective"]["goal"] == "Too short"
    assert lab.browser.patch(url, json={}).status_code == 422


BAD_STEPS: list[tuple[str, dict[str, Any], str]] = [
    ("objective", {"goal": "x" * 19}, "objective.goal"),
    ("rubric", {"criteria": CRITERIA[:1]}, "rubric.criteria"),
    ("rubric", {"criteria": [{**CRITERIA[0], "weight": 0.7}, CRITERIA[1]]},
     "rubric.criteria"),
    ("rubric", {"criteria": [{**CRITERIA[0], "name": "Help!"}, CRITERIA[1]]},
     "rubric.criteria[0].name"),
    ("rubric", {"criteria": [{**CRITERIA[0], "description": "short"}, CRITERIA[1]]},
     "rubric.criteria[0].description"),
    ("rubric", {"criteria": [{**CRITERIA[0], "scale": {"min": 0, "max": 7}}, CRITERIA[1]]},
     "rubric.criteria[0].scale"),
    ("prompt", {"template": "Too short {{question}}"}, "prompt.template"),
    ("data", {"dataset_version_id": None}, "data.dataset_version_id"),
    ("data", {"dataset_version_id": 999_999}, "data.dataset_version_id"),
    ("models", {"targets": []}, "models.targets"),
    ("models", {"targets": [{"model_id": 999_999, "params": {}}]},
     "models.targets[0].model_id"),
    ("models", {"targets": [{"model_id": 0, "params": {"temperature": 2.5}}]},
     "models.targets[0].params.temperature"),
    ("judges", {"pointwise": []}, "judges.pointwise"),
    ("judges", {"pairwise": True, "pairwise_judge": None}, "judges.pairwise_judge"),
    ("stop", {"max_iterations": 101}, "stop.max_iterations"),
    ("stop", {"convergence_window": 0}, "stop.convergence_window"),
    ("stop", {"budget_alert_threshold": 0.4}, "stop.budget_alert_threshold"),
    ("stop", {"max_rejections": 0}, "stop.max_rejections"),
    ("stop", {"max_rejections": 21}, "stop.max_rejections"),
]


@pytest.mark.parametrize(("step", "values", "field"), BAD_STEPS)
def test_each_step_is_checked_with_an_error_on_the_field(
        lab: Lab, step: str, values: dict[str, Any], field: str) -> None:
    if step == "models" and values["targets"] and values["targets"][0]["model_id"] == 0:
        values = {"targets": [{**values["targets"][0], "model_id": lab.model_ids[0]}]}
    draft = lab.draft()
    url = lab.url(f"/{draft['id']}")
    assert lab.browser.post(url + "/validate", json={"steps": [step]}).status_code == 200
    saved = lab.browser.patch(url, json={step: values})  # auto-save keeps it
    if step == "stop":  # plain numbers: their ranges are the body schema's
        assert saved.status_code == 422, saved.json
        name = field.split(".")[1]
        assert name in saved.json["errors"]["json"]["stop"], saved.json
        assert lab.browser.get(url).json["config"] == draft["config"]
        return
    assert saved.status_code == 200, saved.json
    assert field in saved.json["problems"][step], saved.json["problems"]
    reply = lab.browser.post(url + "/validate", json={"steps": [step]})
    assert reply.status_code == 422, reply.json
    assert field in reply.json["errors"]["json"], reply.json
    started = lab.browser.post(url + "/start")
    assert started.status_code == 422 and field in started.json["errors"]["json"]
    assert lab.browser.get(url).json["status"] == "draft"


def test_bodies_of_the_wrong_type_are_refused(lab: Lab) -> None:
    draft = lab.draft()
    url = lab.url(f"/{draft['id']}")
    for body in ({"stop": {"max_iterations": "ten"}}, {"rubric": {"criteria": "all"}},
                 {"judges": {"pointwise": ["x"]}}, {"colour": "red"},
                 {"data": {"holdout_fraction": 0.9}}):
        reply = lab.browser.patch(url, json=body)
        assert reply.status_code == 422, (body, reply.json)
    assert lab.browser.get(url).json["config"] == draft["config"]
    assert lab.browser.post(url + "/validate", json={"steps": ["colour"]}).status_code == 422


def test_start_runs_iteration_one_of_the_loop(lab: Lab) -> None:
    draft = lab.draft()
    reply = lab.browser.post(lab.url(f"/{draft['id']}/start"))
    assert reply.status_code == 200, reply.json
    assert _count(ExperimentConfigVersion) == 1 and _count(Prompt) == 1
    iterations = lab.browser.get(lab.url(f"/{draft['id']}/iterations")).json
    assert iterations["total"] == 1
    first = iterations["items"][0]
    assert first["status"] == "executing" and first["run_id"] is not None
    live = lab.browser.get(lab.url(f"/{draft['id']}/progress")).json
    assert live["iteration"]["phase"] == "executing" and live["iteration"]["total"] > 0


def test_start_freezes_the_config_and_prepares_the_loop(
        lab: Lab, loop_begins: list[int]) -> None:
    draft = lab.draft()
    url = lab.url(f"/{draft['id']}")
    reply = lab.browser.post(url + "/start")
    assert reply.status_code == 200, reply.json
    started = reply.json
    assert loop_begins == [draft["id"]]
    assert started["status"] == "running" and started["config_version"] == 1
    assert started["frozen_at"] and started["dataset_version_id"] == lab.version_id
    assert started["refinement_cases"] == 7 and started["holdout_cases"] == 3
    assert len(started["scorer_ids"]) == 2  # rubric judge + safety
    prompt = lab.browser.get(f"/api/projects/{lab.project_id}/prompts/{started['prompt_id']}")
    assert prompt.json["versions"][0]["id"] == started["current_prompt_version_id"]
    assert "{{question}}" in prompt.json["versions"][0]["template"]
    versions = lab.browser.get(url + "/config-versions").json
    assert versions["total"] == 1 and versions["items"][0]["config"] == started["config"]
    with db.factory() as session:
        experiment = session.get(Experiment, draft["id"])
        assert experiment is not None
        held = set(experiment.holdout_case_ids)
        assert held | set(experiment.refinement_case_ids) == set(lab.case_ids)
        assert held == set(split_cases([(c, ["billing", "shipping"][i % 2]
                                        and [["billing", "shipping"][i % 2]])
                                        for i, c in enumerate(lab.case_ids)], 0.3, 7)[1])
    again = lab.browser.post(url + "/start")
    assert again.status_code == 409 and again.json["code"] == "EXPERIMENT_FROZEN"
    frozen = lab.browser.patch(url, json={"objective": {"goal": "A different goal " * 3}})
    assert frozen.status_code == 409
    assert _count(ExperimentConfigVersion) == 1


def test_start_names_prompt_variables_the_cases_lack(lab: Lab) -> None:
    template = "Answer the customer in a friendly way, in {{language}}: {{question}} ok"
    draft = lab.draft(prompt={"template": template, "system": None, "few_shots": [],
                              "tools": []})
    reply = lab.browser.post(lab.url(f"/{draft['id']}/start"))
    assert reply.status_code == 422
    assert "language" in reply.json["errors"]["json"]["data.dataset_version_id"][0]


def test_the_split_is_stratified_and_reproducible() -> None:
    cases = [(i, ["a"] if i < 20 else ["b"]) for i in range(30)]
    refine, held = split_cases(cases, 0.3, 11)
    assert len(held) == 9 and len(refine) == 21
    assert sum(1 for c in held if c < 20) == 6  # 30% of each tag
    assert split_cases(cases, 0.3, 11) == (refine, held)
    assert split_cases(cases, 0.3, 12) != (refine, held)
    assert split_cases([(1, None), (2, None)], 0.3, 1) == ([1], [2]) or \
        split_cases([(1, None), (2, None)], 0.3, 1) == ([2], [1])
    assert split_cases([(1, None)], 0.3, 1) == ([1], [])


def test_list_duplicate_and_roles(lab: Lab, factory: Factory) -> None:
    first = lab.draft()
    lab.browser.post(lab.url(), json={"name": "Other"})
    listed = lab.browser.get(lab.url() + "?page_size=1").json
    assert listed["total"] == 2 and len(listed["items"]) == 1
    found = lab.browser.get(lab.url() + "?q=support").json
    assert [e["id"] for e in found["items"]] == [first["id"]]
    assert lab.browser.get(lab.url() + "?status=running").json["total"] == 0
    copy = lab.browser.post(lab.url(f"/{first['id']}/duplicate"))
    assert copy.status_code == 201 and copy.json["config"] == first["config"]
    assert copy.json["name"] == "Support answers (copy)" and copy.json["status"] == "draft"
    viewer = factory.login(factory.member(lab.project, Role.viewer))
    assert viewer.get(lab.url(f"/{first['id']}")).status_code == 200
    assert viewer.patch(lab.url(f"/{first['id']}"), json={"name": "X"}).status_code == 403
    assert viewer.post(lab.url(), json={"name": "X"}).status_code == 403
    stranger = factory.signed_in()
    assert stranger.get(lab.url(f"/{first['id']}")).status_code in (403, 404)


def test_the_estimate_covers_every_iteration_and_phase(lab: Lab) -> None:
    draft = lab.draft()
    url = lab.url(f"/{draft['id']}")
    found = lab.browser.get(url + "/estimate").json
    phases = found["per_iteration"]
    assert found["complete"] and found["cases"] == 10 and found["calls_per_iteration"] == 10
    assert all(0 < p["low_micros"] < p["high_micros"] for p in phases.values()), phases
    per_high = sum(p["high_micros"] for p in phases.values())
    assert found["iterations"] == {"low": 2, "high": 3}
    assert found["high_micros"] == 3 * per_high
    assert found["low_micros"] == 2 * sum(p["low_micros"] for p in phases.values())
    # a grid of two temperatures doubles execution; more iterations scale the total
    target = {"model_id": lab.model_ids[0], "params": {}, "grid": {"temperature": [0, 1]}}
    lab.browser.patch(url, json={"models": {"targets": [target]},
                                 "stop": {"max_iterations": 6}})
    wider = lab.browser.get(url + "/estimate").json
    assert wider["calls_per_iteration"] == 20
    assert wider["per_iteration"]["execution"]["high_micros"] > phases["execution"]["high_micros"]
    assert wider["iterations"]["high"] == 6
    lab.browser.patch(url, json={"models": {"targets": []}})
    broken = lab.browser.get(url + "/estimate").json
    assert broken["high_micros"] == 0 and "models.targets" in broken["problems"]


def test_start_takes_a_version_made_by_an_import(lab: Lab, loop_begins: list[int]) -> None:
    """Test data made inside the wizard with the dataset endpoints (here an import into a
    new version) is just a dataset version id to start with."""
    with db.factory() as session:
        from assay.core.datasets.models import DatasetVersion

        version = session.get(DatasetVersion, lab.version_id)
        assert version is not None
        dataset_id = version.dataset_id
    rows = "".join(f'{{"input": {{"question": "Imported question {i}?"}}, "tags": ["new"]}}\n'
                   for i in range(4))
    imported = lab.browser.post(f"/api/projects/{lab.project_id}/datasets/{dataset_id}/import",
                                json={"format": "jsonl", "content": rows, "note": "more"})
    assert imported.status_code == 201, imported.json
    new_version = imported.json["id"]
    draft = lab.draft(data={"dataset_version_id": new_version, "holdout_fraction": 0.25,
                            "split_seed": 1})
    started = lab.browser.post(lab.url(f"/{draft['id']}/start"))
    assert started.status_code == 200, started.json
    assert started.json["dataset_version_id"] == new_version
    assert started.json["refinement_cases"] + started.json["holdout_cases"] == 14
