"""Run creation: a dataset version x targets x repeats, every cell planned up front.

A target is a model with parameter overrides and, for template cases, a prompt version; a
parameter grid expands one entry of the request into one target per combination. Input
errors (unknown model or prompt version, parameters the provider refuses, too many
targets) are a 422 VALIDATION_ERROR; a well-formed run that cannot start (validation.py)
is a 422 RUN_NOT_READY with every reason. Nothing is written in either case.

Cells are planned in one statement for questions and cases (INSERT ... SELECT over the
version's cases x the run's targets x the repeats), per user turn for conversations, and
as already-succeeded cells holding the recorded reply for traces (no model is called).
"""

from __future__ import annotations

import itertools
import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, cast

from sqlalchemy import Table, insert, literal, select, text, true, union_all
from sqlalchemy.orm import Session

from assay.core import audit
from assay.core.auth.models import User
from assay.core.base import utcnow
from assay.core.datasets.models import Case, Dataset, DatasetVersion, VersionCase
from assay.core.datasets.service import get_dataset, latest_version
from assay.core.errors import Invalid, RunNotReady
from assay.core.llm import kinds as kinds_
from assay.core.llm.models import ModelConfig
from assay.core.llm.params import KNOWN, check_params, clean_params
from assay.core.projects import settings as project_settings
from assay.core.projects.models import Project
from assay.core.prompts.models import Prompt, PromptVersion
from assay.core.prompts.service import version_in_project
from assay.core.reports import rollups
from assay.core.retrieval import rag_run
from assay.core.runs.models import CellStatus, Output, Run, RunStatus, RunTarget
from assay.core.runs.rendering import PromptParts, parts_of, user_turns
from assay.core.scoring import service as scoring
from assay.core.scoring.judge_calls import find_judges
from assay.core.scoring.models import RunScorer, ScorerConfig, ScorerVersion

MAX_TARGETS = 50  # after grid expansion
MAX_GRID_VALUES = 50
TRACE_LABEL = "Recorded trace"
LABEL_MAX = 300


@dataclass(frozen=True)
class TargetSpec:
    model_id: int
    params: Mapping[str, Any] = field(default_factory=dict)  # overrides of the model's
    prompt_version_id: int | None = None
    grid: Mapping[str, list[Any]] | None = None  # param -> values: one target per combination


@dataclass(frozen=True)
class RunSpec:
    dataset_id: int
    targets: tuple[TargetSpec, ...] = ()
    dataset_version_id: int | None = None  # None: the latest version
    name: str | None = None
    repeats: int = 1
    concurrency: int | None = None
    cache: bool = True
    stream: bool = False
    timeout_s: int | None = None
    max_retries: int | None = None  # None: the project's default
    max_history_pairs: int = 10
    budget_micros: int | None = None
    alert_threshold: float = 0.8
    shards: int | None = None
    scorer_ids: tuple[int, ...] = ()  # applied at their latest version, pinned by the run
    scorer_version_ids: tuple[int, ...] = ()  # applied at these versions, after scorer_ids
    # "Answer from documents": {document_ids, top_k, template} (core/retrieval/rag_run.py)
    rag: Mapping[str, Any] | None = None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RunSpec:
        """From the API's RunCreate body (already checked by its schema)."""
        targets = tuple(TargetSpec(model_id=t["model_id"], params=dict(t.get("params") or {}),
                                   prompt_version_id=t.get("prompt_version_id"),
                                   grid=t.get("grid"))
                        for t in data.get("targets") or [])
        known = set(cls.__dataclass_fields__) - {"targets", "scorer_ids", "scorer_version_ids"}
        return cls(targets=targets, scorer_ids=tuple(data.get("scorer_ids") or ()),
                   scorer_version_ids=tuple(data.get("scorer_version_ids") or ()),
                   **{k: v for k, v in data.items() if k in known})

    def settings(self) -> dict[str, Any]:
        return {"repeats": self.repeats, "concurrency": self.concurrency, "cache": self.cache,
                "stream": self.stream, "timeout_s": self.timeout_s,
                "max_retries": self.max_retries, "max_history_pairs": self.max_history_pairs,
                "shards": self.shards}


@dataclass
class PlannedTarget:
    index: int  # the entry of RunSpec.targets it comes from
    model: ModelConfig | None
    params: dict[str, Any]  # overrides (grid values included) of the model's params
    prompt: Prompt | None = None
    version: PromptVersion | None = None
    label: str = ""

    @property
    def prompt_parts(self) -> PromptParts | None:
        return parts_of(self.version)

    @property
    def effective_params(self) -> dict[str, Any]:
        return clean_params({**((self.model.params or {}) if self.model else {}),
                             **self.params})


@dataclass
class Resolved:
    """A RunSpec checked against the database: what a run of it would be."""

    session: Session
    project: Project
    spec: RunSpec
    dataset: Dataset
    version: DatasetVersion
    targets: list[PlannedTarget]
    scorers: list[ScorerVersion] = field(default_factory=list)  # pinned, in order

    @property
    def is_trace(self) -> bool:
        return self.dataset.kind == "traces"

    @cached_property
    def judges(self) -> dict[str, ModelConfig]:
        """The project's models the scorers judge with, by the ref each scorer names."""
        refs = {str(r) for v in self.scorers for r in (v.params or {}).get("judges") or []}
        return find_judges(self.session, self.project.id, refs)

    @cached_property
    def cases(self) -> list[tuple[int, dict[str, Any], dict[str, Any] | None]]:
        """(case id, input, trace) of the version, in order; loaded once, when needed."""
        rows = self.session.execute(
            select(Case.id, Case.input, Case.trace)
            .join(VersionCase, VersionCase.case_id == Case.id)
            .where(VersionCase.version_id == self.version.id).order_by(VersionCase.position))
        return [(r[0], r[1] or {}, r[2]) for r in rows]


def _value_text(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    return value if isinstance(value, str) else json.dumps(value)


def target_label(model: ModelConfig, params: Mapping[str, Any],
                 prompt: Prompt | None, version: PromptVersion | None) -> str:
    """"gpt-4o · Support v2 · temperature=0.7, max_tokens=256"."""
    parts = [model.name]
    if prompt is not None and version is not None:
        parts.append(f"{prompt.name} v{version.number}")
    if params:
        parts.append(", ".join(f"{k}={_value_text(v)}" for k, v in params.items()))
    label = " · ".join(parts)
    return label if len(label) <= LABEL_MAX else label[:LABEL_MAX - 1] + "…"


def _combinations(grid: Mapping[str, list[Any]] | None) -> list[dict[str, Any]]:
    if not grid:
        return [{}]
    names = list(grid)
    return [dict(zip(names, values, strict=True))
            for values in itertools.product(*(grid[n] for n in names))]


def _grid_errors(grid: Mapping[str, Any] | None) -> list[str]:
    if grid is None:
        return []
    problems = []
    for name, values in grid.items():
        if name not in KNOWN:
            problems.append(f"{name}: unknown parameter (allowed: {', '.join(KNOWN)}).")
        elif not isinstance(values, list) or not 1 <= len(values) <= MAX_GRID_VALUES:
            problems.append(f"{name}: a list of 1 to {MAX_GRID_VALUES} values.")
        elif len({json.dumps(v, sort_keys=True) for v in values}) != len(values):
            problems.append(f"{name}: the same value twice.")
    return problems


def resolve(session: Session, project: Project, spec: RunSpec) -> Resolved:
    """The dataset version, models, prompt versions, expanded targets and scorer versions of
    `spec`; an Invalid naming every bad entry of the request otherwise."""
    scorers = _scorer_versions(session, project, spec.scorer_ids, spec.scorer_version_ids)
    resolved = _resolve_targets(session, project, spec)
    resolved.scorers = scorers
    return resolved


def _chosen_versions(session: Session, project: Project, version_ids: tuple[int, ...],
                     errors: dict[str, Any]) -> list[ScorerVersion]:
    """The versions of `version_ids` that belong to the project's scorers; the others are
    named in errors["scorer_version_ids"]."""
    if not version_ids:
        return []
    found = {v.id: v for v in session.scalars(select(ScorerVersion).join(
        ScorerConfig, ScorerConfig.id == ScorerVersion.scorer_id).where(
        ScorerConfig.project_id == project.id, ScorerVersion.id.in_(version_ids)))}
    for index, version_id in enumerate(version_ids):
        if version_id not in found:
            errors.setdefault("scorer_version_ids", {})[str(index)] = [
                f"No scorer version {version_id} in this project"]
    return [found[v] for v in version_ids if v in found]


def _scorer_versions(session: Session, project: Project, scorer_ids: tuple[int, ...],
                     version_ids: tuple[int, ...] = ()) -> list[ScorerVersion]:
    """The latest version of each of `scorer_ids`, then each of `version_ids`, in the order
    given; an Invalid naming unknown or archived scorers, a scorer asked for twice, and
    judges that are no model of the project."""
    if not scorer_ids and not version_ids:
        return []
    errors: dict[str, Any] = {}
    chosen = _chosen_versions(session, project, version_ids, errors)
    wanted = [*scorer_ids, *(v.scorer_id for v in chosen)]
    configs = {c.id: c for c in session.scalars(select(ScorerConfig).where(
        ScorerConfig.project_id == project.id, ScorerConfig.id.in_(wanted)))}
    latest = scoring.latest_versions(session, [i for i in scorer_ids if i in configs])
    versions = [latest[i] for i in scorer_ids if i in latest] + chosen
    problems: dict[str, list[str]] = {}
    if len(set(wanted)) != len(wanted):
        problems["scorer_ids"] = ["Each scorer at most once"]  # latest or a chosen version
    for index, scorer_id in enumerate(scorer_ids):
        config = configs.get(scorer_id)
        if config is None:
            problems[str(index)] = [f"No scorer {scorer_id} in this project"]
        elif config.archived_at is not None:
            problems[str(index)] = [f"The scorer {config.name!r} is archived"]
    for index, version in enumerate(chosen):
        config = configs[version.scorer_id]
        if config.archived_at is not None:
            errors.setdefault("scorer_version_ids", {})[str(index)] = [
                f"The scorer {config.name!r} is archived"]
    if not problems and not errors:
        refs = {str(r): configs[v.scorer_id].name for v in versions
                for r in (v.params or {}).get("judges") or []}
        known = find_judges(session, project.id, refs)
        for ref, name in sorted(refs.items()):
            if ref not in known:
                problems.setdefault("judges", []).append(
                    f"The scorer {name!r} judges with {ref!r}, which is no model of this "
                    f"project")
    if problems:
        errors["scorer_ids"] = problems
    if errors:
        raise Invalid("Some scorers are not valid", {"json": errors})
    return versions


def _resolve_targets(session: Session, project: Project, spec: RunSpec) -> Resolved:
    dataset = get_dataset(session, project, spec.dataset_id)
    errors: dict[str, Any] = {}
    if spec.dataset_version_id is None:
        version = latest_version(session, dataset.id)
    else:
        found = session.get(DatasetVersion, spec.dataset_version_id)
        if found is None or found.dataset_id != dataset.id:
            raise Invalid("Unknown dataset version", {"json": {"dataset_version_id": [
                f"No version {spec.dataset_version_id} of this dataset"]}})
        version = found
    if dataset.kind == "traces":
        if spec.targets:
            raise Invalid("A trace dataset's run takes no targets: the recorded trace is "
                          "the output", {"json": {"targets": ["Must be empty for a trace "
                                                              "dataset"]}})
        placeholder = PlannedTarget(index=0, model=None, params={}, label=TRACE_LABEL)
        return Resolved(session, project, spec, dataset, version, [placeholder])
    ids = list(dict.fromkeys(t.model_id for t in spec.targets))
    models = {m.id: m for m in session.scalars(select(ModelConfig).where(
        ModelConfig.project_id == project.id, ModelConfig.id.in_(ids)))} if ids else {}
    planned: list[PlannedTarget] = []
    target_errors: dict[str, dict[str, list[str]]] = {}
    for index, entry in enumerate(spec.targets):
        problems: dict[str, list[str]] = {}
        model = models.get(entry.model_id)
        if model is None:
            problems["model_id"] = [f"No model {entry.model_id} in this project"]
        prompt = version_row = None
        if entry.prompt_version_id is not None:
            pair = version_in_project(session, project, entry.prompt_version_id)
            if pair is None:
                problems["prompt_version_id"] = [
                    f"No prompt version {entry.prompt_version_id} in this project"]
            else:
                prompt, version_row = pair
        if grid_problems := _grid_errors(entry.grid):
            problems["grid"] = grid_problems
        if model is not None and not problems:
            family = kinds_.get_kind(model.credential.kind).params_family
            for combo in _combinations(entry.grid):
                overrides = {**entry.params, **combo}
                found_errors = check_params(family, {**(model.params or {}), **overrides},
                                            model.context_window)
                for name, reasons in found_errors.items():
                    where = "grid" if name in combo else "params"
                    value = _value_text(overrides.get(name, (model.params or {}).get(name)))
                    message = f"{name}={value}: {reasons[0]}"
                    if message not in problems.get(where, []):
                        problems.setdefault(where, []).append(message)
                if not found_errors:
                    params = clean_params(overrides)
                    planned.append(PlannedTarget(
                        index=index, model=model, params=params, prompt=prompt,
                        version=version_row,
                        label=target_label(model, params, prompt, version_row)))
        if problems:
            target_errors[str(index)] = problems
    seen: dict[str, int] = {}
    for target in planned:  # the same target twice: told apart by a number
        seen[target.label] = seen.get(target.label, 0) + 1
        if seen[target.label] > 1:
            target.label = f"{target.label} #{seen[target.label]}"
    if target_errors:
        errors["targets"] = target_errors
    elif len(planned) > MAX_TARGETS:
        errors["targets"] = [f"The targets expand to {len(planned)} combinations; at most "
                             f"{MAX_TARGETS}"]
    if errors:
        raise Invalid("Some targets are not valid", {"json": errors})
    return Resolved(session, project, spec, dataset, version, planned)


def plan_run(session: Session, actor: User | None, project: Project, spec: RunSpec) -> Run:
    """Check `spec`, then write the run, its targets and every cell (pending; a trace run's
    cells are done already). Raises Invalid or RunNotReady before writing anything."""
    from assay.core.runs.validation import collect_problems

    resolved = resolve(session, project, spec)
    reasons = collect_problems(resolved)
    if reasons:
        raise RunNotReady(reasons)
    dataset, version = resolved.dataset, resolved.version
    trace = resolved.is_trace
    settings = spec.settings()
    for key, value in project_settings.run_defaults(project).items():
        if settings.get(key) is None:  # what the request left unset, the project decides
            settings[key] = value
    if trace:
        settings["repeats"] = 1  # the recorded trace is one output per case
    if spec.rag is not None:
        if trace:
            raise Invalid("A trace dataset's run replays recorded replies: it cannot answer "
                          "from documents", {"json": {"rag": ["Not for a trace dataset"]}})
        settings["rag"] = rag_run.check(session, project.id, spec.rag)
    run = Run(project_id=project.id, name=spec.name or f"{dataset.name} v{version.number}",
              dataset_version_id=version.id, created_by=actor.id if actor else None,
              settings=settings, budget_micros=spec.budget_micros,
              alert_threshold=spec.alert_threshold)
    session.add(run)
    session.flush()
    targets = [RunTarget(run_id=run.id, model_id=t.model.id if t.model else None,
                         prompt_version_id=t.version.id if t.version else None,
                         params=t.params, label=t.label, position=i)
               for i, t in enumerate(resolved.targets)]
    session.add_all(targets)
    session.add_all(RunScorer(run_id=run.id, scorer_version_id=v.id, position=i)
                    for i, v in enumerate(resolved.scorers))
    session.flush()
    if trace:
        _plan_traces(session, run, targets[0], resolved)
    elif dataset.kind == "conversations":
        _plan_turns(session, run, targets, resolved, spec.repeats)
    else:
        per_target = version.case_count * spec.repeats
        _plan_cross(session, run, version, spec.repeats)
        for target in targets:
            target.total = per_target
        run.total = per_target * len(targets)
    audit.record(session, actor, "run.created", "run", run.id, project.id, {
        "dataset_id": dataset.id, "version": version.number, "cells": run.total,
        "targets": [{"model_id": t.model_id, "label": t.label, "params": t.params,
                     "prompt_version_id": t.prompt_version_id} for t in targets],
        "settings": settings, "budget_micros": spec.budget_micros,
        "scorer_version_ids": [v.id for v in resolved.scorers]})
    return run


_OUTPUTS = cast(Table, Output.__table__)
_CELL_COLUMNS = ["run_id", "case_id", "target_id", "repeat", "turn", "status", "attempts",
                 "cached", "reserved_micros"]


def _plan_cross(session: Session, run: Run, version: DatasetVersion, repeats: int) -> None:
    """Cases x targets x repeats in one INSERT ... SELECT, in case, target, repeat order."""
    reps = union_all(*(select(literal(r).label("n")) for r in range(repeats))).subquery("reps") \
        if repeats > 1 else select(literal(0).label("n")).subquery("reps")
    cells = (select(literal(run.id), VersionCase.case_id, RunTarget.id, reps.c.n, literal(0),
                    literal(CellStatus.pending.value), literal(0), literal(False), literal(0))
             .select_from(VersionCase).join(RunTarget, true()).join(reps, true())
             .where(VersionCase.version_id == version.id, RunTarget.run_id == run.id)
             .order_by(VersionCase.position, RunTarget.position, reps.c.n))
    if session.get_bind().dialect.name == "postgresql":  # sort 100k cells in memory
        session.execute(text("SET LOCAL work_mem = '64MB'"))
    session.execute(insert(_OUTPUTS).from_select(_CELL_COLUMNS, cells))


def _plan_turns(session: Session, run: Run, targets: list[RunTarget], resolved: Resolved,
                repeats: int) -> None:
    """One cell per user turn of each conversation, per target and repeat."""
    turns = [(case_id, user_turns(data)) for case_id, data, _ in resolved.cases]
    per_target = sum(n for _, n in turns) * repeats
    rows = [{"run_id": run.id, "case_id": case_id, "target_id": target.id, "repeat": r,
             "turn": t, "status": CellStatus.pending.value, "attempts": 0, "cached": False,
             "reserved_micros": 0}
            for case_id, n in turns for target in targets for r in range(repeats)
            for t in range(n)]
    if rows:
        session.execute(insert(_OUTPUTS), rows)
    for target in targets:
        target.total = per_target
    run.total = per_target * len(targets)


def last_assistant_text(trace: Mapping[str, Any] | None) -> str:
    for message in reversed((trace or {}).get("messages") or []):
        if isinstance(message, dict) and message.get("role") == "assistant":
            content = message.get("content")
            return content if isinstance(content, str) else ""
    return ""


def _plan_traces(session: Session, run: Run, target: RunTarget, resolved: Resolved) -> None:
    """The recorded trace is the output: every cell succeeded already, free."""
    now = utcnow()
    rows = [{"run_id": run.id, "case_id": case_id, "target_id": target.id, "repeat": 0,
             "turn": 0, "status": CellStatus.succeeded.value, "attempts": 0, "cached": False,
             "reserved_micros": 0, "text": last_assistant_text(trace), "tokens_in": 0,
             "tokens_out": 0, "cost_micros": 0, "latency_ms": 0, "finished_at": now}
            for case_id, _, trace in resolved.cases]
    if rows:
        session.execute(insert(_OUTPUTS), rows)
        rollups.add_finished(session, now.date(), {target.id: rollups.Tally(
            succeeded=len(rows))}, Counter({(target.id, 0): len(rows)}))
    target.total = target.succeeded = run.total = run.succeeded = len(rows)
    run.status = RunStatus.completed
    run.started_at = run.finished_at = now


def run_targets(session: Session,
                run_ids: list[int]) -> dict[int, list[tuple[RunTarget, str | None]]]:
    """Each run's targets in order, with their model's name (None for a trace target)."""
    out: dict[int, list[tuple[RunTarget, str | None]]] = {run_id: [] for run_id in run_ids}
    if not run_ids:
        return out
    rows = session.execute(select(RunTarget, ModelConfig.name)
                           .outerjoin(ModelConfig, ModelConfig.id == RunTarget.model_id)
                           .where(RunTarget.run_id.in_(run_ids))
                           .order_by(RunTarget.run_id, RunTarget.position))
    for target, name in rows:
        out[target.run_id].append((target, name))
    return out
