"""The scorer versions a run's statistics can speak of: those the run pins, and those with
scores in it (reviewers may score a run with a manual scorer it did not pin). Pairwise
judges are left out: they compare outputs (comparisons), they do not score them."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import exists, select
from sqlalchemy.orm import Session

from assay.core.errors import Invalid, NotFound
from assay.core.projects.models import Project
from assay.core.runs.models import Run
from assay.core.scoring.apply import HUMAN_KINDS, PAIR_KINDS
from assay.core.scoring.models import RunScorer, Score, ScorerConfig, ScorerVersion

FIELD = "scorer_version_id"


@dataclass(frozen=True)
class ScorerInfo:
    version_id: int
    scorer_id: int
    name: str
    kind: str
    number: int
    pinned: bool  # the run applies it; False: only scored by hand

    @property
    def human(self) -> bool:
        return self.kind in HUMAN_KINDS

    @property
    def label(self) -> str:
        return f"{self.name!r} v{self.number} (scorer_version_id {self.version_id})"


def scorers_of_run(session: Session, run: Run) -> list[ScorerInfo]:
    """Pinned versions in the run's order, then versions only scored by hand, by id."""
    pinned = session.execute(
        select(ScorerVersion.id, ScorerConfig.id, ScorerConfig.name, ScorerConfig.kind,
               ScorerVersion.number)
        .join(RunScorer, RunScorer.scorer_version_id == ScorerVersion.id)
        .join(ScorerConfig, ScorerConfig.id == ScorerVersion.scorer_id)
        .where(RunScorer.run_id == run.id)
        .order_by(RunScorer.position, ScorerVersion.id)).all()
    pinned_ids = {row[0] for row in pinned}
    # the project's versions with a score in the run: one index probe each, where a
    # DISTINCT over the run's scores read every one of them (60,000 in a 20,000-output run)
    scored = exists().where(Score.run_id == run.id, Score.scorer_version_id == ScorerVersion.id)
    extra = session.execute(
        select(ScorerVersion.id, ScorerConfig.id, ScorerConfig.name, ScorerConfig.kind,
               ScorerVersion.number)
        .join(ScorerConfig, ScorerConfig.id == ScorerVersion.scorer_id)
        .where(ScorerConfig.project_id == run.project_id, scored)
        .order_by(ScorerVersion.id)).all()
    found = [ScorerInfo(*row, pinned=True) for row in pinned]
    found += [ScorerInfo(*row, pinned=False) for row in extra if row[0] not in pinned_ids]
    return [info for info in found if info.kind not in PAIR_KINDS]


def _choices(found: list[ScorerInfo]) -> str:
    return ", ".join(info.label for info in found)


def chosen_scorer(session: Session, project: Project, run: Run,
                  version_id: int | None) -> ScorerInfo:
    """The version asked for (404 when the project has no such version; 422 when the run
    neither pins it nor holds scores of it), or the run's first when none was asked for."""
    found = scorers_of_run(session, run)
    if version_id is None:
        if not found:
            raise Invalid("This run has no scorers and no scores", {"query": {FIELD: [
                "The run pins no scorer and nobody scored it by hand: start a run with "
                "scorers, or score this one's outputs with a manual scorer"]}})
        return found[0]
    for info in found:
        if info.version_id == version_id:
            return info
    row = session.execute(
        select(ScorerConfig.name, ScorerConfig.kind, ScorerVersion.number)
        .join(ScorerVersion, ScorerVersion.scorer_id == ScorerConfig.id)
        .where(ScorerVersion.id == version_id, ScorerConfig.project_id == project.id)
    ).one_or_none()
    if row is None:
        raise NotFound("Scorer version not found")
    name, kind, number = row
    if kind in PAIR_KINDS:
        message = (f"{name!r} is a pairwise judge: it compares outputs instead of scoring "
                   f"them; choose a pointwise scorer")
    else:
        message = f"{name!r} v{number} is not pinned by this run and has no scores in it; "
        message += (f"choose one of: {_choices(found)}" if found
                    else "the run has no scorers: score its outputs with a manual scorer first")
    raise Invalid("The scorer is not part of the run", {"query": {FIELD: [message]}})


def matching_scorer(base: Run, found: list[ScorerInfo], chosen: ScorerInfo) -> ScorerInfo:
    """The scorer of the base run to compare `chosen` with: the same version, else the
    version of the same scorer the base run used (each run pins the version that was
    latest when it started), else a 422."""
    for info in found:
        if info.version_id == chosen.version_id:
            return info
    for info in found:
        if info.scorer_id == chosen.scorer_id:
            return info
    raise Invalid("The base run has no scores of this scorer", {"query": {FIELD: [
        f"The run {base.name!r} (id {base.id}) neither pins nor holds scores of "
        f"{chosen.name!r}; choose a scorer both runs used"
        + (f", e.g. one of: {_choices(found)}" if found else "")]}})
