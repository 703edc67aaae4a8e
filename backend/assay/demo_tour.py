"""The seeded demo tour: what a new user sees in the demo project on first sign-in, made by the
real engine over the fake provider.

From the small PDF in seeds/ (uploaded and extracted like any upload) a conversation dataset
is generated; a run of it over three fake models is scored by a rubric judge, reference
checks, RAG metrics and some manual scores; a second run, with a prompt whose system text is
the FAQ itself, gives something to compare against (the fake "smart" model quotes the FAQ
when it has it); judge mode rates the dataset's questions; an experiment on the customer-
support template runs to its convergence stop with an edited, a rejected and approved
suggestions (`demo_experiment.py`).

Everything runs synchronously in this process, against the fake provider at the configured
URL (one is started on that port for the duration when none answers there, with no latency):
the tour is ready, reports included, before the app starts, and `make run` waits only a few
seconds for it, once. Idempotent: each step looks for what it makes first (by name).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import httpx
from sqlalchemy import select
from sqlalchemy.orm import Session

from assay.core.auth.models import User
from assay.core.datasets.models import Dataset, Document
from assay.core.generation import documents
from assay.core.generation import service as generation
from assay.core.llm.models import ModelConfig
from assay.core.llm.service import DEMO_MODELS, JUDGE_MODEL, TOUR_MODELS, ensure_fake_models
from assay.core.projects.models import Project
from assay.core.prompts.models import Prompt
from assay.core.prompts.service import create_prompt
from assay.core.prompts.service import latest_versions as prompt_versions
from assay.core.runs.models import CellStatus, Output, Run
from assay.core.runs.planning import RunSpec, TargetSpec, plan_run
from assay.core.scoring import judge_mode, manual
from assay.core.scoring.models import ScorerConfig
from assay.core.scoring.service import create_scorer, latest_versions
from assay.providers.fake import FakeConfig, FakeProviderThread
from assay.runtime import Runtime
from assay.settings import REPO_ROOT

log = logging.getLogger(__name__)
PDF = REPO_ROOT / "seeds" / "acme-cloud-faq.pdf"
DATASET = "Acme Cloud FAQ (generated from PDF)"
BASELINE, WITH_FAQ = "Tour: FAQ answers", "Tour: FAQ answers, FAQ in the system prompt"
PROMPT = "FAQ assistant"
SYSTEM = ("You answer customers' questions about Acme Cloud Backup. Use only the FAQ below; "
          "say so when it does not answer the question.\n\n")
CONVERSATIONS, TURNS = 6, 2
MANUAL_SCORES = 6  # outputs of the baseline scored by hand, by the demo user


def scorer_specs(judge: ModelConfig, smart: ModelConfig) -> list[dict[str, Any]]:
    judges = [str(judge.id), str(smart.id)]
    return [
        {"name": "Answer quality (rubric)", "kind": "llm_judge", "params": {
            "judges": judges, "pass_threshold": 0.6, "rubric": {
                "goal": "Answer the customer's question from the FAQ, correctly and briefly.",
                "criteria": [
                    {"name": "accuracy", "description": "Agrees with the FAQ's answer",
                     "weight": 0.5, "scale": "1-5"},
                    {"name": "relevance", "description": "Answers the question that was asked",
                     "weight": 0.3, "scale": "1-5"},
                    {"name": "clarity", "description": "Clear, well-formed and easy to read",
                     "weight": 0.2, "scale": "1-5"}]}}},
        {"name": "Close to the FAQ answer", "kind": "similarity",
         "params": {"method": "token_set_ratio", "threshold": 0.5}},
        {"name": "Answer length", "kind": "length",
         "params": {"unit": "words", "min": 6, "max": 120}},
        {"name": "RAG metrics", "kind": "rag_metrics", "params": {"judges": [str(judge.id)]}},
        {"name": "Reviewer rating", "kind": "manual", "params": {"scale": "1-5"}},
    ]


@contextlib.contextmanager
def fake_provider(url: str) -> Iterator[None]:
    """The fake provider at `url`: the one running there, else one started for the tour."""
    with contextlib.suppress(httpx.HTTPError):
        if httpx.get(f"{url}/_fake/health", timeout=1).status_code == 200:
            yield
            return
    parts = urlsplit(url)
    with FakeProviderThread(FakeConfig(latency_ms=0), parts.hostname or "127.0.0.1",
                            parts.port or 80):
        yield


def _named(session: Session, model: type[Any], project: Project, name: str) -> Any:
    return session.scalar(select(model).where(model.project_id == project.id,
                                              model.name == name))


def _dataset(session: Session, rt: Runtime, demo: User, project: Project,
             generator: ModelConfig) -> Dataset:
    """The conversation dataset generated from the PDF (uploaded first)."""
    found = _named(session, Dataset, project, DATASET)
    if found is not None:
        return found
    document = _named(session, Document, project, PDF.name) or documents.create_document(
        session, demo, project, PDF.name, PDF.read_bytes())
    conn, prefix = rt.redis, rt.settings.redis_prefix
    state = generation.start(session, conn, prefix, demo, project, "conversations", {
        "model_id": generator.id, "document_id": document.id, "count": CONVERSATIONS,
        "turns": TURNS})
    session.commit()
    from assay.jobs.generation import run_job  # the job, as a worker runs it

    asyncio.run(run_job(rt, int(state["id"])))
    dataset, _ = generation.accept(session, conn, prefix, demo, project, int(state["id"]),
                                   DATASET, None)
    session.commit()
    return dataset


def _faq_prompt(session: Session, demo: User, project: Project) -> int:
    """The id of the prompt version whose system text is the FAQ (as extracted)."""
    prompt = _named(session, Prompt, project, PROMPT)
    if prompt is None:
        document = _named(session, Document, project, PDF.name)
        prompt, version = create_prompt(session, demo, project, {
            "name": PROMPT, "description": "Answers from the Acme Cloud FAQ (demo tour)",
            "template": "Answer the customer's question.",
            "system": SYSTEM + (document.text if document else ""),
            "note": "The FAQ PDF's text as the system prompt"})
        session.commit()
        return version.id
    return prompt_versions(session, [prompt.id])[prompt.id].id


def _scorer_ids(session: Session, demo: User, project: Project,
                specs: list[dict[str, Any]]) -> dict[str, int]:
    ids = {}
    for spec in specs:
        scorer = _named(session, ScorerConfig, project, spec["name"])
        if scorer is None:
            scorer, _ = create_scorer(session, demo, project, spec)
        ids[spec["name"]] = scorer.id
    session.commit()
    return ids


def _run(session: Session, demo: User, project: Project, name: str, dataset: Dataset,
         targets: list[TargetSpec], scorer_ids: list[int]) -> Run:
    """The named run, planned and executed in this process when it does not exist yet."""
    run = _named(session, Run, project, name)
    if run is not None:
        return run
    run = plan_run(session, demo, project, RunSpec(
        dataset_id=dataset.id, targets=tuple(targets), name=name, concurrency=8,
        scorer_ids=tuple(scorer_ids)))
    session.commit()
    from assay.jobs.runs import execute_run  # the shard runner, as a worker runs it

    execute_run(run.id)
    session.expire_all()
    return run


def _manual_scores(session: Session, demo: User, project: Project, run: Run,
                   scorer_id: int) -> None:
    """A reviewer's 1-5 ratings on a few outputs: longer answers rated higher."""
    version = latest_versions(session, [scorer_id])[scorer_id]
    outputs = session.scalars(select(Output).where(
        Output.run_id == run.id, Output.status == CellStatus.succeeded)
        .order_by(Output.id).limit(MANUAL_SCORES)).all()
    for output in outputs:
        if manual.own_score(session, output.id, version.id, demo) is not None:
            continue
        words = len((output.text or "").split())
        rating = 2 if words < 8 else 3 if words < 16 else 4 if words < 30 else 5
        manual.set_score(session, demo, project, run, output.id, version.id, manual.Entry(
            rating=rating, comment="Seeded by the demo tour"))
    session.commit()


def _judge_mode(session: Session, rt: Runtime, demo: User, project: Project,
                dataset: Dataset, judges: list[ModelConfig]) -> None:
    if judge_mode.judging_runs(session, project, dataset.id, 1, 1).total:
        return
    run = judge_mode.start_judging(session, demo, project, dataset.id, judge_mode.JudgingSpec(
        judges=tuple(j.id for j in judges),
        criteria=("clarity", "difficulty", "relevance", "overall")))
    session.commit()
    from assay.jobs.scoring import score_run  # the scoring job, as a worker runs it

    score_run(run.id)


def seed_tour(session: Session, rt: Runtime, demo: User, project: Project) -> None:
    """The whole tour in the demo project (see the module's docstring); idempotent."""
    fake_url = rt.settings.fake_provider_url
    models = ensure_fake_models(session, demo, project, fake_url, DEMO_MODELS + TOUR_MODELS)
    judge = ensure_fake_models(session, demo, project, fake_url, [JUDGE_MODEL])[0]
    session.commit()
    fast, smart, mini = models
    with fake_provider(fake_url):
        dataset = _dataset(session, rt, demo, project, smart)
        ids = _scorer_ids(session, demo, project, scorer_specs(judge, smart))
        automatic = [i for name, i in ids.items() if name != "Reviewer rating"]
        targets = [TargetSpec(m.id) for m in (fast, smart, mini)]
        baseline = _run(session, demo, project, BASELINE, dataset, targets,
                        [*automatic, ids["Reviewer rating"]])
        _manual_scores(session, demo, project, baseline, ids["Reviewer rating"])
        prompt_version = _faq_prompt(session, demo, project)
        grounded = [TargetSpec(m.id, prompt_version_id=prompt_version)
                    for m in (fast, smart, mini)]
        _run(session, demo, project, WITH_FAQ, dataset, grounded, automatic)
        _judge_mode(session, rt, demo, project, dataset, [judge, smart])
        from assay.demo_experiment import seed_experiment

        seed_experiment(session, demo, project, smart, judge)
