"""Pairwise comparisons of a run's targets: the comparison job asks a scripted judge on the
fake provider about each pair of outputs in both orders, records one row per pair, with
the position bias of a judge that always picks the response shown first, compares failed
pairs again, and the summary rates the targets in the judge's order."""

from __future__ import annotations

import json
from dataclasses import dataclass

import httpx
from scipy.stats import binomtest
from sqlalchemy import select

from assay.core.auth.models import User
from assay.core.llm.models import Credential, ModelConfig
from assay.core.projects.models import Project
from assay.core.runs.models import Output, RunTarget
from assay.core.runs.planning import RunSpec, TargetSpec, plan_run
from assay.core.scoring.models import Comparison
from assay.core.scoring.service import create_scorer
from assay.extensions import db
from assay.jobs.comparisons import compare_targets
from assay.jobs.runs import execute_run
from assay.providers.fake import FakeProviderThread
from assay.settings import Settings
from tests.engine.test_providers_engine import configure, fake, setup  # noqa: F401
from tests.factories import Factory

MODELS = ("fake-alpha", "fake-beta", "fake-gamma")  # the judge prefers them in this order
CASES = 4


def _winner(winner: str) -> str:
    return json.dumps({"winner": winner, "rationale": f"Response {winner} is better."})


def _first(model: str, shown: int) -> str:
    """The judge prompt shows `model`'s output as Response `shown`."""
    return f'name="Response {shown}">\\s*{model} says'


# First match wins: case 0 always goes to Response 1 (position bias); otherwise alpha
# beats anyone and beta beats gamma, whichever is shown first.
SCRIPTS = [
    {"model": "fake-judge", "pattern": "question number 0 about", "reply": _winner("1")},
    {"model": "fake-judge", "pattern": _first("fake-alpha", 1), "reply": _winner("1")},
    {"model": "fake-judge", "pattern": _first("fake-alpha", 2), "reply": _winner("2")},
    {"model": "fake-judge", "pattern": _first("fake-beta", 1), "reply": _winner("1")},
    {"model": "fake-judge", "pattern": "", "reply": _winner("2")},
]
BROKEN = {"model": "fake-judge", "pattern": "question number 3 about", "reply": "no JSON"}


@dataclass
class World:
    owner: User
    project_id: int
    run_id: int
    targets: list[int]  # in MODELS order
    version_id: int  # of the pairwise scorer


def _world(factory: Factory, settings: Settings,
           fake: FakeProviderThread) -> World:  # noqa: F811
    """A run of the three models over CASES questions, executed, and a pairwise scorer."""
    owner = factory.user()
    s = setup(factory, settings, fake, cases=CASES, owner=owner)
    with db.factory() as session:
        credential = session.scalar(select(Credential).where(
            Credential.project_id == s.project.id))
        assert credential is not None
        models = [ModelConfig(project_id=s.project.id, credential_id=credential.id,
                              name=name, model=name, params={"max_tokens": 2000})
                  for name in (*MODELS, "Judge")]
        models[-1].model = "fake-judge"
        session.add_all(models)
        session.flush()
        project = session.get(Project, s.project.id)
        assert project is not None
        _, version = create_scorer(session, None, project, {
            "name": "pairwise", "kind": "pairwise_judge", "params": {"judges": ["Judge"]}})
        run = plan_run(session, None, project, RunSpec(
            dataset_id=s.dataset_id, targets=tuple(TargetSpec(m.id) for m in models[:3]),
            cache=False))
        session.commit()
        run_id, version_id = run.id, version.id
        targets = list(session.scalars(select(RunTarget.id).where(
            RunTarget.run_id == run_id).order_by(RunTarget.position)))
    execute_run(run_id)
    return World(owner, s.project.id, run_id, targets, version_id)


def _rows(run_id: int) -> list[Comparison]:
    with db.factory() as session:
        return list(session.scalars(select(Comparison).where(Comparison.run_id == run_id)
                                    .order_by(Comparison.case_id, Comparison.id)))


def test_comparisons_record_position_bias_and_rate_the_targets(
        factory: Factory, settings: Settings, fake: FakeProviderThread) -> None:  # noqa: F811
    configure(fake, latency_ms=0, scripts=[BROKEN, *SCRIPTS])
    world = _world(factory, settings, fake)
    run_id, version_id = world.run_id, world.version_id
    alpha, beta, gamma = world.targets
    calls_before = httpx.get(f"{fake.url}/_fake/stats").json()["requests"].get("fake-judge", 0)

    assert compare_targets(run_id, version_id, alpha, beta) == CASES
    judge_calls = httpx.get(f"{fake.url}/_fake/stats").json()["requests"]["fake-judge"]
    assert judge_calls - calls_before == 2 * CASES  # both orders of every pair
    rows = _rows(run_id)
    with db.factory() as session:
        sides = dict(session.execute(select(Output.id, Output.target_id).where(
            Output.run_id == run_id)).all())
    assert [(sides[r.output_a_id], sides[r.output_b_id]) for r in rows] == [(alpha, beta)] * 4
    assert all(r.judge_model == "Judge" and r.scorer_version_id == version_id for r in rows)
    biased, *agreed, broken = rows  # by case: 0 always "Response 1", 3 gets no JSON
    assert biased.winner is None and biased.position_bias and biased.orders == ["a", "b"]
    assert biased.error is None and "A shown as Response 1" in biased.rationale
    assert [(r.winner, r.position_bias, r.orders, r.error) for r in agreed] == \
        [("a", False, ["a", "a"], None)] * 2
    assert broken.winner is None and not broken.position_bias
    assert broken.error is not None and "reply rejected" in broken.error

    # Nothing judged is asked again; the failed pair is, and its row replaced.
    configure(fake, latency_ms=0, scripts=SCRIPTS)
    assert compare_targets(run_id, version_id, alpha, beta) == 1
    assert compare_targets(run_id, version_id, beta, alpha) == 0  # either direction
    again = _rows(run_id)
    assert [r.id for r in again[:3]] == [r.id for r in rows[:3]]
    assert len(again) == CASES
    assert again[3].winner == "a" and again[3].error is None

    browser = factory.login(world.owner)
    url = f"/api/projects/{world.project_id}/runs/{run_id}/comparisons/summary"
    partial = browser.get(url).json
    assert [(r["target_id"], r["flags"]) for r in partial["ratings"]["items"]][2] == \
        (gamma, ["no_games"])

    assert compare_targets(run_id, version_id, beta, gamma) == CASES
    summary = browser.get(url).json
    pairs = {(p["target_a_id"], p["target_b_id"]): p for p in summary["pairs"]}
    assert set(pairs) == {(alpha, beta), (beta, gamma)}
    for pair in pairs.values():
        assert (pair["a_wins"], pair["b_wins"], pair["ties"], pair["disagreements"],
                pair["errors"], pair["comparisons"]) == (3, 0, 0, 1, 0, 4)
        assert pair["judge"] == "Judge" and pair["scorer_version_id"] == version_id
        reference = binomtest(1, 4).proportion_ci(0.95, method="wilson")
        bias = pair["position_bias"]
        assert (bias["k"], bias["n"], bias["estimate"]) == (1, 4, 0.25)
        assert abs(bias["low"] - reference.low) < 1e-12
        assert abs(bias["high"] - reference.high) < 1e-12
    ratings = summary["ratings"]
    assert ratings["available"] and ratings["n_comparisons"] == 8
    items = ratings["items"]
    assert [i["target_id"] for i in items] == [alpha, beta, gamma]
    assert [(i["wins"], i["ties"], i["losses"]) for i in items] == \
        [(3, 1, 0), (3, 2, 3), (0, 1, 3)]  # a disagreement counts as a tie
    assert items[0]["rating"] > items[1]["rating"] > items[2]["rating"]
    assert all(i["low"] <= i["rating"] <= i["high"] for i in items)

