"""Rows for the report and export tests, written directly with the ORM so each test says
exactly which outputs ended how and what they scored: models and datasets through the real
services, then runs, targets, outputs, scorers, scores and comparisons row by row."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from assay.core.auth.models import User
from assay.core.base import utcnow
from assay.core.datasets.service import create_dataset, latest_version, version_cases
from assay.core.llm.service import ensure_demo_models
from assay.core.projects.models import Project
from assay.core.reports import rollups
from assay.core.runs.models import Output, Run, RunStatus, RunTarget
from assay.core.scoring.models import Comparison, RunScorer, Score, ScorerConfig, ScorerVersion
from assay.extensions import db

FAKE_URL = "http://127.0.0.1:9"


def models(owner: User, project: Project) -> list[int]:
    """The project's two demo models: "Fake Fast" and "Fake Smart"."""
    with db.factory() as session:
        found = ensure_demo_models(session, session.merge(owner), session.merge(project),
                                   FAKE_URL)
        session.commit()
        return [m.id for m in found]


@dataclass
class Data:
    """A dataset's ids: the dataset, its latest version and its cases in order."""

    dataset_id: int
    version_id: int
    case_ids: list[int]


def dataset(project: Project, cases: list[dict[str, Any]], name: str = "Reports") -> Data:
    with db.factory() as session:
        found = create_dataset(session, None, session.merge(project), name, "questions", cases)
        version = latest_version(session, found.id)
        ids = [c.id for c in version_cases(session, version.id)]
        session.commit()
        return Data(found.id, version.id, ids)


def questions(n: int) -> list[dict[str, Any]]:
    return [{"input": {"question": f"Question {i}?"}, "expected": {"output": f"Answer {i}"}}
            for i in range(n)]


@dataclass
class RunRows:
    run_id: int
    target_ids: list[int]
    outputs: list[int] = field(default_factory=list)


def run(project: Project, version_id: int, targets: list[tuple[int | None, str]],
        name: str = "Run", created_at: datetime | None = None,
        status: str = RunStatus.completed) -> RunRows:
    """A run with one target per (model id, label), in that order; no outputs yet."""
    with db.factory() as session:
        row = Run(project_id=project.id, name=name, dataset_version_id=version_id,
                  status=status, created_at=created_at or utcnow(), settings={})
        session.add(row)
        session.flush()
        made = [RunTarget(run_id=row.id, model_id=m, label=label, position=i)
                for i, (m, label) in enumerate(targets)]
        session.add_all(made)
        session.commit()
        return RunRows(row.id, [t.id for t in made])


def output(rows: RunRows, case_id: int, target: int = 0, repeat: int = 0, turn: int = 0,
           status: str = "succeeded", finished_at: datetime | None = None,
           **values: Any) -> int:
    """One output of target index `target`; succeeded with small defaults unless told."""
    defaults: dict[str, Any] = {"text": "An answer", "latency_ms": 100, "tokens_in": 10,
                                "tokens_out": 5, "cost_micros": 7, "attempts": 1}
    if status != "succeeded":
        defaults = {"attempts": 1 if status == "failed" else 0}
    with db.factory() as session:
        row = Output(run_id=rows.run_id, case_id=case_id, target_id=rows.target_ids[target],
                     repeat=repeat, turn=turn, status=status,
                     finished_at=finished_at or utcnow() if status != "pending" else None,
                     **{**defaults, **values})
        session.add(row)
        session.flush()
        rollups.rebuild(session)  # written around the engine: recount the report rollups
        session.commit()
        rows.outputs.append(row.id)
        return row.id


def scorer(project: Project, name: str = "Judge", kind: str = "llm_judge",
           versions: int = 1) -> tuple[int, list[int]]:
    """A scorer config with `versions` versions (numbered 1..n); (its id, version ids)."""
    with db.factory() as session:
        config = ScorerConfig(project_id=project.id, name=name, kind=kind)
        session.add(config)
        session.flush()
        made = [ScorerVersion(scorer_id=config.id, number=n + 1, params={})
                for n in range(versions)]
        session.add_all(made)
        session.commit()
        return config.id, [v.id for v in made]


def pin(run_id: int, version_id: int, position: int = 0) -> None:
    with db.factory() as session:
        session.add(RunScorer(run_id=run_id, scorer_version_id=version_id, position=position))
        session.commit()


def score(output_id: int, version_id: int, value: float | None, passed: bool | None,
          source: str = "", rationale: str = "", criteria: dict[str, float] | None = None,
          kind: str = "llm_judge", error: str | None = None) -> None:
    with db.factory() as session:
        found = session.get(Output, output_id)
        assert found is not None
        session.add(Score(run_id=found.run_id, output_id=output_id,
                          target_id=found.target_id, case_id=found.case_id,
                          scorer_version_id=version_id, kind=kind, source=source,
                          value=value, passed=passed, criteria=criteria or {},
                          rationale=rationale, error=error))
        session.flush()
        rollups.rebuild(session)
        session.commit()


def comparison(run_id: int, case_id: int, version_id: int, output_a: int, output_b: int,
               winner: str | None, judge: str = "judge-model") -> None:
    with db.factory() as session:
        session.add(Comparison(run_id=run_id, case_id=case_id, scorer_version_id=version_id,
                               judge_model=judge, output_a_id=output_a, output_b_id=output_b,
                               winner=winner, orders=[winner, winner]))
        session.commit()


def days_ago(n: int) -> datetime:
    return utcnow() - timedelta(days=n)
