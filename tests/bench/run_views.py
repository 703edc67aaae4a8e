"""The run page's heavy reads at size, for the reports section of `make bench` (reports.py
seeds them into its PostgreSQL database, in a project of their own):

- statistics of a 20,000-output run: 5,000 questions x 2 models x 2 repeats, scored by a
  two-judge panel with three criteria (40,000 scores), a reference check (20,000) and a
  reviewer's manual scores on 500 outputs, so every part of /statistics has work to do
  (bootstrap means, Wilson rates, criteria, flakiness, judge agreement, judge vs people);
- the results grid of a 100,000-row run (100,000 questions x 1 model, 1 in 40 failed, each
  succeeded one scored): its first page with the total, and the total of a filtered view.

The runs are planned with the real planner; outputs and scores are filled in SQL.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import text
from sqlalchemy.orm import Session

from assay.core.auth.models import User
from assay.core.datasets.service import create_dataset
from assay.core.llm.models import ModelConfig
from assay.core.projects.service import create_project
from assay.core.runs.planning import RunSpec, TargetSpec, plan_run
from assay.core.scoring.models import RunScorer, ScorerConfig, ScorerVersion

STATS_CASES = 5_000
STATS_REPEATS = 2
GRID_ROWS = 100_000
STATISTICS_BAR_MS = 300.0
GRID_COUNT_BAR_MS = 100.0

_FILL = """
UPDATE outputs SET
  status = CASE WHEN (case_id * 7 + target_id * 13 + repeat) % 40 = 0 THEN 'failed'
                ELSE 'succeeded' END,
  text = CASE WHEN (case_id * 7 + target_id * 13 + repeat) % 40 = 0 THEN NULL
              ELSE 'The answer to ' || case_id || ' is ' || (id % 97) END,
  error_class = CASE WHEN (case_id * 7 + target_id * 13 + repeat) % 40 = 0 THEN 'timeout' END,
  latency_ms = 150 + (id::bigint * 7919) % 900, tokens_in = 12 + id % 40,
  tokens_out = 20 + id % 200, cost_micros = 3 * (12 + id % 40) + 6 * (20 + id % 200),
  attempts = 1, finished_at = now()
WHERE run_id = :run
"""
_COUNTERS = """
UPDATE run_targets t SET succeeded = s.ok, failed = s.bad, spent_micros = s.cost
FROM (SELECT target_id, count(*) FILTER (WHERE status = 'succeeded') AS ok,
             count(*) FILTER (WHERE status = 'failed') AS bad, sum(cost_micros) AS cost
      FROM outputs WHERE run_id = :run GROUP BY target_id) s
WHERE t.id = s.target_id;
UPDATE runs r SET status = 'completed', succeeded = s.ok, failed = s.bad, spent_micros = s.cost,
  finished_at = now()
FROM (SELECT sum(succeeded) AS ok, sum(failed) AS bad, sum(spent_micros) AS cost
      FROM run_targets WHERE run_id = :run) s
WHERE r.id = :run
"""
# one score per succeeded output and source; the value depends on case, target, repeat
# and source, so judges agree mostly and repeats disagree on some cases
_SCORES = """
INSERT INTO scores (run_id, output_id, target_id, case_id, scorer_version_id, kind, source,
                    value, passed, criteria, rationale, evidence, severity, flags, details,
                    created_at, updated_at)
SELECT o.run_id, o.id, o.target_id, o.case_id, :version, :kind, src.name, v.value,
       v.value >= 0.6,
       CASE WHEN :criteria THEN json_build_object(
           'accuracy', v.value, 'clarity', LEAST(1.0, v.value + 0.1),
           'completeness', GREATEST(0.0, v.value - 0.1))::json
       ELSE '{}'::json END,
       'Scored by the bench', '[]', NULL, '[]', '{}', now(), now()
FROM outputs o
CROSS JOIN unnest(CAST(:sources AS text[])) WITH ORDINALITY AS src(name, n)
CROSS JOIN LATERAL (SELECT ROUND(LEAST(1.0, ((o.case_id * 37 + o.target_id * 11
       + CASE WHEN o.case_id % 9 = 0 THEN o.repeat * 29 ELSE 0 END
       + CASE WHEN o.case_id % 5 = 0 THEN src.n * 17 ELSE 0 END) % 101) / 100.0), 2)
       AS value) v
WHERE o.run_id = :run AND o.status = 'succeeded' AND o.id % :every = 0
"""


def _scorer(session: Session, project_id: int, name: str, kind: str) -> ScorerVersion:
    scorer = ScorerConfig(project_id=project_id, name=name, kind=kind)
    session.add(scorer)
    session.flush()
    version = ScorerVersion(scorer_id=scorer.id, number=1, params={})
    session.add(version)
    session.flush()
    return version


def _fill(session: Session, run_id: int) -> None:
    session.execute(text(_FILL), {"run": run_id})
    for statement in _COUNTERS.split(";"):
        session.execute(text(statement), {"run": run_id})


def _score(session: Session, run_id: int, version: ScorerVersion, kind: str,
           sources: list[str], criteria: bool = False, every: int = 1) -> None:
    session.execute(text(_SCORES), {"run": run_id, "version": version.id, "kind": kind,
                                    "sources": sources, "criteria": criteria,
                                    "every": every})
    session.add(RunScorer(run_id=run_id, scorer_version_id=version.id)) \
        if kind != "manual" else None


def seed(session: Session, user: User, model: ModelConfig, other: ModelConfig
         ) -> dict[str, Any]:
    """The two runs in a project of their own; returns what the timings need. The report
    rollups are rebuilt by the caller afterwards."""
    project = create_project(session, user, "Run views bench")
    for found in (model, other):  # the reports project's models, copied into this one
        session.add(ModelConfig(project_id=project.id, credential_id=found.credential_id,
                                name=found.name, model=found.model, params={}))
    session.flush()
    models = session.execute(text("SELECT id FROM model_configs WHERE project_id = :p "
                                  "ORDER BY id"), {"p": project.id}).scalars().all()
    small = create_dataset(session, user, project, "statistics", "questions", [
        {"input": {"question": f"question {i}"}} for i in range(STATS_CASES)])
    big = create_dataset(session, user, project, "grid", "questions", [
        {"input": {"question": f"question {i}"}, "tags": ["even" if i % 2 else "odd"]}
        for i in range(GRID_ROWS)])
    session.flush()
    stats_run = plan_run(session, user, project, RunSpec(
        dataset_id=small.id, targets=tuple(TargetSpec(m) for m in models),
        repeats=STATS_REPEATS, name="Statistics bench"))
    grid_run = plan_run(session, user, project, RunSpec(
        dataset_id=big.id, targets=(TargetSpec(models[0]),), name="Grid bench"))
    session.flush()
    for run in (stats_run, grid_run):
        _fill(session, run.id)
    judge = _scorer(session, project.id, "Judge panel", "llm_judge")
    check = _scorer(session, project.id, "Reference check", "icontains")
    manual = _scorer(session, project.id, "Reviewer", "manual")
    _score(session, stats_run.id, judge, "llm_judge", ["judge-a", "judge-b"], criteria=True)
    _score(session, stats_run.id, check, "icontains", [""])
    _score(session, stats_run.id, manual, "manual", [f"user:{user.id}"], every=40)
    _score(session, grid_run.id, check, "icontains", [""])
    outputs, scores = session.execute(text(
        "SELECT (SELECT count(*) FROM outputs WHERE run_id = :s),"
        " (SELECT count(*) FROM scores WHERE run_id = :s)"), {"s": stats_run.id}).one()
    grid_outputs = session.scalar(text("SELECT count(*) FROM outputs WHERE run_id = :g"),
                                  {"g": grid_run.id})
    assert outputs == STATS_CASES * 2 * STATS_REPEATS and grid_outputs == GRID_ROWS
    return {"project_id": project.id, "stats_run_id": stats_run.id,
            "grid_run_id": grid_run.id, "stats_outputs": int(outputs),
            "stats_scores": int(scores), "grid_rows": GRID_ROWS,
            "check_scorer_id": check.scorer_id}


def urls(ids: dict[str, Any]) -> dict[str, str]:
    """name -> the request timed (statistics: every scorer; grid: the first page, which
    carries the total, and a filtered view's)."""
    runs = f"/api/projects/{ids['project_id']}/runs"
    grid = f"{runs}/{ids['grid_run_id']}/grid"
    return {
        "statistics": f"{runs}/{ids['stats_run_id']}/statistics",
        "grid page": f"{grid}?limit=50",
        "grid failed": f"{grid}?limit=50&status=failed",
        "grid scored low": f"{grid}?limit=50&scorer_id={ids['check_scorer_id']}&score_max=0.3",
    }
