"""A started experiment on the fake provider, built row by row (the wizard's start is the
experiments feature's; the loop needs only what start leaves behind), and a driver that
runs the loop's jobs in this process, one step at a time."""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from sqlalchemy import select

from assay.core.base import utcnow
from assay.core.datasets.service import latest_version, version_cases
from assay.core.experiments import loop
from assay.core.experiments.models import Experiment, ExperimentStatus, Iteration
from assay.core.llm.models import Credential, ModelConfig
from assay.core.projects.models import Project
from assay.core.prompts.service import create_prompt
from assay.core.scoring.service import create_scorer
from assay.extensions import db
from assay.providers.fake import FakeProviderThread
from assay.settings import Settings
from tests.engine.test_providers_engine import configure, setup
from tests.factories import Factory

LINES = ["You are a support agent for Acme routers.",
         "Answer the customer's question: {{question}}",
         "Be brief.",
         "Cite the manual when you can.",
         "Do not guess.",
         "Never share prices."] + [
    f"Rule {i}: keep to the customer's own router model and its settings." for i in range(14)]
PROMPT = "\n".join(LINES) + "\n"
RUBRIC = [
    {"name": "Helpfulness", "description": "The answer solves the problem.", "weight": 0.5,
     "scale": "1-5"},
    {"name": "Empathy", "description": "The answer acknowledges the customer.",
     "weight": 0.5, "scale": "1-5"}]


def diff_of(old: str, new: str) -> str:
    return "".join(difflib.unified_diff(old.splitlines(keepends=True),
                                        new.splitlines(keepends=True),
                                        "a/prompt.txt", "b/prompt.txt"))


def replace_line(text: str, index: int, line: str) -> str:
    lines = text.splitlines()
    lines[index] = line
    return "\n".join(lines) + "\n"


def reply(diff: str, note: str = "Makes the answer warmer, for Empathy.") -> str:
    return f"<diff>\n{diff}</diff>\n<note>\n{note}\n</note>"


def verdict(helpfulness: int, empathy: int) -> str:
    return json.dumps({"criteria": {
        "Helpfulness": {"score": helpfulness, "rationale": "Solves part of it."},
        "Empathy": {"score": empathy, "rationale": "Cold: no acknowledgement."}},
        "summary": "Fine.", "confidence": 0.8})


# the refiner's diffs: D1 changes line 2; the reviewer's edit E1 changes line 10; after a
# rejection D2 changes line 17 (each applies to every prompt version the loop makes here)
D1 = diff_of(PROMPT, replace_line(PROMPT, 2, "Be brief, and acknowledge the customer first."))
SORRY = "Rule 4: keep to the customer's router, and say sorry for the trouble."
E1 = diff_of(PROMPT, replace_line(PROMPT, 10, SORRY))
P2 = replace_line(PROMPT, 10, SORRY)
D2 = diff_of(P2, replace_line(P2, 17, "Rule 11: say when you are unsure."))


# the pairwise judge prefers the output that carries D1's change, whichever side shows it
D1_MARK = "acknowledge the customer first"
PAIRWISE = [{"model": "fake-judge", "pattern": f'name="Response {n}">[^<]*{D1_MARK}',
             "reply": json.dumps({"winner": str(n), "rationale": "Warmer."})} for n in (1, 2)]
PAIRWISE.append({"model": "fake-judge", "pattern": '"winner": "1"',
                 "reply": json.dumps({"winner": "tie", "rationale": "Alike."})})


def scripts(refiner: str | None = None, rejected: str | None = None,
            judge: str | None = None) -> list[dict[str, Any]]:
    out = [*PAIRWISE]
    if rejected is not None:
        out.append({"model": "fake-judge", "pattern": "a reviewer rejected", "reply": rejected})
    out.append({"model": "fake-judge", "pattern": "Prompt Refinement Task",
                "reply": refiner if refiner is not None else reply(D1)})
    out.append({"model": "fake-judge", "pattern": "could not be used",
                "reply": refiner if refiner is not None else reply(D1)})
    out.append({"model": "fake-judge", "pattern": "", "reply": judge or verdict(3, 2)})
    return out


@dataclass
class Built:
    project: Project
    experiment_id: int
    owner: Any


def build(factory: Factory, settings: Settings, fake: FakeProviderThread, *, cases: int = 10,
          stop: dict[str, Any] | None = None, budget_micros: int | None = None,
          max_tokens: int | None = None, owner: Any = None, latency_ms: int = 0,
          run: dict[str, Any] | None = None, pairwise: bool = False,
          judges_by_id: bool = False, **script: Any) -> Built:
    configure(fake, latency_ms=latency_ms, scripts=scripts(**script))
    owner = owner or factory.user()
    s = setup(factory, settings, fake, cases=cases, owner=owner)
    with db.factory() as session:
        project = session.get(Project, s.project.id)
        assert project is not None
        credential = session.scalar(select(Credential).where(
            Credential.project_id == project.id))
        assert credential is not None
        judge = ModelConfig(project_id=project.id, credential_id=credential.id,
                            name="Judge", model="fake-judge",
                            input_price_per_mtok_micros=100_000,
                            output_price_per_mtok_micros=100_000, params={"max_tokens": 1000})
        session.add(judge)
        session.flush()
        # the wizard's start names judges by model id (experiments/service.py); "Judge" by name
        judge_ref = str(judge.id) if judges_by_id else "Judge"
        prompt, seed = create_prompt(session, None, project, {
            "name": "Support", "template": PROMPT, "note": "Seed prompt"})
        scorer, _ = create_scorer(session, None, project, {
            "name": "Rubric judge", "kind": "llm_judge",
            "params": {"rubric": {"criteria": RUBRIC}, "judges": [judge_ref]}})
        scorer_ids = [scorer.id]
        if pairwise:  # as the wizard's start makes it (experiments/service.py)
            pair, _ = create_scorer(session, None, project, {
                "name": "Pairwise judge", "kind": "pairwise_judge",
                "params": {"rubric": {"criteria": RUBRIC}, "judges": ["Judge"]}})
            scorer_ids.append(pair.id)
        version = latest_version(session, s.dataset_id)
        ids = [c.id for c in version_cases(session, version.id)]
        cut = int(len(ids) * 0.7)
        config = {
            "objective": {"goal": "Answer router support questions helpfully and warmly."},
            "rubric": {"criteria": [{**c, "scale": {"min": 1, "max": 5}} for c in RUBRIC]},
            "models": {"targets": [{"model_id": s.model_ids[0], "params": {}}]},
            "judges": {"pointwise": [judge_ref], "pairwise": pairwise},
            "stop": {"max_iterations": 10, "min_delta": 0.02, "convergence_window": 0,
                     "stop_if_no_suggestion": True, **(stop or {})},
            "run": run or {"concurrency": 8}}
        experiment = Experiment(
            project_id=project.id, name="Warmer support", status=ExperimentStatus.running,
            config=config, config_version=1, frozen_at=utcnow(), created_by=owner.id,
            dataset_version_id=version.id, refinement_case_ids=ids[:cut],
            holdout_case_ids=ids[cut:], prompt_id=prompt.id,
            seed_prompt_version_id=seed.id, current_prompt_version_id=seed.id,
            scorer_ids=scorer_ids, budget_micros=budget_micros, max_tokens=max_tokens,
            started_at=utcnow())
        session.add(experiment)
        session.flush()
        loop.begin(session, experiment)
        session.commit()
        return Built(project, experiment.id, owner)


@pytest.fixture
def recorded() -> Iterator[list[tuple[str, int]]]:
    """The loop's dispatches, recorded instead of enqueued: the test runs each step. A live
    worker's reaper would see the test's run between two steps as abandoned (running, with
    pending cells and no live lease) and run it too, and advance its iteration: the test
    holds the reapers' lock meanwhile."""
    from assay.jobs import reaper
    from assay.jobs.experiments import install
    from assay.runtime import current

    rt = current()
    lock = reaper._key(rt, "lock")
    rt.redis.set(lock, "a test drives its own steps", ex=600)
    calls: list[tuple[str, int]] = []
    loop.set_dispatcher(lambda kind, ident: calls.append((kind, ident)))
    yield calls
    rt.redis.delete(lock)
    install(rt)


def iterations(experiment_id: int) -> list[Iteration]:
    with db.factory() as session:
        return list(session.scalars(select(Iteration).where(
            Iteration.experiment_id == experiment_id).order_by(Iteration.number)))


def experiment(experiment_id: int) -> Experiment:
    with db.factory() as session:
        found = session.get(Experiment, experiment_id)
        assert found is not None
        session.expunge(found)
        return found
