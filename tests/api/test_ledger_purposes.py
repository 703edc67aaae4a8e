"""One ledger for every paid call, per purpose of the calls made outside runs (generation,
scorer trials, critiques, AI assist, EvalArena's judge runs, connection tests and model
lists), each made through the API as a user makes it: what the fake provider itself counts
(replies it would bill with their tokens, and the model lists it served) equals what the
ledger recorded for that purpose, credited to the model that made the call; with the
project's cap used up, the call is refused with a clear error and nothing reaches the
provider. Before, generation was not held against the cap and connection tests were not
recorded at all. (Runs, judges, judge mode and pairwise: tests/engine/test_ledger.py.)"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select, update

from assay.core.llm.models import Credential, ModelConfig
from assay.core.projects.models import Project
from assay.core.reports.models import SpendDay
from assay.extensions import db
from assay.jobs.generation import run_job
from assay.providers.fake import FakeProviderThread
from assay.runtime import current
from tests.api.arena_helpers import attempt, fixture, script_judge, seed
from tests.api.helpers_experiments import ASSIST_MODEL, ASSIST_SCRIPTS
from tests.api.test_critiques import CONTRACT, CRITIC_MODEL, CRITIQUE, RUBRIC
from tests.engine.test_providers_engine import fake  # noqa: F401
from tests.factories import Factory, Session

PRICE = {"input_price_per_mtok_micros": 1_000_000, "output_price_per_mtok_micros": 2_000_000}
JUDGE_MODEL = "ledger-judge"
VERDICT = {"criteria": {"Accuracy": {"score": 4, "rationale": "Right."},
                        "Clarity": {"score": 5, "rationale": "Clear."}},
           "summary": "Good.", "confidence": 0.75}
JUDGE_PARAMS = {"rubric": {"criteria": [
    {"name": "Accuracy", "description": "The answer is right.", "weight": 0.5, "scale": "1-5"},
    {"name": "Clarity", "description": "The answer is clear.", "weight": 0.5, "scale": "1-5"}]},
    "judges": ["Judge"]}
CID = "refund-verification"
KEY = "sk-good-key-12345678"
DEPLOYMENT = "ledger-deployment"
SCRIPTS = [{"model": JUDGE_MODEL, "pattern": "", "reply": json.dumps(VERDICT)},
           {"model": CRITIC_MODEL, "pattern": "", "reply": json.dumps(CRITIQUE)},
           *ASSIST_SCRIPTS]


@dataclass
class World:
    browser: Session
    project_id: int
    fake_url: str
    models: dict[str, int]  # name -> model config id

    @property
    def base(self) -> str:
        return f"/api/projects/{self.project_id}"


def _models(project_id: int, fake_url: str, names: dict[str, str]) -> dict[str, int]:
    with db.factory() as session:
        credential = Credential(project_id=project_id, kind="fake", label="Ledger account",
                                base_url=fake_url, config={})
        session.add(credential)
        session.flush()
        rows = {name: ModelConfig(project_id=project_id, credential_id=credential.id,
                                  name=name, model=model, params={"max_tokens": 500}, **PRICE)
                for name, model in names.items()}
        session.add_all(rows.values())
        session.commit()
        return {name: row.id for name, row in rows.items()}


@pytest.fixture
def world(factory: Factory, fake: FakeProviderThread) -> World:  # noqa: F811
    config = httpx.get(f"{fake.url}/_fake/config").json()
    httpx.post(f"{fake.url}/_fake/config", json={"scripts": [*SCRIPTS, *config["scripts"]]}
               ).raise_for_status()
    owner = factory.user()
    project = factory.project(owner, "Ledger")
    models = _models(project.id, fake.url, {"Judge": JUDGE_MODEL, "Critic": CRITIC_MODEL,
                                            "Assistant": ASSIST_MODEL, "Writer": "fake-fast"})
    return World(factory.login(owner), project.id, fake.url, models)


# --- each purpose, as the user calls it: (the response, the model credited) ---------------

def _generation(w: World) -> tuple[Any, int | None]:
    reply = w.browser.post(f"{w.base}/generation/questions", json={
        "model_id": w.models["Writer"], "count": 30, "topic": "tides"})
    if reply.status_code == 202:
        asyncio.run(run_job(current(), reply.json["id"]))
        reply = w.browser.get(f"{w.base}/generation/{reply.json['id']}")
        assert reply.json["status"] == "succeeded", reply.json
    return reply, w.models["Writer"]


def _trial(w: World) -> tuple[Any, int | None]:
    return w.browser.post(f"{w.base}/scorers/try", json={
        "kind": "llm_judge", "params": JUDGE_PARAMS,
        "sample": {"output": "Paris is the capital of France.",
                   "input": {"question": "What is the capital of France?"}}}), w.models["Judge"]


def _critique(w: World) -> tuple[Any, int | None]:
    return w.browser.post(f"{w.base}/critiques", json={
        "rubric_text": RUBRIC, "contract": CONTRACT, "judge": "Critic"}), w.models["Critic"]


def _assist(w: World) -> tuple[Any, int | None]:
    return w.browser.post(f"{w.base}/assist/objectives", json={
        "model_id": w.models["Assistant"], "hints": "support replies for a shop"}), \
        w.models["Assistant"]


def _arena(w: World) -> tuple[Any, int | None]:
    seed()
    judge = script_judge(w.fake_url, w.project_id, CID)
    with db.factory() as session:
        session.execute(update(ModelConfig).where(
            ModelConfig.project_id == w.project_id, ModelConfig.name == judge).values(**PRICE))
        session.commit()
        judge_id = session.scalar(select(ModelConfig.id).where(
            ModelConfig.project_id == w.project_id, ModelConfig.name == judge))
    reply = attempt(w.browser, CID, tab="judge", text=fixture(CID, "reference.judge.txt"),
                    set="dev", project_id=w.project_id, judge=judge)
    return reply, judge_id


def _connection(w: World) -> tuple[Any, int | None]:
    """Saving tests the connection, the test button tests it again, discovery lists the
    models (free GETs), and an Azure deployment's test is a 1-token chat (paid)."""
    saved = w.browser.post(f"{w.base}/credentials", json={
        "kind": "fake", "label": "Tested", "base_url": w.fake_url, "api_key": KEY})
    assert saved.status_code == 201 and saved.json["last_test_ok"] is True, saved.json
    one = f"{w.base}/credentials/{saved.json['id']}"
    assert w.browser.post(f"{one}/test").json["ok"] is True
    assert w.browser.get(f"{one}/discover").status_code == 200
    azure = w.browser.post(f"{w.base}/credentials", json={
        "kind": "azure_openai", "label": "Azure", "base_url": w.fake_url, "api_key": KEY,
        "config": {"api_version": "2024-10-21", "deployment": DEPLOYMENT}})
    assert azure.status_code == 201, azure.json
    return w.browser.post(f"{w.base}/credentials/{azure.json['id']}/test"), None


PURPOSES: dict[str, Callable[[World], tuple[Any, int | None]]] = {
    "generation": _generation, "scorer_trials": _trial, "critique": _critique,
    "assist": _assist, "arena_judge": _arena, "connection_test": _connection}


# --- what the provider counted, what the ledger holds --------------------------------------

def _stats(url: str) -> dict[str, Any]:
    return dict(httpx.get(f"{url}/_fake/stats").json())


def _sent(before: dict[str, Any], after: dict[str, Any]) -> tuple[int, int, int]:
    """(calls, tokens in, tokens out) the provider would bill between two readings, each
    model list it served counted as a call (free: no tokens)."""
    return (after["answered"] - before["answered"] + after["listed"] - before["listed"],
            after["tokens_in"] - before["tokens_in"], after["tokens_out"] - before["tokens_out"])


def _ledger(project_id: int) -> dict[tuple[str, int], tuple[int, int, int, int]]:
    """(purpose, model key) -> (calls, tokens in, tokens out, spent) on the project's ledger."""
    with db.factory() as session:
        return {(kind, int(m)): (int(c), int(i), int(o), int(s))
                for kind, m, c, i, o, s in session.execute(
            select(SpendDay.kind, SpendDay.model_key, func.sum(SpendDay.calls),
                   func.sum(SpendDay.tokens_in), func.sum(SpendDay.tokens_out),
                   func.sum(SpendDay.spent_micros))
            .where(SpendDay.project_id == project_id)
            .group_by(SpendDay.kind, SpendDay.model_key))}


def _money(project_id: int) -> tuple[int, int]:
    with db.factory() as session:
        project = session.get(Project, project_id)
        assert project is not None
        return project.spent_micros, project.reserved_micros


@pytest.mark.parametrize("purpose", list(PURPOSES))
def test_what_the_provider_counted_is_on_the_ledger(world: World, purpose: str) -> None:
    before = _stats(world.fake_url)
    reply, model_id = PURPOSES[purpose](world)
    after = _stats(world.fake_url)
    assert reply.status_code in (200, 201), reply.json
    calls, tokens_in, tokens_out = _sent(before, after)
    assert calls > 0 and tokens_in > 0 and tokens_out > 0
    ledger = _ledger(world.project_id)
    # every call under this purpose, by the model that made it (no model: a credential's)
    assert set(ledger) == {(purpose, model_id or 0)}
    assert ledger[purpose, model_id or 0][:3] == (calls, tokens_in, tokens_out)
    spent, reserved = _money(world.project_id)
    assert reserved == 0 and spent == ledger[purpose, model_id or 0][3]
    assert (spent > 0) is (model_id is not None)  # a credential's test has no price
    report = world.browser.get(f"{world.base}/reports/costs").json
    kinds = {k["kind"]: k for k in report["total"]["by_kind"]}
    assert (kinds[purpose]["calls"], kinds[purpose]["tokens_in"],
            kinds[purpose]["tokens_out"], kinds[purpose]["spent_micros"]) == \
        ledger[purpose, model_id or 0]
    assert report["total"]["spent_micros"] == spent
    [by_model] = report["by_model"]
    assert (by_model["model_id"], by_model["tokens_in"], by_model["tokens_out"]) == (
        model_id, tokens_in, tokens_out)
    tokens = world.browser.get(f"{world.base}/reports/tokens").json
    assert [(u["model_id"], u["tokens_in"], u["tokens_out"]) for u in tokens["items"]] == [
        (model_id, tokens_in, tokens_out)]
    assert tokens["by_kind"] == report["total"]["by_kind"]
    assert {k["kind"]: (k["tokens_in"], k["tokens_out"]) for k in tokens["by_kind"]
            if k["tokens_in"] or k["tokens_out"]} == {purpose: (tokens_in, tokens_out)}


@pytest.mark.parametrize("purpose", list(PURPOSES))
def test_with_the_cap_used_up_nothing_is_sent(world: World, purpose: str) -> None:
    with db.factory() as session:
        session.execute(update(Project).where(Project.id == world.project_id)
                        .values(budget_micros=0))
        session.commit()
    before = _stats(world.fake_url)
    reply, _ = PURPOSES[purpose](world) if purpose != "generation" else (
        world.browser.post(f"{world.base}/generation/questions", json={
            "model_id": world.models["Writer"], "count": 30, "topic": "tides"}), None)
    after = _stats(world.fake_url)
    if purpose == "connection_test":  # the free model lists still answer; the paid chat not
        assert reply.status_code == 200 and reply.json["ok"] is False
        assert reply.json["error"].startswith("Not tested: The budget has 0.0000 USD left")
        assert after["answered"] == before["answered"]
        assert after["listed"] - before["listed"] == 3
    else:
        assert reply.status_code in (409, 422), reply.json
        assert reply.json["code"] == "BUDGET_EXCEEDED" and "budget" in reply.json["message"]
        assert (after["total"], after["listed"]) == (before["total"], before["listed"])
        assert _ledger(world.project_id) == {}
    assert _money(world.project_id) == (0, 0)


def test_a_generation_over_the_cap_by_the_time_it_runs_sends_nothing(world: World) -> None:
    """The worker holds the job's most cost before its first batch: a cap lowered after
    the job was queued fails it with the reason, and the provider sees nothing."""
    reply = world.browser.post(f"{world.base}/generation/questions", json={
        "model_id": world.models["Writer"], "count": 30, "topic": "tides"})
    assert reply.status_code == 202, reply.json
    with db.factory() as session:
        session.execute(update(Project).where(Project.id == world.project_id)
                        .values(budget_micros=1))
        session.commit()
    before = _stats(world.fake_url)
    asyncio.run(run_job(current(), reply.json["id"]))
    assert _stats(world.fake_url)["total"] == before["total"]
    job = world.browser.get(f"{world.base}/generation/{reply.json['id']}").json
    assert job["status"] == "failed" and job["error"].startswith("The budget has 0.0000")
    assert "this generation may cost up to" in job["error"]
    assert _money(world.project_id) == (0, 0) and _ledger(world.project_id) == {}
