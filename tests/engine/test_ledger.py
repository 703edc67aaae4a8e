"""One ledger for every paid call (DESIGN §9 "one ledger"): for each purpose, what the
fake provider itself counts (replies it would bill, their tokens) equals what the ledger
recorded for that purpose, credited to the model that made the call; over a cap, nothing
is sent. Before the ledger, pairwise comparisons of targets and of runs were paid and not
recorded nor capped, and judges were credited to the judged model without their tokens."""

from __future__ import annotations

import json
from typing import Any

import httpx
from sqlalchemy import func, select, update

from assay.core.llm.models import Credential, ModelConfig
from assay.core.projects.models import Project
from assay.core.reports.costs import cost_report
from assay.core.reports.models import SpendDay, TargetDay
from assay.core.reports.scope import ReportFilter
from assay.core.runs.models import Run, RunTarget
from assay.core.runs.planning import RunSpec, TargetSpec, plan_run
from assay.core.scoring.judge_mode import JudgingSpec, start_judging
from assay.core.scoring.service import create_scorer
from assay.extensions import db
from assay.jobs.comparisons import compare_targets
from assay.jobs.runs import execute_run
from assay.jobs.scoring import score_run
from assay.providers.fake import FakeProviderThread
from assay.settings import Settings
from tests.engine.test_providers_engine import configure, fake, setup  # noqa: F401
from tests.factories import Factory

CASES = 3
from tests.engine.test_cost_invariant import RUBRIC, VERDICT  # noqa: E402

PAIR = json.dumps({"winner": "1", "rationale": "Response 1 is better."})
SCRIPTS = [{"model": "fake-judge", "pattern": "Response 1", "reply": PAIR},
           {"model": "fake-judge", "pattern": "", "reply": VERDICT}]
PRICE = {"input_price_per_mtok_micros": 200_000, "output_price_per_mtok_micros": 800_000}


def _billed(fake: FakeProviderThread) -> dict[str, dict[str, int]]:  # noqa: F811
    return dict(httpx.get(f"{fake.url}/_fake/stats").json()["billed"])


def _delta(after: dict[str, dict[str, int]], before: dict[str, dict[str, int]],
           model: str) -> tuple[int, int, int]:
    a, b = after.get(model, {}), before.get(model, {})
    return tuple(a.get(k, 0) - b.get(k, 0)  # type: ignore[return-value]
                 for k in ("calls", "tokens_in", "tokens_out"))


def _ledger(project_id: int, kind: str) -> dict[int, tuple[int, int, int, int]]:
    """model key -> (calls, tokens in, tokens out, spent) the ledger holds for `kind`."""
    with db.factory() as session:
        return {m: (int(c), int(i), int(o), int(s)) for m, c, i, o, s in session.execute(
            select(SpendDay.model_key, func.sum(SpendDay.calls), func.sum(SpendDay.tokens_in),
                   func.sum(SpendDay.tokens_out), func.sum(SpendDay.spent_micros))
            .where(SpendDay.project_id == project_id, SpendDay.kind == kind)
            .group_by(SpendDay.model_key))}


def _world(factory: Factory, settings: Settings, fake: FakeProviderThread  # noqa: F811
           ) -> dict[str, Any]:
    s = setup(factory, settings, fake, cases=CASES)
    with db.factory() as session:
        credential = session.scalar(select(Credential).where(
            Credential.project_id == s.project.id))
        assert credential is not None
        models = {name: ModelConfig(project_id=s.project.id, credential_id=credential.id,
                                    name=name, model=name, params={"max_tokens": 200}, **PRICE)
                  for name in ("fake-alpha", "fake-beta", "fake-judge")}
        session.add_all(models.values())
        session.flush()
        project = session.get(Project, s.project.id)
        assert project is not None
        pointwise = create_scorer(session, None, project, {
            "name": "judge", "kind": "llm_judge",
            "params": {"rubric": RUBRIC, "judges": ["fake-judge"]}})[0].id
        _, pairwise = create_scorer(session, None, project, {
            "name": "pairwise", "kind": "pairwise_judge", "params": {"judges": ["fake-judge"]}})
        runs = [plan_run(session, None, project, RunSpec(
            dataset_id=s.dataset_id, targets=(TargetSpec(models["fake-alpha"].id),
                                              TargetSpec(models["fake-beta"].id)),
            scorer_ids=(pointwise,), cache=False)).id for _ in range(2)]
        session.commit()
        ids = {name: m.id for name, m in models.items()}
        targets = {run: list(session.scalars(select(RunTarget.id).where(
            RunTarget.run_id == run).order_by(RunTarget.position))) for run in runs}
    return {"project_id": s.project.id, "runs": runs, "targets": targets, "models": ids,
            "pairwise": pairwise.id, "dataset_id": s.dataset_id}


def test_every_purpose_on_the_ledger_equals_what_the_provider_billed(
        factory: Factory, settings: Settings, fake: FakeProviderThread) -> None:  # noqa: F811
    configure(fake, latency_ms=0, scripts=SCRIPTS)
    w = _world(factory, settings, fake)
    project_id, (first, second) = w["project_id"], w["runs"]
    judge = w["models"]["fake-judge"]

    before = _billed(fake)
    execute_run(first)  # its cells (target_days) and their judges ("judges")
    after = _billed(fake)
    with db.factory() as session:
        cells = session.execute(select(func.sum(TargetDay.tokens_in),
                                       func.sum(TargetDay.tokens_out))
                                .where(TargetDay.target_id.in_(w["targets"][first]))).one()
    called = [_delta(after, before, m) for m in ("fake-alpha", "fake-beta")]
    assert (sum(c[1] for c in called), sum(c[2] for c in called)) == tuple(cells)
    assert sum(c[0] for c in called) == 2 * CASES
    assert _delta(after, before, "fake-judge") == _ledger(project_id, "judges")[judge][:3]
    assert _ledger(project_id, "judges")[judge][0] == 2 * CASES  # by the judge, not the judged

    alpha, beta = w["targets"][first]
    before = _billed(fake)
    assert compare_targets(first, w["pairwise"], alpha, beta) == CASES
    after = _billed(fake)
    assert _delta(after, before, "fake-judge") == _ledger(project_id, "pairwise_targets")[
        judge][:3] and _ledger(project_id, "pairwise_targets")[judge][0] == 2 * CASES

    execute_run(second)
    before = _billed(fake)
    assert compare_targets(second, w["pairwise"], w["targets"][second][0], alpha,
                           base_run_id=first) == CASES
    after = _billed(fake)
    assert _delta(after, before, "fake-judge") == _ledger(project_id, "pairwise_runs")[
        judge][:3] and _ledger(project_id, "pairwise_runs")[judge][0] == 2 * CASES

    # the reports are the ledger's sums: by purpose, by the model that made the call, and
    # every token counted; the total is the project's spend counter
    with db.factory() as session:
        project = session.get(Project, project_id)
        assert project is not None and project.reserved_micros == 0
        report = cost_report(session, project, ReportFilter())
    kinds = {k["kind"]: k for k in report["total"]["by_kind"]}
    for kind in ("judges", "pairwise_targets", "pairwise_runs"):
        calls, tokens_in, tokens_out, spent = _ledger(project_id, kind)[judge]
        assert (kinds[kind]["calls"], kinds[kind]["tokens_in"], kinds[kind]["tokens_out"],
                kinds[kind]["spent_micros"]) == (calls, tokens_in, tokens_out, spent)
        assert spent > 0
    assert report["total"]["spent_micros"] == project.spent_micros
    assert report["total"]["tokens_in"] == sum(k["tokens_in"] for k in kinds.values())
    by_model = {m["model_id"]: m for m in report["by_model"]}
    assert by_model[judge]["judge_micros"] == sum(
        kinds[k]["spent_micros"] for k in ("judges", "pairwise_targets", "pairwise_runs"))
    assert by_model[w["models"]["fake-alpha"]]["judge_micros"] == 0
    by_run = {r["run_id"]: r["spent_micros"] for r in report["by_run"]}
    assert sum(by_run.values()) == project.spent_micros


def test_over_a_cap_no_pairwise_call_is_sent(
        factory: Factory, settings: Settings, fake: FakeProviderThread) -> None:  # noqa: F811
    configure(fake, latency_ms=0, scripts=SCRIPTS)
    w = _world(factory, settings, fake)
    project_id, (first, second) = w["project_id"], w["runs"]
    execute_run(first)
    execute_run(second)
    with db.factory() as session:  # the project at 97% of its cap
        spent = session.scalar(select(Project.spent_micros).where(Project.id == project_id))
        assert spent
        session.execute(update(Project).where(Project.id == project_id)
                        .values(budget_micros=int(spent / 0.97)))
        session.commit()
    before = httpx.get(f"{fake.url}/_fake/stats").json()["total"]
    alpha, beta = w["targets"][first]
    assert compare_targets(first, w["pairwise"], alpha, beta) == 0
    assert compare_targets(second, w["pairwise"], w["targets"][second][0], alpha,
                           base_run_id=first) == 0
    assert httpx.get(f"{fake.url}/_fake/stats").json()["total"] == before  # nothing sent
    assert _ledger(project_id, "pairwise_targets") == {}
    with db.factory() as session:
        project = session.get(Project, project_id)
        assert project is not None
        assert (project.spent_micros, project.reserved_micros) == (spent, 0)


def _judging(w: dict[str, Any]) -> int:
    """A judge-mode run over the setup's questions, judged by fake-judge (not yet scored)."""
    with db.factory() as session:
        project = session.get(Project, w["project_id"])
        assert project is not None
        run = start_judging(session, None, project, w["dataset_id"], JudgingSpec(
            judges=(w["models"]["fake-judge"],), criteria=("clarity",)))
        session.commit()
        return run.id


def test_judge_mode_is_on_the_ledger_by_its_judge_and_over_a_cap_sends_nothing(
        factory: Factory, settings: Settings, fake: FakeProviderThread) -> None:  # noqa: F811
    configure(fake, latency_ms=0, scripts=[
        {"model": "fake-judge", "pattern": "", "reply": json.dumps({
            "criteria": {"clarity": {"score": 8, "rationale": "Clear."}},
            "summary": "Clear."})}])
    w = _world(factory, settings, fake)
    project_id, judge = w["project_id"], w["models"]["fake-judge"]
    judged = _judging(w)
    before = _billed(fake)
    assert score_run(judged) == CASES
    after = _billed(fake)
    # credited to the judge model, not to "no model" (the questions' target has none)
    assert set(_ledger(project_id, "judge_mode")) == {judge}
    assert _delta(after, before, "fake-judge") == _ledger(project_id, "judge_mode")[judge][:3]
    assert _ledger(project_id, "judge_mode")[judge][0] == CASES
    with db.factory() as session:
        project = session.get(Project, project_id)
        assert project is not None and project.reserved_micros == 0
        report = cost_report(session, project, ReportFilter())
    by_model = {m["model_id"]: m for m in report["by_model"]}
    # the questions' own target (no model) costs nothing: the spend is the judge's
    assert by_model[None]["spent_micros"] == by_model[None]["tokens_in"] == 0
    assert by_model[judge]["judge_micros"] == _ledger(project_id, "judge_mode")[judge][3] > 0
    assert by_model[judge]["tokens_in"] == _delta(after, before, "fake-judge")[1]

    # the cap used up: another judge-mode run judges nothing and sends nothing
    again = _judging(w)
    with db.factory() as session:
        session.execute(update(Project).where(Project.id == project_id)
                        .values(budget_micros=Project.spent_micros))
        session.commit()
        spent = session.scalar(select(Project.spent_micros).where(Project.id == project_id))
    total = httpx.get(f"{fake.url}/_fake/stats").json()["total"]
    assert score_run(again) == 0
    assert httpx.get(f"{fake.url}/_fake/stats").json()["total"] == total
    with db.factory() as session:
        project = session.get(Project, project_id)
        assert project is not None
        assert (project.spent_micros, project.reserved_micros) == (spent, 0)
        run = session.get(Run, again)
        assert run is not None and run.judge_spent_micros == 0
