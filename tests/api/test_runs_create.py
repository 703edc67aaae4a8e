"""Run creation: targets with overrides, prompt versions and grids; every pre-run reason in
one 422; bad input refused with nothing written; conversation turns and trace runs planned;
the estimate over rendered messages; planning 100,000 cells (a loose sanity bound only:
the real bar is in `make bench`)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import pytest
from sqlalchemy import func, select

from assay.core.base import utcnow
from assay.core.datasets.service import create_dataset, latest_version
from assay.core.llm.models import Credential, ModelConfig
from assay.core.projects.models import Project, Role
from assay.core.prompts.service import add_version, create_prompt
from assay.core.runs.models import Output, Run, RunTarget
from assay.core.runs.planning import RunSpec, TargetSpec, plan_run
from assay.extensions import db
from assay.providers import tokens
from tests.factories import Factory, Session


@dataclass
class World:
    browser: Session
    project: Project
    credential_id: int
    model_id: int  # priced, on the fake provider, params {temperature 0, max_tokens 64}
    questions: int  # 3 cases
    templates: int  # 2 cases, input {question, audience}
    prompt_version: int  # "Answer {{question}} for {{audience}}"

    @property
    def url(self) -> str:
        return f"/api/projects/{self.project.id}/runs"


def _model(session: Any, project_id: int, credential_id: int, name: str,
           priced: bool = True, **extra: Any) -> int:
    model = ModelConfig(project_id=project_id, credential_id=credential_id, name=name,
                        model="fake-fast", params=extra.pop("params", {
                            "temperature": 0, "max_tokens": 64}),
                        input_price_per_mtok_micros=150_000 if priced else None,
                        output_price_per_mtok_micros=600_000 if priced else None, **extra)
    session.add(model)
    session.flush()
    return model.id


@pytest.fixture
def world(factory: Factory) -> World:
    owner = factory.user()
    project = factory.project(owner, "Runs")
    with db.factory() as session:
        found = session.merge(project)
        credential = Credential(project_id=project.id, kind="fake", label="fake",
                                base_url=factory.settings.fake_provider_url, config={})
        session.add(credential)
        session.flush()
        model_id = _model(session, project.id, credential.id, "Fast")
        questions = create_dataset(session, None, found, "qs", "questions", [
            {"input": {"question": f"Question {i}?"}} for i in range(3)])
        templates = create_dataset(session, None, found, "tpl", "cases", [
            {"input": {"question": "Why?", "audience": "kids"}},
            {"input": {"question": "How?", "audience": "adults"}}])
        _, version = create_prompt(session, None, found, {
            "name": "Support", "template": "Answer {{question}} for {{audience}}"})
        session.commit()
        return World(factory.login(owner), project, credential.id, model_id, questions.id,
                     templates.id, version.id)


def _rows() -> tuple[int, int, int]:
    with db.factory() as session:
        return tuple(session.scalar(select(func.count()).select_from(table)) or 0  # type: ignore[return-value]
                     for table in (Run, RunTarget, Output))


def _outputs(run_id: int) -> list[Output]:
    with db.factory() as session:
        return list(session.scalars(select(Output).where(Output.run_id == run_id)
                                    .order_by(Output.id)))


def test_a_grid_expands_into_one_target_per_combination(world: World) -> None:
    reply = world.browser.post(world.url, json={
        "dataset_id": world.questions, "repeats": 2, "budget_micros": 5_000_000,
        "alert_threshold": 0.5, "max_history_pairs": 3, "shards": 2, "concurrency": 7,
        "targets": [
            {"model_id": world.model_id, "params": {"max_tokens": 32},
             "grid": {"temperature": [0, 0.5, 1], "top_p": [0.5, 1]}},
            {"model_id": world.model_id}]})
    assert reply.status_code == 202, reply.json
    run = reply.json
    assert len(run["targets"]) == 7 and run["total"] == 3 * 7 * 2
    first = run["targets"][0]
    assert first["label"] == "Fast · temperature=0, max_tokens=32, top_p=0.5"
    assert first["params"] == {"temperature": 0, "max_tokens": 32, "top_p": 0.5}
    assert first["model_name"] == "Fast" and first["total"] == 6
    assert run["targets"][-1]["label"] == "Fast" and run["targets"][-1]["params"] == {}
    assert {t["total"] for t in run["targets"]} == {6}
    assert run["settings"] == {"repeats": 2, "concurrency": 7, "cache": True, "stream": False,
                               "timeout_s": None, "max_retries": 2, "max_history_pairs": 3,
                               "shards": 2, "rag": None}
    assert run["budget_micros"] == 5_000_000 and run["alert_threshold"] == 0.5
    assert run["dataset_id"] == world.questions and run["skipped"] == 0
    cells = _outputs(run["id"])
    assert len(cells) == 42 and {c.status for c in cells} == {"pending"}
    assert len({(c.case_id, c.target_id, c.repeat, c.turn) for c in cells}) == 42
    assert {c.repeat for c in cells} == {0, 1} and {c.turn for c in cells} == {0}
    again = world.browser.get(f"{world.url}/{run['id']}").json
    assert again["targets"] == run["targets"]
    listed = world.browser.get(world.url, query_string={"status": "pending"}).json
    assert [r["id"] for r in listed["items"]] == [run["id"]]


def test_more_than_50_targets_after_expansion_is_refused(world: World) -> None:
    reply = world.browser.post(world.url, json={"dataset_id": world.questions, "targets": [
        {"model_id": world.model_id, "grid": {"temperature": [i / 10 for i in range(11)],
                                              "max_tokens": [10, 20, 30, 40, 50]}}]})
    assert reply.status_code == 422 and reply.json["code"] == "VALIDATION_ERROR"
    assert "55" in str(reply.json["errors"]["json"]["targets"])
    assert _rows() == (0, 0, 0)


def test_every_reason_is_listed_in_one_422(world: World) -> None:
    with db.factory() as session:
        missing_key = Credential(project_id=world.project.id, kind="openai", label="nokey",
                                 base_url="https://api.openai.com", config={})
        failing = Credential(project_id=world.project.id, kind="fake", label="failing",
                             base_url="http://127.0.0.1:9", config={}, last_test_ok=False,
                             last_test_error="connection refused")
        session.add_all([missing_key, failing])
        session.flush()
        archived = _model(session, world.project.id, world.credential_id, "Old",
                          archived_at=utcnow())
        keyless = _model(session, world.project.id, missing_key.id, "Keyless")
        broken = _model(session, world.project.id, failing.id, "Broken")
        unpriced = _model(session, world.project.id, world.credential_id, "Free", priced=False)
        project = session.merge(world.project)
        _, other = create_prompt(session, None, project, {
            "name": "Other", "template": "{{question}} {{city}}", "system": "{{ tone }}"})
        project.budget_micros, project.spent_micros = 1000, 1000
        session.commit()
        other_id = other.id
    before = _rows()
    reply = world.browser.post(world.url, json={
        "dataset_id": world.templates, "budget_micros": 100, "targets": [
            {"model_id": archived, "prompt_version_id": world.prompt_version},
            {"model_id": keyless, "prompt_version_id": world.prompt_version},
            {"model_id": broken, "prompt_version_id": world.prompt_version},
            {"model_id": unpriced, "prompt_version_id": other_id},
            {"model_id": world.model_id}]})
    assert reply.status_code == 422, reply.json
    body = reply.json
    assert body["code"] == "RUN_NOT_READY" and body["message"] == "The run cannot start"
    reasons = body["errors"]["reasons"]
    codes = sorted(r["code"] for r in reasons)
    assert codes == sorted(["model_archived", "credential_missing", "credential_failing",
                            "unpriced_with_budget", "missing_variables", "needs_prompt",
                            "budget_spent"]), reasons
    by_code = {r["code"]: r for r in reasons}
    assert by_code["model_archived"]["model_id"] == archived
    assert by_code["credential_missing"]["model_id"] == keyless
    assert "connection refused" in by_code["credential_failing"]["message"]
    assert by_code["unpriced_with_budget"]["model_id"] == unpriced
    assert by_code["needs_prompt"]["target"] == 4
    missing = by_code["missing_variables"]
    assert missing["prompt_version_id"] == other_id and missing["target"] == 3
    assert missing["variables"] == ["city", "tone"] and len(missing["case_ids"]) == 2
    assert all(r["message"] for r in reasons)
    assert _rows() == before
    # the estimate tells the same reasons, and writes nothing either
    estimate = world.browser.post(world.url + "/estimate", json={
        "dataset_id": world.templates, "budget_micros": 100, "targets": [
            {"model_id": archived, "prompt_version_id": world.prompt_version},
            {"model_id": keyless, "prompt_version_id": world.prompt_version},
            {"model_id": broken, "prompt_version_id": world.prompt_version},
            {"model_id": unpriced, "prompt_version_id": other_id},
            {"model_id": world.model_id}]})
    assert estimate.status_code == 200, estimate.json
    assert sorted(r["code"] for r in estimate.json["problems"]) == codes
    assert _rows() == before


def test_no_targets_and_an_empty_dataset_are_reasons_together(world: World) -> None:
    with db.factory() as session:
        empty = create_dataset(session, None, session.merge(world.project), "empty",
                               "questions", []).id
        session.commit()
    reply = world.browser.post(world.url, json={"dataset_id": empty, "targets": []})
    assert reply.status_code == 422 and reply.json["code"] == "RUN_NOT_READY"
    assert sorted(r["code"] for r in reply.json["errors"]["reasons"]) == [
        "empty_dataset", "no_targets"]
    assert _rows() == (0, 0, 0)


def test_a_credential_whose_env_variable_is_unset_is_missing(world: World) -> None:
    with db.factory() as session:
        credential = Credential(project_id=world.project.id, kind="openai", label="env",
                                base_url="https://api.openai.com", config={},
                                secret_env="ASSAY_TEST_SURELY_UNSET_KEY")
        session.add(credential)
        session.flush()
        model = _model(session, world.project.id, credential.id, "Env")
        session.commit()
    reply = world.browser.post(world.url, json={"dataset_id": world.questions,
                                                "targets": [{"model_id": model}]})
    reasons = reply.json["errors"]["reasons"]
    assert [r["code"] for r in reasons] == ["credential_missing"]
    assert "ASSAY_TEST_SURELY_UNSET_KEY" in reasons[0]["message"]


def _bad_inputs(world: World, other_project_version: int, other_version: int) -> list[
        tuple[dict[str, Any], str]]:
    m = world.model_id
    return [
        ({"targets": [{"model_id": 99999}]}, "targets"),
        ({"targets": [{"model_id": m, "prompt_version_id": 99999}]}, "targets"),
        ({"targets": [{"model_id": m, "prompt_version_id": other_project_version}]},
         "targets"),
        ({"targets": [{"model_id": m, "params": {"max_tokens": 10**7}}]}, "targets"),
        ({"targets": [{"model_id": m, "params": {"temperature": 3}}]}, "targets"),
        ({"targets": [{"model_id": m, "params": {"nucleus": 1}}]}, "targets"),
        ({"targets": [{"model_id": m, "grid": {"nucleus": [1]}}]}, "targets"),
        ({"targets": [{"model_id": m, "grid": {"temperature": []}}]}, "targets"),
        ({"targets": [{"model_id": m, "grid": {"temperature": [0.5, 0.5]}}]}, "targets"),
        ({"targets": [{"model_id": m, "grid": {"temperature": ["hot"]}}]}, "targets"),
        ({"targets": [{"model_id": m, "grid": {"max_tokens": [10**7]}}]}, "targets"),
        ({"targets": [{"model_id": m}] * 21}, "targets"),
        ({"targets": [{"model_id": m}], "dataset_version_id": other_version},
         "dataset_version_id"),
        ({"targets": [{"model_id": m}], "repeats": 11}, "repeats"),
        ({"targets": [{"model_id": m}], "budget_micros": 0}, "budget_micros"),
        ({"targets": [{"model_id": m}], "alert_threshold": 0.01}, "alert_threshold"),
        ({"targets": [{"model_id": m}], "alert_threshold": "0.5"}, "alert_threshold"),
        ({"targets": [{"model_id": m}], "max_history_pairs": 0}, "max_history_pairs"),
        ({"targets": [{"model_id": m}], "shards": 17}, "shards"),
        ({"targets": [{"model_id": m}], "model_ids": [m]}, "model_ids"),
    ]


def test_each_bad_input_is_a_clear_error_and_writes_nothing(world: World,
                                                            factory: Factory) -> None:
    elsewhere = factory.project(factory.user(), "Elsewhere")
    with db.factory() as session:
        _, foreign = create_prompt(session, None, session.merge(elsewhere), {
            "name": "Foreign", "template": "{{question}}"})
        other_version = latest_version(session, world.templates).id
        session.commit()
        foreign_id = foreign.id
    with db.factory() as session:  # anthropic's narrower temperature range is applied
        anthropic = Credential(project_id=world.project.id, kind="anthropic", label="a",
                               base_url="https://api.anthropic.com", config={})
        session.add(anthropic)
        session.flush()
        claude = _model(session, world.project.id, anthropic.id, "Claude", params={})
        session.commit()
    cases = [*_bad_inputs(world, foreign_id, other_version),
             ({"targets": [{"model_id": claude, "params": {"temperature": 1.5}}]}, "targets"),
             ({"targets": [{"model_id": claude, "grid": {"seed": [1, 2]}}]}, "targets")]
    for body, field in cases:
        for tail in ("", "/estimate"):
            reply = world.browser.post(world.url + tail,
                                       json={"dataset_id": world.questions, **body})
            assert reply.status_code == 422, (body, reply.json)
            assert reply.json["code"] == "VALIDATION_ERROR", (body, reply.json)
            assert field in reply.json["errors"]["json"], (body, reply.json)
            assert reply.json["message"]
    assert _rows() == (0, 0, 0)


def test_a_trace_dataset_takes_no_targets(world: World) -> None:
    with db.factory() as session:
        traces = create_dataset(session, None, session.merge(world.project), "tr", "traces", [
            {"trace": {"messages": [{"role": "user", "content": "hi"}]}}]).id
        session.commit()
    reply = world.browser.post(world.url, json={"dataset_id": traces,
                                                "targets": [{"model_id": world.model_id}]})
    assert reply.status_code == 422 and "targets" in reply.json["errors"]["json"]
    assert _rows() == (0, 0, 0)


def test_a_trace_run_is_complete_with_the_recorded_replies(world: World) -> None:
    with db.factory() as session:
        traces = create_dataset(session, None, session.merge(world.project), "tr", "traces", [
            {"trace": {"messages": [
                {"role": "user", "content": "Weather?"},
                {"role": "assistant", "content": None, "tool_calls": [{"id": "c"}]},
                {"role": "tool", "tool_call_id": "c", "content": "3C"},
                {"role": "assistant", "content": "It is 3C"}]}},
            {"trace": {"messages": [{"role": "user", "content": "Silence"}]}}]).id
        session.commit()
    reply = world.browser.post(world.url, json={"dataset_id": traces, "targets": [],
                                                "repeats": 3})
    assert reply.status_code == 202, reply.json
    run = reply.json
    assert run["status"] == "completed" and run["finished_at"] is not None
    assert (run["total"], run["succeeded"], run["failed"]) == (2, 2, 0)
    [target] = run["targets"]
    assert target["model_id"] is None and target["model_name"] is None
    assert target["label"] == "Recorded trace" and target["total"] == target["succeeded"] == 2
    assert run["settings"]["repeats"] == 1
    cells = _outputs(run["id"])
    assert [(c.status, c.text, c.cost_micros, c.tokens_in, c.tokens_out) for c in cells] == [
        ("succeeded", "It is 3C", 0, 0, 0), ("succeeded", "", 0, 0, 0)]
    estimate = world.browser.post(world.url + "/estimate",
                                  json={"dataset_id": traces, "targets": []}).json
    assert estimate["calls"] == 0 and estimate["problems"] == []
    assert estimate["per_target"][0]["label"] == "Recorded trace"


def test_conversations_plan_one_cell_per_user_turn(world: World) -> None:
    def talk(turns: int) -> dict[str, Any]:
        messages: list[dict[str, str]] = []
        for i in range(turns):
            messages += [{"role": "user", "content": f"u{i}"},
                         {"role": "assistant", "content": f"a{i}"}]
        return {"input": {"messages": messages[:-1]},
                "expected": {"turns": [f"t{i}" for i in range(turns)]}}

    with db.factory() as session:
        chats = create_dataset(session, None, session.merge(world.project), "chats",
                               "conversations", [talk(2), talk(3)]).id
        session.commit()
    body = {"dataset_id": chats, "repeats": 2, "max_history_pairs": 1,
            "targets": [{"model_id": world.model_id, "grid": {"temperature": [0, 1]}}]}
    reply = world.browser.post(world.url, json=body)
    assert reply.status_code == 202, reply.json
    run = reply.json
    assert run["total"] == (2 + 3) * 2 * 2 and [t["total"] for t in run["targets"]] == [10, 10]
    cells = _outputs(run["id"])
    assert len(cells) == 20
    by_case: dict[int, set[int]] = {}
    for cell in cells:
        by_case.setdefault(cell.case_id, set()).add(cell.turn)
    assert sorted(map(sorted, by_case.values())) == [[0, 1], [0, 1, 2]]
    estimate = world.browser.post(world.url + "/estimate", json=body).json
    assert estimate["calls"] == 20 and [t["calls"] for t in estimate["per_target"]] == [10, 10]


def test_estimate_counts_the_rendered_messages_per_target(world: World) -> None:
    with db.factory() as session:
        found = session.merge(world.project)
        from assay.core.prompts.models import Prompt

        prompt = session.scalar(select(Prompt).where(Prompt.project_id == found.id))
        assert prompt is not None
        longer = add_version(session, None, found, prompt, {
            "template": "Answer {{question}} for {{audience}}", "system": "Be brief.",
            "few_shots": [{"input": "Hi", "output": "Hello"}], "note": "Longer prompt"}).id
        session.commit()
    reply = world.browser.post(world.url + "/estimate", json={
        "dataset_id": world.templates, "repeats": 2, "targets": [
            {"model_id": world.model_id, "prompt_version_id": world.prompt_version},
            {"model_id": world.model_id, "prompt_version_id": longer,
             "params": {"max_tokens": 100}}]})
    assert reply.status_code == 200, reply.json
    body = reply.json
    plain, rich = body["per_target"]
    rendered = [[{"role": "user", "content": "Answer Why? for kids"}],
                [{"role": "user", "content": "Answer How? for adults"}]]
    expected = sum(tokens.count_messages(m, "fake-fast") for m in rendered) * 2
    assert plain["input_tokens"] == expected and plain["calls"] == 4
    assert rich["input_tokens"] > expected
    assert plain["output_tokens_high"] == 4 * 64 and rich["output_tokens_high"] == 4 * 100
    assert plain["label"] == "Fast · Support v1"
    assert rich["label"] == "Fast · Support v2 · max_tokens=100"
    assert body["calls"] == 8 and body["problems"] == [] and body["complete"] is True
    assert body["low_micros"] == plain["low_micros"] + rich["low_micros"]


def test_an_older_dataset_version_can_be_pinned(world: World) -> None:
    with db.factory() as session:
        first = latest_version(session, world.questions).id
    added = world.browser.post(f"/api/projects/{world.project.id}/datasets/{world.questions}"
                               "/cases", json={"input": {"question": "New?"}})
    assert added.status_code == 201, added.json
    reply = world.browser.post(world.url, json={
        "dataset_id": world.questions, "dataset_version_id": first,
        "targets": [{"model_id": world.model_id}]})
    assert reply.status_code == 202 and reply.json["dataset_version_id"] == first
    assert reply.json["total"] == 3
    latest = world.browser.post(world.url, json={
        "dataset_id": world.questions, "targets": [{"model_id": world.model_id}]}).json
    assert latest["total"] == 4 and latest["dataset_version_id"] != first


def test_viewers_estimate_but_cannot_start(world: World, factory: Factory) -> None:
    viewer = factory.login(factory.member(world.project, Role.viewer))
    body = {"dataset_id": world.questions, "targets": [{"model_id": world.model_id}]}
    assert viewer.post(world.url + "/estimate", json=body).status_code == 200
    assert viewer.post(world.url, json=body).status_code == 403
    assert _rows() == (0, 0, 0)


def test_planning_100k_cells_is_quick(world: World) -> None:
    """A sanity bound only (10 s): the 3 s bar is measured by `make bench`."""
    with db.factory() as session:
        project = session.merge(world.project)
        dataset = create_dataset(session, None, project, "big", "questions", [
            {"input": {"question": f"Question {i}?"}} for i in range(2000)])
        session.commit()
        spec = RunSpec(dataset_id=dataset.id, targets=(TargetSpec(
            world.model_id, grid={"temperature": [i / 25 for i in range(50)]}),))
        started = time.perf_counter()
        run = plan_run(session, None, project, spec)
        session.commit()
        elapsed = time.perf_counter() - started
        run_id = run.id
        assert session.scalar(select(func.count()).select_from(Output).where(
            Output.run_id == run_id)) == 100_000
        assert run.total == 100_000
    assert elapsed < 10, f"planning 100,000 cells took {elapsed:.1f} s"
    print(f"planned 100,000 cells in {elapsed:.2f} s")


def _judge_scorer(world: World, priced: bool) -> tuple[int, int]:
    """(scorer id, judge model id): an LLM judge scorer judging with a model of its own."""
    with db.factory() as session:
        judge = _model(session, world.project.id, world.credential_id, "Judge", priced=priced,
                       params={"max_tokens": 300})
        session.commit()
    reply = world.browser.post(f"/api/projects/{world.project.id}/scorers", json={
        "name": "Judged", "kind": "llm_judge", "params": {"judges": ["Judge"], "rubric": {
            "criteria": [{"name": name, "description": f"{name} is fine.", "weight": 0.5,
                          "scale": "1-5"} for name in ("Accuracy", "Clarity")]}}})
    assert reply.status_code == 201, reply.json
    return reply.json["id"], judge


def test_the_estimate_includes_the_judges(world: World) -> None:
    scorer_id, _ = _judge_scorer(world, priced=True)
    body = {"dataset_id": world.questions, "repeats": 2,
            "targets": [{"model_id": world.model_id}]}
    bare = world.browser.post(world.url + "/estimate", json=body).json
    judged = world.browser.post(world.url + "/estimate",
                                json={**body, "scorer_ids": [scorer_id]}).json
    assert bare["judge_calls"] == bare["judge_high_micros"] == 0
    assert judged["judge_calls"] == 6  # one judge per reply: 3 cases x 2 repeats
    # each verdict may be 300 tokens at 0.6 $/Mtok: 180 micro-dollars, on a prompt of its own
    assert 6 * 180 < judged["judge_high_micros"] < 6 * 600
    assert 0 < judged["judge_low_micros"] < judged["judge_high_micros"]
    assert judged["high_micros"] == bare["high_micros"] + judged["judge_high_micros"]
    assert judged["low_micros"] == bare["low_micros"] + judged["judge_low_micros"]
    assert judged["per_target"] == bare["per_target"] and judged["complete"] is True


def test_an_unpriced_judge_refuses_a_budget(world: World) -> None:
    scorer_id, judge = _judge_scorer(world, priced=False)
    body = {"dataset_id": world.questions, "targets": [{"model_id": world.model_id}],
            "scorer_ids": [scorer_id]}
    estimate = world.browser.post(world.url + "/estimate", json=body).json
    assert estimate["complete"] is False and estimate["unpriced_models"] == [judge]
    assert estimate["problems"] == []  # no budget: nothing to keep
    refused = world.browser.post(world.url, json={**body, "budget_micros": 10_000})
    assert refused.status_code == 422, refused.json
    reasons = refused.json["errors"]["reasons"]
    assert [(r["code"], r["model_id"]) for r in reasons] == [("unpriced_with_budget", judge)]
    assert "Judge model Judge has no price" in reasons[0]["message"]
    assert _rows() == (0, 0, 0)
