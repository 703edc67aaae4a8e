"""Scorers, scores and runs for the statistics tests, written through the core services and
the ORM: each test states exactly which output got which score from which source."""

from __future__ import annotations

import itertools
from typing import Any

from sqlalchemy import insert, select, update

from assay.core.datasets.models import Case
from assay.core.projects.models import Project
from assay.core.runs.models import CellStatus, Output, Run, RunStatus, RunTarget
from assay.core.scoring.models import RunScorer, Score, ScorerVersion
from assay.core.scoring.service import add_version, create_scorer, get_scorer
from assay.extensions import db
from tests.factories import PlannedRun

RUBRIC = {"criteria": [
    {"name": "Accuracy", "description": "The answer is factually right.", "weight": 0.5,
     "scale": "1-5"},
    {"name": "Clarity", "description": "The answer is easy to follow.", "weight": 0.5,
     "scale": "1-5"}]}
KINDS = {
    "icontains": {"value": "answer"},
    "manual": {"scale": "1-5"},
    "pairwise_judge": {"judges": ["judge-a"]},
}
_names = itertools.count(1)


def make_scorer(project_id: int, kind: str = "icontains", name: str | None = None,
                judges: tuple[str, ...] = ("judge-a",)) -> int:
    """A scorer of the project (version 1); its version id."""
    params: dict[str, Any] = KINDS.get(kind, {"rubric": RUBRIC, "judges": list(judges)})
    with db.factory() as session:
        project = session.get(Project, project_id)
        assert project is not None
        _, version = create_scorer(session, None, project, {
            "name": name or f"{kind} {next(_names)}", "kind": kind,
            "params": params})
        session.commit()
        return version.id


def new_version(project_id: int, version_id: int) -> int:
    """Version 2 of the scorer of `version_id`, same params."""
    with db.factory() as session:
        project = session.get(Project, project_id)
        old = session.get(ScorerVersion, version_id)
        assert project is not None and old is not None
        scorer = get_scorer(session, project, old.scorer_id)
        version = add_version(session, None, project, scorer, {"params": old.params})
        session.commit()
        return version.id


def pin(run_id: int, *version_ids: int) -> None:
    with db.factory() as session:
        session.add_all(RunScorer(run_id=run_id, scorer_version_id=version_id,
                                  position=position)
                        for position, version_id in enumerate(version_ids))
        session.commit()


def outputs(planned: PlannedRun) -> dict[tuple[int, int, int, int], int]:
    """(case index, target index, repeat, turn) -> output id; every output succeeded."""
    with db.factory() as session:
        session.execute(update(Output).where(Output.run_id == planned.run_id).values(
            status=CellStatus.succeeded, text="An answer", attempts=1))
        session.execute(update(Run).where(Run.id == planned.run_id).values(
            status=RunStatus.completed))
        rows = session.execute(select(Output.id, Output.case_id, Output.target_id,
                                      Output.repeat, Output.turn)
                               .where(Output.run_id == planned.run_id)).all()
        session.commit()
    return {(planned.case_ids.index(case_id), planned.target_ids.index(target_id), repeat,
             turn): output_id for output_id, case_id, target_id, repeat, turn in rows}


def score(run_id: int, output_id: int, version_id: int, value: float | None,
          passed: bool | None = None, source: str = "", kind: str = "icontains",
          criteria: dict[str, float] | None = None) -> None:
    with db.factory() as session:
        found = session.get(Output, output_id)
        assert found is not None
        session.add(Score(run_id=run_id, output_id=output_id, target_id=found.target_id,
                          case_id=found.case_id, scorer_version_id=version_id,
                          kind=kind, source=source, value=value, passed=passed,
                          criteria=criteria or {},
                          error="The scorer failed" if value is None else None))
        session.commit()


def set_case(case_id: int, **values: Any) -> None:
    with db.factory() as session:
        session.execute(update(Case).where(Case.id == case_id).values(**values))
        session.commit()


def rerun(planned: PlannedRun, labels: list[str], model_from: list[int]) -> PlannedRun:
    """Another run on the same dataset version as `planned`: one target per label, each on
    the model of `planned`'s target at the index in `model_from`; every output succeeded."""
    with db.factory() as session:
        first = session.get(Run, planned.run_id)
        assert first is not None
        models = {t.id: t.model_id for t in session.scalars(
            select(RunTarget).where(RunTarget.run_id == first.id))}
        run = Run(project_id=first.project_id, name="Rerun", status=RunStatus.completed,
                  dataset_version_id=first.dataset_version_id,
                  total=len(planned.case_ids) * len(labels), settings={"repeats": 1})
        session.add(run)
        session.flush()
        targets = [RunTarget(run_id=run.id, label=label, position=i,
                             model_id=models[planned.target_ids[model_from[i]]],
                             total=len(planned.case_ids))
                   for i, label in enumerate(labels)]
        session.add_all(targets)
        session.flush()
        session.execute(insert(Output), [
            {"run_id": run.id, "case_id": case_id, "target_id": t.id, "repeat": 0, "turn": 0,
             "status": CellStatus.succeeded, "text": "An answer", "attempts": 1}
            for case_id in planned.case_ids for t in targets])
        session.commit()
        return PlannedRun(run.id, [t.id for t in targets], planned.case_ids)
