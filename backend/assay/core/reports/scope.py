"""What a project report covers: the filters a user gives (a scorer and which of its
versions, a date range, a dataset), checked against the project, and the SQL conditions
they become.

Versions of a scorer are pooled by default. A run pins the scorer version that was latest
when it started, so a leaderboard across runs restricted to the newest version would drop
every run made before the scorer's last edit; `versions="latest"` is there for a strict
like-for-like reading. The report says which version numbers it used.

Dates are whole UTC days, both ends included, matched against when each output finished
(the day its cost was spent)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time
from typing import Literal

from sqlalchemy import ColumnElement, select
from sqlalchemy.orm import Session

from assay.core.datasets.models import Dataset, DatasetVersion
from assay.core.errors import Invalid
from assay.core.projects.models import Project
from assay.core.runs.models import Output, Run
from assay.core.scoring.models import ScorerConfig, ScorerVersion

Versions = Literal["all", "latest"]
VERSION_CHOICES: tuple[Versions, ...] = ("all", "latest")


@dataclass(frozen=True)
class ReportFilter:
    scorer_id: int | None = None
    versions: Versions = "all"
    date_from: date | None = None
    date_to: date | None = None
    dataset_id: int | None = None


@dataclass(frozen=True)
class ScorerChoice:
    """The scorer a report reads, and the versions (ids and numbers) it pools."""

    id: int
    name: str
    kind: str
    version_ids: tuple[int, ...]
    version_numbers: tuple[int, ...]

    def key(self, name: str) -> str:
        """What a run keeps for readers of these versions under `name` (runs/cache.py)."""
        return f"{name}:" + ",".join(str(v) for v in self.version_ids)


@dataclass(frozen=True)
class Scope:
    project_id: int
    scorer: ScorerChoice | None
    start: datetime | None  # first instant included
    end: datetime | None  # last instant included
    dataset_id: int | None


def query_error(field: str, message: str, summary: str) -> Invalid:
    return Invalid(summary, {"query": {field: [message]}})


def scorer_choice(session: Session, project_id: int, scorer_id: int,
                  versions: Versions = "all") -> ScorerChoice:
    """The project's scorer `scorer_id` with the versions to pool (422 when it is not the
    project's: a filter naming something else is a wrong filter, not an empty report)."""
    scorer = session.get(ScorerConfig, scorer_id)
    if scorer is None or scorer.project_id != project_id:
        raise query_error("scorer_id", "Not a scorer of this project", "No such scorer")
    rows = session.execute(select(ScorerVersion.id, ScorerVersion.number)
                           .where(ScorerVersion.scorer_id == scorer.id)
                           .order_by(ScorerVersion.number)).all()
    if versions == "latest":
        rows = rows[-1:]
    return ScorerChoice(scorer.id, scorer.name, scorer.kind,
                        tuple(r.id for r in rows), tuple(r.number for r in rows))


def resolve(session: Session, project: Project, filters: ReportFilter) -> Scope:
    if filters.versions not in VERSION_CHOICES:
        raise query_error("versions", "One of: all, latest", "Unknown versions choice")
    if filters.date_from and filters.date_to and filters.date_to < filters.date_from:
        raise query_error("date_to", "Must not be before date_from",
                          "The date range ends before it starts")
    if filters.dataset_id is not None:
        dataset = session.get(Dataset, filters.dataset_id)
        if dataset is None or dataset.project_id != project.id:
            raise query_error("dataset_id", "Not a dataset of this project", "No such dataset")
    scorer = None
    if filters.scorer_id is not None:
        scorer = scorer_choice(session, project.id, filters.scorer_id, filters.versions)
    start = datetime.combine(filters.date_from, time.min, UTC) if filters.date_from else None
    end = datetime.combine(filters.date_to, time.max, UTC) if filters.date_to else None
    return Scope(project.id, scorer, start, end, filters.dataset_id)


def run_conditions(scope: Scope) -> list[ColumnElement[bool]]:
    """The runs in scope: the project's, on the dataset when one is chosen."""
    found: list[ColumnElement[bool]] = [Run.project_id == scope.project_id]
    if scope.dataset_id is not None:
        found.append(Run.dataset_version_id.in_(
            select(DatasetVersion.id).where(DatasetVersion.dataset_id == scope.dataset_id)))
    return found


def output_conditions(scope: Scope) -> list[ColumnElement[bool]]:
    """The outputs in scope (joined with their run): finished within the dates."""
    found = [Output.run_id == Run.id, *run_conditions(scope)]
    if scope.start is not None:
        found.append(Output.finished_at >= scope.start)
    if scope.end is not None:
        found.append(Output.finished_at <= scope.end)
    return found
