"""Experiment iteration overhead (DESIGN §9: <= 1.15x the same run and scoring started
directly). `python -m tests.bench.experiments FAKE_URL` prints one JSON line.

Both sides: 200 cases x 2 fake models (100 ms latency), a rubric judge on every output,
concurrency 200, one shard in this process, SQLite. Direct: plan the run and execute it.
Iteration: start an experiment's iteration (which plans the same run), execute it, then the
steps its finalisation enqueues (aggregation with bootstrap intervals, the refiner's call)
until its suggestion awaits review. Alternated, the faster of two each."""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import time
from typing import Any

import httpx

from assay.app import create_app
from assay.core.auth.service import register
from assay.core.base import utcnow
from assay.core.datasets.service import create_dataset, latest_version, version_cases
from assay.core.experiments import loop
from assay.core.experiments.models import Experiment, Iteration
from assay.core.llm.models import ModelConfig
from assay.core.llm.service import ensure_demo_models
from assay.core.projects.service import create_project
from assay.core.prompts.service import create_prompt
from assay.core.runs.planning import RunSpec, TargetSpec, plan_run
from assay.core.scoring.service import create_scorer
from assay.extensions import db
from assay.jobs.experiments import advance
from assay.jobs.runs import _Shard
from assay.runtime import current
from tests.engine.experiment_setup import D1, PROMPT, RUBRIC, reply

CASES, CONCURRENCY = 200, 200
STEPS: list[float] = []  # seconds in the steps after the run (aggregate, refine)


def _world(settings: Any) -> dict[str, Any]:
    with db.factory() as session:
        user = register(session, f"exp{time.time_ns()}@example.com", "Bench-password-1!",
                        None, 4)
        project = create_project(session, user, "Experiment bench")
        models = ensure_demo_models(session, user, project, settings.fake_provider_url)[:2]
        session.add(ModelConfig(project_id=project.id, credential_id=models[0].credential_id,
                                name="Bench judge", model="fake-judge",
                                input_price_per_mtok_micros=100_000,
                                output_price_per_mtok_micros=100_000,
                                params={"max_tokens": 500}))
        dataset = create_dataset(session, user, project, "bench", "questions", [
            {"input": {"question": f"question {i} about routers"}} for i in range(CASES)])
        prompt, seed = create_prompt(session, user, project, {"name": "Bench",
                                                              "template": PROMPT})
        scorer, _ = create_scorer(session, user, project, {
            "name": "Bench rubric", "kind": "llm_judge",
            "params": {"rubric": {"criteria": RUBRIC}, "judges": ["Bench judge"]}})
        session.commit()
        return {"user": user.id, "project": project.id, "models": [m.id for m in models],
                "dataset": dataset.id, "prompt": prompt.id, "seed": seed.id,
                "scorer": scorer.id}


def direct(w: dict[str, Any]) -> float:
    started = time.perf_counter()
    with db.factory() as session:
        from assay.core.projects.models import Project

        project = session.get(Project, w["project"])
        run = plan_run(session, None, project, RunSpec(
            dataset_id=w["dataset"], targets=tuple(
                TargetSpec(m, prompt_version_id=w["seed"]) for m in w["models"]),
            scorer_ids=(w["scorer"],), concurrency=CONCURRENCY, cache=False))
        session.commit()
        run_id = run.id
    asyncio.run(_Shard(current(), run_id).run())
    return time.perf_counter() - started


def iteration(w: dict[str, Any]) -> float:
    calls: list[tuple[str, int]] = []
    loop.set_dispatcher(lambda kind, ident: calls.append((kind, ident)))
    started = time.perf_counter()
    with db.factory() as session:
        version = latest_version(session, w["dataset"])
        ids = [c.id for c in version_cases(session, version.id)]
        experiment = Experiment(
            project_id=w["project"], name="Bench", status="running", config={
                "objective": {"goal": "Answer router questions helpfully and warmly."},
                "rubric": {"criteria": [{**c, "scale": {"min": 1, "max": 5}} for c in RUBRIC]},
                "models": {"targets": [{"model_id": m} for m in w["models"]]},
                "judges": {"pointwise": ["Bench judge"]},
                "stop": {"max_iterations": 10},
                "run": {"concurrency": CONCURRENCY, "cache": False}},
            dataset_version_id=version.id, refinement_case_ids=ids[:140],
            holdout_case_ids=ids[140:], prompt_id=w["prompt"], seed_prompt_version_id=w["seed"],
            current_prompt_version_id=w["seed"], scorer_ids=[w["scorer"]], started_at=utcnow())
        session.add(experiment)
        session.flush()
        loop.begin(session, experiment)
        session.commit()
        experiment_id = experiment.id
    steps = 0.0
    while calls:
        kind, ident = calls.pop(0)
        if kind == loop.RUN:
            asyncio.run(_Shard(current(), ident).run())
        else:
            step = time.perf_counter()
            advance(ident)
            steps += time.perf_counter() - step
    elapsed = time.perf_counter() - started
    STEPS.append(steps)
    with db.factory() as session:
        from sqlalchemy import select

        status = session.scalar(select(Iteration.status).where(
            Iteration.experiment_id == experiment_id))
    if status != "awaiting_review":
        raise RuntimeError(f"the bench iteration ended {status}")
    return elapsed


def measure(fake_url: str) -> dict[str, Any]:
    from tests.bench.__main__ import _setup  # the bench's settings (that module imports this)

    settings = _setup(fake_url, CONCURRENCY)
    app = create_app(settings)
    with app.app_context():
        from flask_migrate import upgrade

        upgrade()
    httpx.post(f"{fake_url}/_fake/config", json={"scripts": [
        {"model": "fake-judge", "pattern": "Prompt Refinement Task", "reply": reply(D1)}]})
    w = _world(settings)
    times: dict[str, list[float]] = {"direct": [], "iteration": []}
    for _ in range(3):
        times["direct"].append(direct(w))
        times["iteration"].append(iteration(w))
    bare, looped = min(times["direct"]), min(times["iteration"])
    return {"cases": CASES, "models": 2, "direct_s": round(bare, 2),
            "iteration_s": round(looped, 2), "steps_s": round(min(STEPS), 2),
            "ratio": round(looped / bare, 3)}


def report(figures: dict[str, Any]) -> list[str]:
    return [f"experiment iteration, {figures['cases']} cases x {figures['models']} models "
            f"with a rubric judge: {figures['iteration_s']} s vs the same run + scoring "
            f"started directly {figures['direct_s']} s = {figures['ratio']:.3f}x "
            f"(bar 1.15x); aggregation and refinement {figures['steps_s']} s of it"]


if __name__ == "__main__":
    logging.disable(logging.WARNING)
    print(json.dumps(measure(sys.argv[1])))
