"""Filling what a stopped run's readers keep (cache.py) before anyone reads it, so the first
look at a run that just ended, or at a report over it, is as fast as the second (issue 19:
a 20,000-output run's statistics took 2 s on a first read, a trend of 20 such runs 20 s).

Run by a job (jobs/warm.py) when a run stops and when its scores change outside the
engine's batches (a scoring job, a reviewer's score). Each entry is filled through the
reader's own code, under the reader's own key, for what a reader asks first: the run page's
statistics (every scorer) and summary, the grid's total with every target visible, and for
each scorer that scored the run (its versions pooled, and its latest alone) the run's trend
point and its date-range leaderboard sums (and both per day, for a run whose outputs
finished on several days: a range that cuts it reads those). An entry already valid is left
alone. The project's leaderboard (no date range) reads no run's entries but the report
rollups; its first read's cost is drawing the intervals (a tenth of a second per model over
10,000 cases), so it is read too (warm_leaderboards), and its intervals go to the store the
API shares (uncertainty.share). The caller commits."""

from __future__ import annotations

from sqlalchemy import exists, select
from sqlalchemy.orm import Session

from assay.core.projects.models import Project
from assay.core.reports import range_scores, rollups, trend
from assay.core.reports.leaderboard import leaderboard
from assay.core.reports.scope import (
    VERSION_CHOICES,
    ReportFilter,
    ScorerChoice,
    Versions,
    scorer_choice,
)
from assay.core.runs import cache, grid, results
from assay.core.runs.models import Run
from assay.core.scoring.models import Score
from assay.core.scoring.run_scorers import scorers_of_run
from assay.core.scoring.statistics import statistics_view


def _choices(session: Session, run: Run) -> list[tuple[Versions, ScorerChoice]]:
    """Each scorer with a value in the run, read as the reports read it: its versions
    pooled (the default), and its latest version alone when that differs and scored it."""
    found: dict[tuple[int, ...], tuple[Versions, ScorerChoice]] = {}
    for scorer_id in dict.fromkeys(info.scorer_id for info in scorers_of_run(session, run)):
        for versions in VERSION_CHOICES:
            choice = scorer_choice(session, run.project_id, scorer_id, versions)
            if choice.version_ids not in found and session.scalar(select(exists().where(
                    Score.run_id == run.id, Score.scorer_version_id.in_(choice.version_ids),
                    Score.value.is_not(None)))):
                found[choice.version_ids] = (versions, choice)
    return list(found.values())


def warm(session: Session, run_id: int) -> bool:
    """Fill the run's entries; False when there is nothing to keep (gone, or running)."""
    run = session.get(Run, run_id)  # the stamp is taken before the data is read
    if run is None or cache.stamp(run) is None:
        return False
    statistics_view(session, run)
    results.summary(session, run)
    grid.warm_total(session, run)
    by_day = rollups.across_days(session, run.id)  # a date range can cut it
    for _, choice in _choices(session, run):
        trend.warm_point(session, run, choice, by_day)
        range_scores.warm_sums(session, run, choice, by_day)
    return True


def warm_leaderboards(session: Session, run_id: int) -> None:
    """Read the project's leaderboard of each scorer of the run, so that its intervals are
    in the store shared with the API (nothing is written to the database)."""
    run = session.get(Run, run_id)
    project = session.get(Project, run.project_id) if run is not None else None
    if run is None or project is None or cache.stamp(run) is None:
        return
    for versions, choice in _choices(session, run):
        leaderboard(session, project, ReportFilter(scorer_id=choice.id, versions=versions))
