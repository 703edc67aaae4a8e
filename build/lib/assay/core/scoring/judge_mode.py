"""Judge mode (myarena §3.6): judge models rate every question of a dataset version.

Starting it writes a scorer version of kind "question_quality" (on the project's "Question
quality" scorer, versioned when the judges, criteria or instruction change) and a run
that applies it, with one target without a model, "Dataset questions", whose outputs are
the questions themselves: every cell is done at once, free, like a trace run's. The
scoring job then asks each judge about each question (jobs/scoring.py); judgments.py
reads the ratings back.

The question of a case: its `question` input; for a conversation its first user message;
for a trace the first user message of the trace; for template cases the variables,
rendered one per line as "name: value".
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import Table, insert, select
from sqlalchemy.orm import Session

from assay.core import audit
from assay.core.auth.models import User
from assay.core.base import utcnow
from assay.core.datasets.models import Case, Dataset, DatasetVersion, VersionCase
from assay.core.datasets.service import get_dataset, latest_version
from assay.core.errors import Invalid
from assay.core.llm.models import ModelConfig
from assay.core.pagination import Page, paginate
from assay.core.projects.models import Project
from assay.core.reports import rollups
from assay.core.runs.models import CellStatus, Output, Run, RunStatus, RunTarget
from assay.core.scoring import service as scoring
from assay.core.scoring.models import RunScorer, ScorerConfig, ScorerVersion
from assay.scorers import registry
from assay.scorers.base import ParamsError
from assay.scorers.judging import MAX_JUDGES, message_text
from assay.scorers.question_quality import KIND

SCORER_NAME = "Question quality"
SCORER_DESCRIPTION = "Judge mode: judge models rate the questions of a dataset"
TARGET_LABEL = "Dataset questions"
MODE = "judge_questions"  # run.settings["mode"] of a judge-mode run
NAME_ATTEMPTS = 20  # "Question quality", "Question quality (2)", ... when a name is taken


@dataclass(frozen=True)
class JudgingSpec:
    judges: tuple[int, ...]  # model config ids of the project
    criteria: tuple[str, ...] = ()
    instruction: str | None = None
    dataset_version_id: int | None = None  # None: the latest version

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> JudgingSpec:
        """From the API's body (already checked by its schema)."""
        instruction = data.get("instruction")
        return cls(judges=tuple(data.get("judges") or ()),
                   criteria=tuple(data.get("criteria") or ()),
                   instruction=(instruction.strip() or None) if instruction else None,
                   dataset_version_id=data.get("dataset_version_id"))

    def params(self) -> dict[str, Any]:
        """The scorer's params: judges by model id, so renaming a model keeps them."""
        params: dict[str, Any] = {"judges": [str(j) for j in self.judges],
                                  "criteria": list(self.criteria)}
        if self.instruction:
            params["instruction"] = self.instruction
        return params


def _first_user(messages: Any) -> str:
    for message in messages if isinstance(messages, list) else []:
        if isinstance(message, dict) and message.get("role") == "user":
            return message_text(message)
    return ""


def question_text(kind: str, data: Mapping[str, Any] | None,
                  trace: Mapping[str, Any] | None) -> str:
    """What the judges rate for one case (see the module's docstring)."""
    data = data or {}
    if kind == "traces":
        return _first_user((trace or {}).get("messages"))
    if kind == "conversations":
        return _first_user(data.get("messages"))
    if isinstance(data.get("question"), str):
        return str(data["question"])
    return "\n".join(f"{name}: {value}" for name, value in data.items())


def _version(session: Session, dataset: Dataset, version_id: int | None) -> DatasetVersion:
    if version_id is None:
        return latest_version(session, dataset.id)
    found = session.get(DatasetVersion, version_id)
    if found is None or found.dataset_id != dataset.id:
        raise Invalid("Unknown dataset version", {"json": {"dataset_version_id": [
            f"No version {version_id} of this dataset"]}})
    return found


def _judge_problems(session: Session, project: Project,
                    judges: tuple[int, ...]) -> dict[str, Any]:
    """Judges must be distinct, unarchived models of the project (1 to MAX_JUDGES)."""
    if not 1 <= len(judges) <= MAX_JUDGES:
        return {"judges": [f"Choose 1 to {MAX_JUDGES} judge models"]}
    found = {m.id: m for m in session.scalars(select(ModelConfig).where(
        ModelConfig.project_id == project.id, ModelConfig.id.in_(judges)))}
    problems: dict[str, list[str]] = {}
    for index, model_id in enumerate(judges):
        model = found.get(model_id)
        if model is None:
            problems[str(index)] = [f"No model {model_id} in this project"]
        elif model.archived_at is not None:
            problems[str(index)] = [f"Model {model.name} is archived: restore it to judge "
                                    "with it"]
        elif model_id in judges[:index]:
            problems[str(index)] = [f"Model {model.name} is listed twice"]
    return {"judges": problems} if problems else {}


_ITEM = re.compile(r"^(\w+)\[(\d+)\]$")


def _params_problems(params: Mapping[str, Any]) -> dict[str, Any]:
    """The scorer's own checks (criteria, instruction) under the body's field names, an
    item's as {"criteria": {"1": [...]}} like the schema's."""
    try:
        registry.build(KIND, params)
    except ParamsError as exc:
        problems: dict[str, Any] = {}
        for key, messages in exc.errors.items():
            if key.startswith("judges"):  # checked against the project's models instead
                continue
            if item := _ITEM.match(key):
                problems.setdefault(item.group(1), {})[item.group(2)] = messages
            else:
                problems[key] = messages
        return problems
    return {}


def _scorer_config(session: Session, project: Project) -> tuple[ScorerConfig | None, str]:
    """The project's question-quality scorer, or None with a free name for a new one (a
    scorer of another kind may hold the usual name)."""
    names = [SCORER_NAME, *(f"{SCORER_NAME} ({n})" for n in range(2, NAME_ATTEMPTS + 1))]
    taken = {c.name: c for c in session.scalars(select(ScorerConfig).where(
        ScorerConfig.project_id == project.id, ScorerConfig.name.in_(names)))}
    for name in names:
        config = taken.get(name)
        if config is None:
            return None, name
        if config.kind == KIND:
            return config, name
    raise Invalid("No name left for the question-quality scorer", {"json": {"judges": [
        f"Rename one of the scorers named {SCORER_NAME!r} to start judge mode"]}})


def scorer_version(session: Session, actor: User | None, project: Project,
                   params: dict[str, Any]) -> ScorerVersion:
    """The version of the project's question-quality scorer with these params: its latest
    when it matches, else a new one (the scorer is created the first time)."""
    config, name = _scorer_config(session, project)
    if config is None:
        return scoring.create_scorer(session, actor, project, {
            "name": name, "kind": KIND, "params": params,
            "description": SCORER_DESCRIPTION, "note": "Judge mode"})[1]
    latest = scoring.latest_versions(session, [config.id]).get(config.id)
    if latest is not None and latest.params == params:
        return latest
    return scoring.add_version(session, actor, project, config,
                               {"params": params, "note": "Judge mode"})


_OUTPUTS = cast(Table, Output.__table__)


def _plan_questions(session: Session, run: Run, target: RunTarget, dataset: Dataset,
                    version: DatasetVersion) -> int:
    """One succeeded, free cell per case holding its question; returns how many."""
    now = utcnow()
    cases = session.execute(
        select(Case.id, Case.input, Case.trace)
        .join(VersionCase, VersionCase.case_id == Case.id)
        .where(VersionCase.version_id == version.id).order_by(VersionCase.position)).all()
    rows = [{"run_id": run.id, "case_id": case_id, "target_id": target.id, "repeat": 0,
             "turn": 0, "status": CellStatus.succeeded.value, "attempts": 0, "cached": False,
             "reserved_micros": 0, "text": question_text(dataset.kind, data, trace),
             "tokens_in": 0, "tokens_out": 0, "cost_micros": 0, "latency_ms": 0,
             "finished_at": now}
            for case_id, data, trace in cases]
    if rows:
        session.execute(insert(_OUTPUTS), rows)
        rollups.add_finished(session, now.date(), {target.id: rollups.Tally(
            succeeded=len(rows))}, Counter({(target.id, 0): len(rows)}))
    return len(rows)


def start_judging(session: Session, actor: User | None, project: Project, dataset_id: int,
                  spec: JudgingSpec) -> Run:
    """Check `spec`, then write the scorer version and the judge-mode run of the dataset's
    version (complete at once; the caller commits and enqueues its scoring). Raises
    NotFound for another project's dataset, Invalid naming every bad field otherwise."""
    dataset = get_dataset(session, project, dataset_id)
    version = _version(session, dataset, spec.dataset_version_id)
    params = spec.params()
    errors = {**_judge_problems(session, project, spec.judges), **_params_problems(params)}
    if version.case_count == 0:
        errors["dataset_id"] = [f"Version {version.number} of {dataset.name!r} has no "
                                "questions to judge"]
    if errors:
        raise Invalid("Judge mode cannot start", {"json": errors})
    pinned = scorer_version(session, actor, project, params)
    now = utcnow()
    run = Run(project_id=project.id, name=f"Judge questions: {dataset.name} v{version.number}",
              dataset_version_id=version.id, created_by=actor.id if actor else None,
              settings={"repeats": 1, "mode": MODE}, status=RunStatus.completed,
              started_at=now, finished_at=now)
    session.add(run)
    session.flush()
    target = RunTarget(run_id=run.id, model_id=None, label=TARGET_LABEL, position=0)
    session.add_all([target, RunScorer(run_id=run.id, scorer_version_id=pinned.id)])
    session.flush()
    count = _plan_questions(session, run, target, dataset, version)
    target.total = target.succeeded = run.total = run.succeeded = count
    audit.record(session, actor, "run.created", "run", run.id, project.id, {
        "mode": MODE, "dataset_id": dataset.id, "version": version.number, "cells": count,
        "scorer_version_ids": [pinned.id], "judges": list(spec.judges),
        "criteria": list(spec.criteria), "instruction": bool(spec.instruction)})
    return run


def judging_runs(session: Session, project: Project, dataset_id: int, page: int,
                 page_size: int) -> Page[Any]:
    """The dataset's judge-mode runs, newest first (NotFound for another project's)."""
    dataset = get_dataset(session, project, dataset_id)
    judged = (select(RunScorer.run_id)
              .join(ScorerVersion, ScorerVersion.id == RunScorer.scorer_version_id)
              .join(ScorerConfig, ScorerConfig.id == ScorerVersion.scorer_id)
              .where(ScorerConfig.project_id == project.id, ScorerConfig.kind == KIND))
    stmt = (select(Run).join(DatasetVersion, DatasetVersion.id == Run.dataset_version_id)
            .where(Run.project_id == project.id, DatasetVersion.dataset_id == dataset.id,
                   Run.id.in_(judged))
            .order_by(Run.id.desc()))
    return paginate(session, stmt, page, page_size)
