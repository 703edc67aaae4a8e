"""The optional pairwise judge against the previous iteration (edison FR-EC-006, FR-RV-001
"win rate"): the `judging` phase between an iteration's run and its aggregation.

When the experiment has a pairwise judge (the wizard's judges.pairwise) and the iteration
has a predecessor with a run, each output of this iteration's run is compared with the
previous iteration's output of the same case by the same model and parameters (target
key), through the engine's pairwise scorer and its Comparison rows (core/scoring/
pairwise_runs.py: A is this iteration, B the previous; the rows belong to this run). Each
pair's maximum cost (every judge, both orders) is held against the project's and the
experiment's caps before it is judged and settled into the judging phase after
(core/experiments/spend.py). Pairs already compared are not planned again, so a job that
died mid-phase repeats at most the pairs in flight.

The verdicts give the win rate vs the previous iteration per model: per case, 1 when this
iteration won, 0.5 for a tie or a disagreement between the two orders, 0 when it lost
(averaged over the judges), with a case-clustered bootstrap interval (aggregate.py).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from sqlalchemy import select
from sqlalchemy.orm import Session, aliased

from assay.core.experiments import loop
from assay.core.experiments.aggregate import target_key
from assay.core.experiments.models import Experiment, Iteration, IterationStatus
from assay.core.llm.models import ModelConfig
from assay.core.runs.models import Output, Run, RunTarget
from assay.core.scoring.apply import PAIR_KINDS
from assay.core.scoring.judge_calls import JudgeModel, judge_models
from assay.core.scoring.models import Comparison, ScorerConfig, ScorerVersion
from assay.core.scoring.pairwise_runs import Pair, build_pairwise, pair_bound, plan_pairs
from assay.core.scoring.service import latest_versions
from assay.scorers.base import PairwiseScorer, Subject

I = IterationStatus  # noqa: E741
WIN = {"a": 1.0, "tie": 0.5, None: 0.5, "b": 0.0}  # a: this iteration, b: the previous one


@dataclass
class PairwiseJob:
    iteration_id: int
    experiment_id: int
    project_id: int
    run_id: int
    base_run_id: int
    version_id: int
    scorer: PairwiseScorer
    judges: dict[str, JudgeModel]
    pairs: list[Pair] = field(default_factory=list)


def scorer_id(session: Session, experiment: Experiment) -> int | None:
    """The experiment's pairwise judge scorer, if it has one."""
    ids = list(experiment.scorer_ids or [])
    if not ids:
        return None
    kinds = dict(session.execute(select(ScorerConfig.id, ScorerConfig.kind).where(
        ScorerConfig.id.in_(ids))).all())
    return next((i for i in ids if kinds.get(i) in PAIR_KINDS), None)


def previous(session: Session, iteration: Iteration) -> Iteration | None:
    """The latest earlier iteration that has a run."""
    return session.scalar(select(Iteration).where(
        Iteration.experiment_id == iteration.experiment_id,
        Iteration.number < iteration.number, Iteration.run_id.is_not(None))
        .order_by(Iteration.number.desc()).limit(1))


def applies(session: Session, experiment: Experiment, iteration: Iteration, run: Run) -> bool:
    """Whether the iteration's run is followed by the pairwise phase."""
    return run.status in ("completed", "partial") and iteration.number > 1 \
        and scorer_id(session, experiment) is not None \
        and previous(session, iteration) is not None


def _targets(session: Session, run_id: int) -> dict[str, int]:
    """target key -> the run's target id."""
    return {target_key(name, params): target_id for target_id, name, params in session.execute(
        select(RunTarget.id, ModelConfig.name, RunTarget.params)
        .outerjoin(ModelConfig, ModelConfig.id == RunTarget.model_id)
        .where(RunTarget.run_id == run_id))}


def prepare(session: Session, iteration_id: int, secret_key: str) -> PairwiseJob | None:
    """The pairs still to judge, or None when the iteration is not judging (or paused, or
    has nothing left to compare with: then it moves on to aggregating)."""
    iteration = session.get(Iteration, iteration_id)
    if iteration is None or iteration.status != I.judging or iteration.paused:
        return None
    experiment = session.get(Experiment, iteration.experiment_id)
    before = previous(session, iteration)
    sid = scorer_id(session, experiment) if experiment is not None else None
    if experiment is None or before is None or sid is None or iteration.run_id is None \
            or before.run_id is None:  # the judge or the other run went away meanwhile
        done(session, iteration.id)
        return None
    version = latest_versions(session, [sid])[sid]
    scorer = session.get(ScorerConfig, sid)
    assert scorer is not None
    built = build_pairwise(scorer.kind, version.params)
    job = PairwiseJob(iteration.id, experiment.id, experiment.project_id, iteration.run_id,
                      before.run_id, version.id, built,
                      judge_models(session, experiment.project_id, built.judges, secret_key))
    mine, theirs = _targets(session, iteration.run_id), _targets(session, before.run_id)
    for key in sorted(set(mine) & set(theirs)):
        job.pairs.extend(plan_pairs(session, iteration.run_id, version.id, built.judges,
                                    mine[key], theirs[key], before.run_id).pairs)
    return job


def judging(session: Session, iteration_id: int) -> bool:
    """Whether the phase should go on (not paused, cancelled or ended meanwhile)."""
    row = session.execute(select(Iteration.status, Iteration.paused).where(
        Iteration.id == iteration_id)).one_or_none()
    return row is not None and row.status == I.judging and not row.paused


def max_pair_cost(job: PairwiseJob, a: Subject, b: Subject) -> int:
    """The most judging one pair can cost: every judge, asked in both orders."""
    return pair_bound(job.scorer, job.judges, a, b)


def done(session: Session, iteration_id: int) -> bool:
    """judging -> aggregating (unless paused); True when this call moved it. Commits. Pairs
    the budget left unjudged stay so: the win rate counts the cases judged, and the stop
    rules end the experiment for its budget."""
    moved = loop.move(session, iteration_id, I.aggregating, {I.judging}, unpaused=True)
    session.commit()
    return moved


def win_values(session: Session, iteration: Iteration, experiment: Experiment
               ) -> dict[str, dict[int, list[float]]] | None:
    """target key -> case -> each judge's verdict as a win value for this iteration, from
    the pairwise judgements against the previous iteration; None when the experiment has
    no pairwise judge or the iteration nothing to compare with."""
    sid = scorer_id(session, experiment)
    before = previous(session, iteration)
    if sid is None or before is None or iteration.run_id is None:
        return None
    a, b = aliased(Output), aliased(Output)
    rows = session.execute(
        select(Comparison.case_id, Comparison.winner, ModelConfig.name, RunTarget.params)
        .join(ScorerVersion, ScorerVersion.id == Comparison.scorer_version_id)
        .join(a, a.id == Comparison.output_a_id).join(b, b.id == Comparison.output_b_id)
        .join(RunTarget, RunTarget.id == a.target_id)
        .outerjoin(ModelConfig, ModelConfig.id == RunTarget.model_id)
        .where(Comparison.run_id == iteration.run_id, ScorerVersion.scorer_id == sid,
               Comparison.error.is_(None), a.run_id == iteration.run_id,
               b.run_id == before.run_id))
    found: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    for case_id, winner, name, params in rows:
        found[target_key(name, params)][case_id].append(WIN[winner])
    return {k: dict(v) for k, v in found.items()}
