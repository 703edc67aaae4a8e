"""Question quality by generator model (myarena §3.7: "average question quality generated
per model, based on judgments"): across every judge-mode run of a project, the mean
overall rating (1-10) the judges gave the questions each model generated.

A generated case records its generator in its metadata when it is accepted into a dataset
(`{"generation": {"model_id", "model_name", "job_id"}}`, core/generation). A question
judged by several judges, or in several runs, counts once: its ratings are averaged
first, and the interval is a bootstrap over questions. Questions without a generator
(written or imported) form a row of their own, for comparison.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from assay.core.datasets.models import Case
from assay.core.llm.models import ModelConfig
from assay.core.projects.models import Project
from assay.core.runs.models import Output, Run
from assay.core.scoring.judgments import overall_of
from assay.core.scoring.models import Score
from assay.core.stats import mean_ci
from assay.scorers.question_quality import KIND

GENERATION = "generation"  # the key of Case metadata that names the generator
NOT_GENERATED = "Not generated (written or imported)"
RESAMPLES = 2000


def generation_metadata(model_id: int, model_name: str | None,
                        job_id: int | None) -> dict[str, Any]:
    """What a generated case records about its generator, under GENERATION."""
    return {"model_id": model_id, "model_name": model_name, "job_id": job_id}


def generator_of(meta: Mapping[str, Any] | None) -> tuple[int | None, str | None]:
    """(model id, recorded name) of a case's generator; (None, None) when it has none."""
    found = (meta or {}).get(GENERATION)
    if not isinstance(found, Mapping):
        return None, None
    model_id, name = found.get("model_id"), found.get("model_name")
    if not isinstance(model_id, int) or isinstance(model_id, bool):
        return None, None
    return model_id, name if isinstance(name, str) else None


def quality_by_generator(session: Session, project: Project) -> list[dict[str, Any]]:
    """One row per generator model (best mean first; the not-generated row last): mean
    overall rating with its 95% interval, questions, ratings and datasets counted."""
    rows = session.execute(
        select(Score.criteria, Output.case_id, Case.meta, Case.dataset_id)
        .join(Run, Run.id == Score.run_id).join(Output, Output.id == Score.output_id)
        .join(Case, Case.id == Output.case_id)
        .where(Run.project_id == project.id, Score.kind == KIND, Score.error.is_(None))
        .order_by(Score.id))  # a stable order: the same interval on every read
    groups: dict[int | None, dict[str, Any]] = {}
    for criteria, case_id, meta, dataset_id in rows:
        overall = overall_of(criteria or {})
        if overall is None:
            continue
        model_id, recorded = generator_of(meta)
        group = groups.setdefault(model_id, {"by_case": {}, "datasets": set(), "name": None})
        group["by_case"].setdefault(case_id, []).append(overall)
        group["datasets"].add(dataset_id)
        group["name"] = group["name"] or recorded
    ids = [key for key in groups if key is not None]
    names = dict(session.execute(select(ModelConfig.id, ModelConfig.name).where(
        ModelConfig.project_id == project.id, ModelConfig.id.in_(ids))).all()) if ids else {}
    out = []
    for model_id, group in groups.items():
        found = mean_ci(group["by_case"], n_resamples=RESAMPLES)
        if model_id is None:
            name = NOT_GENERATED
        else:
            name = names.get(model_id) or group["name"] or f"Model {model_id}"
        out.append({"model_id": model_id, "name": name, "mean": found.mean, "low": found.low,
                    "high": found.high, "questions": found.n_cases, "ratings": found.n_values,
                    "datasets": len(group["datasets"])})
    out.sort(key=_rank)
    return out


def _rank(row: dict[str, Any]) -> tuple[bool, float, str]:
    return row["model_id"] is None, -float(row["mean"] or 0.0), str(row["name"])
