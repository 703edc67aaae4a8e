"""The one JSON view of a run (RunSchema), shared by every route that returns runs."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from assay.api.base import session
from assay.api.dump import dumped
from assay.api.kept_reads import kept_run_views
from assay.api.runs.schemas import RunSchema
from assay.core.datasets.models import DatasetVersion
from assay.core.projects.settings import DEFAULT_MAX_RETRIES
from assay.core.runs.models import Run
from assay.core.runs.planning import run_targets
from assay.core.scoring.service import pinned

RUN_FIELDS = ("id", "name", "status", "total", "succeeded", "failed", "skipped",
              "dataset_version_id", "budget_micros", "alert_threshold", "spent_micros",
              "judge_spent_micros", "reserved_micros", "tokens_in", "tokens_out", "error",
              "created_at", "started_at", "finished_at", "row_version", "headline_scorer_id")
TARGET_FIELDS = ("id", "model_id", "label", "params", "prompt_version_id", "total",
                 "succeeded", "failed", "skipped", "spent_micros", "tokens_in", "tokens_out")
_SCHEMA = RunSchema()
SETTINGS = {"repeats": 1, "concurrency": None, "cache": True, "stream": False,
            "timeout_s": None, "max_retries": DEFAULT_MAX_RETRIES, "max_history_pairs": 10,
            "shards": None, "rag": None}


def run_views(items: list[Run]) -> list[dict[str, Any]]:
    """Dumped as they are made: a kept view then costs a runs page no dump (50 targets are
    hundreds of fields)."""
    return kept_run_views(items, lambda runs: [dumped(_SCHEMA, v) for v in _views(runs)])


def _views(items: list[Run]) -> list[dict[str, Any]]:
    if not items:
        return []
    ids = [r.id for r in items]
    targets = run_targets(session(), ids)
    scorers = pinned(session(), ids)
    versions = {r.dataset_version_id for r in items}
    datasets: dict[int, int] = {
        version_id: dataset_id for version_id, dataset_id in session().execute(
            select(DatasetVersion.id, DatasetVersion.dataset_id)
            .where(DatasetVersion.id.in_(versions)))}
    return [{**{c: getattr(r, c) for c in RUN_FIELDS},
             "dataset_id": datasets.get(r.dataset_version_id),
             "settings": {k: (r.settings or {}).get(k, default) for k, default in SETTINGS.items()},
             "targets": [{**{c: getattr(t, c) for c in TARGET_FIELDS}, "model_name": name}
                         for t, name in targets[r.id]],
             "scorers": [{"scorer_version_id": v.id, "scorer_id": c.id, "name": c.name,
                          "kind": c.kind, "version": v.number} for c, v in scorers[r.id]]}
            for r in items]


def run_view(run: Run) -> dict[str, Any]:
    return run_views([run])[0]
