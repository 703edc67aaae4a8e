"""The steps after an iteration's run: aggregating (numbers, stop rules) and refining (the
refiner's suggestion, or none). Each step starts from the iteration's status and moves it
with a conditional UPDATE, so a step repeated after a crash picks up where it was.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from assay.core import ledger
from assay.core.base import utcnow
from assay.core.datasets.models import Case
from assay.core.experiments import aggregate as agg
from assay.core.experiments import config as config_
from assay.core.experiments import judging, loop, pairwise, spend
from assay.core.experiments import refiner as ref
from assay.core.experiments.aggregate import target_key
from assay.core.experiments.models import (
    Experiment,
    ExperimentStatus,
    Iteration,
    IterationStatus,
    StopReason,
    Suggestion,
    SuggestionStatus,
)
from assay.core.llm.models import ModelConfig
from assay.core.llm.secrets import credential_key
from assay.core.prompts.models import PromptVersion
from assay.core.runs.models import Output, Run, RunTarget
from assay.core.scoring.models import Score
from assay.providers.base import Endpoint
from assay.providers.registry import api_key_for

I = IterationStatus  # noqa: E741
JUDGE_KIND = "llm_judge"
REFINE, REVIEW, STOPPED, PAUSED, NOTHING = "refine", "review", "stopped", "paused", "nothing"
AGGREGATE = "aggregate"


def _weights(experiment: Experiment) -> dict[str, float]:
    criteria = (experiment.config.get("rubric") or {}).get("criteria") or []
    return {str(c["name"]): float(c["weight"]) for c in criteria}


def _score_rows(session: Session, run_id: int) -> list[tuple[Score, str]]:
    rows = session.execute(
        select(Score, ModelConfig.name, RunTarget.params)
        .join(RunTarget, RunTarget.id == Score.target_id)
        .outerjoin(ModelConfig, ModelConfig.id == RunTarget.model_id)
        .where(Score.run_id == run_id, Score.kind == JUDGE_KIND, Score.value.is_not(None))
        .order_by(Score.id))
    return [(score, target_key(name, params)) for score, name, params in rows]


def aggregate_iteration(session: Session, iteration_id: int,
                        budget_reached: str | None = None) -> str:
    """aggregating -> refining (or the experiment ends on a stop rule; `budget_reached`:
    the judging phase stopped for want of budget, and says so). Returns what comes next:
    REFINE, STOPPED, PAUSED or NOTHING (not aggregating)."""
    iteration = session.get(Iteration, iteration_id)
    if iteration is None or iteration.status != I.aggregating:
        return NOTHING
    if iteration.paused:
        return PAUSED
    experiment = session.get(Experiment, iteration.experiment_id)
    run = session.get(Run, iteration.run_id) if iteration.run_id else None
    assert experiment is not None
    store_aggregate(session, experiment, iteration)
    if run is not None and run.status == "failed":
        loop.finish(session, experiment, iteration, StopReason.failed,
                    f"Every cell of the iteration's run failed: {run.error or 'see the run'}",
                    ExperimentStatus.failed)
        session.commit()
        return STOPPED
    rule = loop.stop_rule(session, experiment, iteration)
    if rule is None and run is not None and run.status == "budget_exceeded":
        rule = StopReason.budget, f"Budget reached during the run: {run.error or ''}".strip()
    if rule is None and budget_reached is not None:
        rule = StopReason.budget, budget_reached
    if rule is not None:
        loop.finish(session, experiment, iteration, *rule)
        session.commit()
        return STOPPED
    moved = loop.move(session, iteration.id, I.refining, {I.aggregating}, unpaused=True)
    session.commit()
    return REFINE if moved else PAUSED


def store_aggregate(session: Session, experiment: Experiment, iteration: Iteration
                    ) -> dict[str, Any]:
    """The iteration's numbers from its run's rubric scores, written on the iteration (the
    dashboard, the stop rules and the final report all read them from there)."""
    weights = _weights(experiment)
    rows = [agg.Row(label, score.case_id, {k: v for k, v in (score.criteria or {}).items()
                                           if k in weights})
            for score, label in _score_rows(session, iteration.run_id or 0)]
    previous = session.scalar(select(Iteration.aggregate).where(
        Iteration.experiment_id == experiment.id, Iteration.number < iteration.number,
        Iteration.aggregate.is_not(None)).order_by(Iteration.number.desc()).limit(1))
    wins = pairwise.win_values(session, iteration, experiment)
    result = agg.aggregate(rows, weights, experiment.refinement_case_ids or [],
                           experiment.holdout_case_ids or [], previous,
                           pairwise=wins) if weights else {}
    if result:
        result["judging"] = judged(session, experiment, iteration.run_id or 0)
    composite, refinement, holdout = agg.headline(result) if result else (None, None, None)
    session.execute(update(Iteration).where(Iteration.id == iteration.id).values(
        aggregate=result, composite=composite, refinement_composite=refinement,
        holdout_composite=holdout, weakest_criteria=result.get("weakest", []))
        .execution_options(synchronize_session=False))
    session.expire(iteration)
    _choose_best(session, experiment)
    return result


def judged(session: Session, experiment: Experiment, run_id: int) -> dict[str, Any]:
    """How many outputs the rubric judges scored and where they failed (judging.py)."""
    rows = [judging.Judged(target_key(name, params), output_id, source, value, error,
                           details or {})
            for output_id, source, value, error, details, name, params in session.execute(
                select(Score.output_id, Score.source, Score.value, Score.error,
                       Score.details, ModelConfig.name, RunTarget.params)
                .join(RunTarget, RunTarget.id == Score.target_id)
                .outerjoin(ModelConfig, ModelConfig.id == RunTarget.model_id)
                .where(Score.run_id == run_id, Score.kind == JUDGE_KIND))]
    names = judging.judge_names(session, experiment.project_id, {r.judge for r in rows})
    return judging.summary(rows, names)


def _choose_best(session: Session, experiment: Experiment) -> None:
    """The best prompt version so far: the highest held-out composite (all cases when no
    case is held out). Written with its own UPDATE: the stop rules refresh the experiment
    right after, which would drop a change held on the object."""
    rows = session.execute(select(Iteration.prompt_version_id, Iteration.holdout_composite,
                                  Iteration.composite).where(
        Iteration.experiment_id == experiment.id)).all()
    scored = [(h if h is not None else c, pv) for pv, h, c in rows
              if (h if h is not None else c) is not None]
    if scored:
        session.execute(update(Experiment).where(Experiment.id == experiment.id).values(
            best_prompt_version_id=max(scored)[1]).execution_options(
            synchronize_session=False))
        session.expire(experiment, ["best_prompt_version_id"])


# --- refining -------------------------------------------------------------------------------


@dataclass
class RefineJob:
    iteration_id: int
    experiment_id: int
    project_id: int
    model_id: int
    model: ref.RefinerModel
    brief: ref.Brief
    exemplars: list[dict[str, Any]]


def refiner_model(session: Session, experiment: Experiment, secret_key: str
                  ) -> tuple[int, ref.RefinerModel]:
    chosen = config_.refiner(experiment.config)
    model = None
    if isinstance(chosen, int):
        model = session.get(ModelConfig, chosen)
    elif isinstance(chosen, str):  # judges are named by model name in scorer params
        model = session.scalar(select(ModelConfig).where(
            ModelConfig.project_id == experiment.project_id, ModelConfig.name == chosen))
    if model is None or model.project_id != experiment.project_id:
        raise loop.LoopError("The experiment's refiner model is gone (judges.refiner, or "
                             "its first judge)")
    credential = model.credential
    key = credential_key(secret_key, credential)
    endpoint = Endpoint(credential.kind, credential.base_url, api_key_for(credential.kind, key),
                        dict(credential.config or {}), credential.id)
    params = {k: v for k, v in (model.params or {}).items() if k != "stream"}
    return model.id, ref.RefinerModel(endpoint, model.model, {**params, "temperature": 0},
                                      model.input_price_per_mtok_micros,
                                      model.output_price_per_mtok_micros)


def prepare_refinement(session: Session, iteration_id: int, secret_key: str
                       ) -> RefineJob | None:
    """What the refiner needs, or None when the iteration is not refining (or paused)."""
    iteration = session.get(Iteration, iteration_id)
    if iteration is None or iteration.status != I.refining or iteration.paused:
        return None
    experiment = session.get(Experiment, iteration.experiment_id)
    version = session.get(PromptVersion, iteration.prompt_version_id)
    assert experiment is not None and version is not None
    rubric = (experiment.config.get("rubric") or {}).get("criteria") or []
    models = (iteration.aggregate or {}).get("models") or {}
    weak = ref.weak_criteria(agg.criterion_means(models, "refinement"), rubric) if models \
        else []
    refinement = set(experiment.refinement_case_ids or [])
    candidates = []
    for score, output, case_input, name, params in session.execute(
            select(Score, Output.text, Case.input, ModelConfig.name, RunTarget.params)
            .join(Output, Output.id == Score.output_id).join(Case, Case.id == Score.case_id)
            .join(RunTarget, RunTarget.id == Score.target_id)
            .outerjoin(ModelConfig, ModelConfig.id == RunTarget.model_id)
            .where(Score.run_id == iteration.run_id, Score.kind == JUDGE_KIND,
                   Score.value.is_not(None), Score.case_id.in_(refinement or {0}))):
        candidates.append(ref.Exemplar(score.case_id, case_input, output or "",
                                       dict(score.criteria or {}),
                                       dict((score.details or {}).get("rationales") or {}),
                                       target_key(name, params)))
    exemplars = ref.failing_exemplars(candidates, weak, refinement)
    rejected = [{"diff": s.diff or "", "reason": s.reject_reason or ""}
                for s in session.scalars(select(Suggestion).where(
                    Suggestion.iteration_id == iteration.id,
                    Suggestion.status == SuggestionStatus.rejected))]
    model_id, model = refiner_model(session, experiment, secret_key)
    brief = ref.Brief(str((experiment.config.get("objective") or {}).get("goal") or ""),
                      rubric, version.template, weak, exemplars, rejected)
    shown = [{"case_id": e.case_id, "input": e.input, "output": e.output, "model": e.model,
              "scores": dict(e.scores), "rationales": dict(e.rationales)} for e in exemplars]
    return RefineJob(iteration.id, experiment.id, experiment.project_id, model_id, model,
                     brief, shown)


class Purse:
    """The refiner's calls, held against the project's and the experiment's caps like run
    cells (core/experiments/spend.py) and settled to their actual cost."""

    def __init__(self, factory: Callable[[], Session], job: RefineJob) -> None:
        self.factory, self.job = factory, job

    def _hold(self, micros: int) -> spend.Hold:
        return spend.Hold(self.job.project_id, self.job.experiment_id, micros)

    def reserve(self, micros: int) -> bool:
        with self.factory() as session:
            try:
                spend.reserve(session, self.job.project_id, self.job.experiment_id, micros)
            except spend.BudgetExceeded:
                return False
            session.commit()
            return True

    def settle(self, reserved: int, spent: int, tokens_in: int, tokens_out: int,
               calls: int) -> None:
        tab = ledger.Tab()
        tab.add(self.job.model_id, calls, spent, tokens_in, tokens_out)
        with self.factory() as session:
            spend.settle(session, self._hold(reserved), "refinement", tab,
                         self.job.iteration_id)
            session.commit()


def record_refinement(session: Session, job: RefineJob, outcome: ref.Outcome) -> str:
    """The suggestion (or its absence) written; refining -> awaiting_review, or the
    experiment ends for want of a suggestion. Returns REVIEW, STOPPED or NOTHING."""
    iteration = session.get(Iteration, job.iteration_id)
    if iteration is None or iteration.status != I.refining:
        return NOTHING  # cancelled meanwhile: the spend is counted, the suggestion dropped
    found = outcome.diff is not None
    suggestion = Suggestion(
        iteration_id=iteration.id,
        status=SuggestionStatus.pending if found else SuggestionStatus.none,
        diff=outcome.diff, original_diff=outcome.diff, note=outcome.note,
        no_suggestion_reason=outcome.reason, attempts=outcome.attempts,
        validation_errors=outcome.errors, attempt_failures=outcome.failures,
        exemplars=job.exemplars,
        cost_micros=outcome.cost_micros, tokens_in=outcome.tokens_in,
        tokens_out=outcome.tokens_out, created_at=utcnow())
    session.add(suggestion)
    experiment = session.get(Experiment, job.experiment_id)
    assert experiment is not None
    if found:
        loop.move(session, iteration.id, I.awaiting_review, {I.refining})
        session.commit()
        return REVIEW
    session.flush()
    budget = outcome.reason is not None and outcome.reason.startswith("Budget")
    loop.finish(session, experiment, iteration,
                StopReason.budget if budget else StopReason.no_suggestion,
                outcome.reason or "The refiner gave no suggestion")
    session.commit()
    return STOPPED
