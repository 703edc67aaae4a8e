"""The final report of an experiment (edison FR-IL-002), computed from the tables: every
iteration's composite with its 95% interval on all, refinement and held-out cases, the best
version chosen on held-out cases, first vs last with the paired verdict, cost by phase,
tokens, the recommended model, the criteria still weak, and next steps.

Every number is the one the loop stored when it aggregated the iteration (aggregate.py:
per model, the rubric's weighted composite and each criterion's mean with case-clustered
bootstrap intervals, and per-case composites), so the report says what the dashboard says.
An iteration's row is about its headline model (the aggregate's best); first vs last pairs
the last iteration's headline model's per-case composites with the first's. A version
whose refinement score beat the previous iteration's while its held-out score did not is
flagged as likely overfitting: it learned the cases the refiner saw, not the task."""

from __future__ import annotations

import itertools
from collections import defaultdict
from dataclasses import asdict
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from assay.core.experiments.aggregate import criterion_means, target_key
from assay.core.experiments.models import Experiment, Iteration
from assay.core.llm.models import ModelConfig
from assay.core.prompts.models import PromptVersion
from assay.core.runs.models import Output, RunTarget
from assay.core.stats.paired import compare_paired

RESAMPLES = 1000
WEAK = 2  # criteria listed as remaining weaknesses
EMPTY = {"mean": None, "low": None, "high": None, "n": 0}


def _models_of(it: Iteration) -> dict[str, Any]:
    return (it.aggregate or {}).get("models") or {}


def _headline_target(it: Iteration) -> str | None:
    """The model the iteration's numbers are about: the aggregate's best model (the one
    its `composite` column and the dashboard's headline show)."""
    return (it.aggregate or {}).get("best_model")


def _split(it: Iteration, target: str | None, split: str, column: float | None
           ) -> dict[str, Any]:
    entry = _models_of(it).get(target or "")
    if entry is None:
        return {**EMPTY, "mean": column}
    return dict(entry[split]["composite"])


def _case_composites(it: Iteration, target: str | None, keep: set[int] | None = None
                     ) -> dict[int, float]:
    found = ((it.aggregate or {}).get("cases") or {}).get(target or "") or {}
    return {int(c): float(v) for c, v in found.items() if keep is None or int(c) in keep}


def _paired(a: dict[int, float], b: dict[int, float]) -> dict[str, Any] | None:
    if not set(a) & set(b):
        return None
    found = compare_paired(a, b, binary=False, n_resamples=RESAMPLES)
    keep = ("n", "mean_a", "mean_b", "mean_difference", "low", "high", "effect_size",
            "p_value", "test", "verdict", "b_higher", "a_higher", "equal")
    return {k: v for k, v in asdict(found).items() if k in keep}


def _criteria(it: Iteration, target: str | None) -> dict[str, dict[str, float | None]]:
    """criterion -> its mean on all and on held-out cases, for the headline model."""
    entry = _models_of(it).get(target or "")
    if entry is None:
        return {}
    held = entry["holdout"]["criteria"]
    return {name: {"all": ci["mean"], "holdout": (held.get(name) or {}).get("mean")}
            for name, ci in entry["all"]["criteria"].items()}


def _holdout_delta(it: Iteration, target: str | None) -> dict[str, Any] | None:
    """The paired difference vs the previous iteration on held-out cases, as aggregated."""
    found = (((it.aggregate or {}).get("delta") or {}).get(target or "") or {}).get("holdout")
    if not found or found.get("mean_difference") is None:
        return None
    return {k: found.get(k) for k in ("mean_difference", "low", "high", "n", "verdict")}


def _iteration_row(it: Iteration, versions: dict[int, PromptVersion]) -> dict[str, Any]:
    target = _headline_target(it)
    version = versions.get(it.prompt_version_id)
    return {
        "number": it.number, "status": it.status, "prompt_version_id": it.prompt_version_id,
        "prompt_version": version.number if version else None, "run_id": it.run_id,
        "model": target,
        "all": _split(it, target, "all", it.composite),
        "holdout": _split(it, target, "holdout", it.holdout_composite),
        "refinement": _split(it, target, "refinement", it.refinement_composite),
        "win_rate": ((it.aggregate or {}).get("win_rate") or {}).get(target or ""),
        "weakest_criteria": list(it.weakest_criteria or []),
        "criteria": _criteria(it, target), "holdout_delta": _holdout_delta(it, target),
        "phases": {"execution_micros": it.execution_micros,
                   "judging_micros": it.judging_micros,
                   "refinement_micros": it.refinement_micros},
        "spent_micros": it.execution_micros + it.judging_micros + it.refinement_micros,
        "tokens_in": it.tokens_in, "tokens_out": it.tokens_out, "likely_overfitting": False,
    }


def _flag_overfitting(table: list[dict[str, Any]]) -> None:
    for before, after in itertools.pairwise(table):
        gain_r = (after["refinement"]["mean"] or 0) - (before["refinement"]["mean"] or 0)
        gain_h = (after["holdout"]["mean"] or 0) - (before["holdout"]["mean"] or 0)
        if after["holdout"]["mean"] is not None and gain_r > 0 >= gain_h:
            after["likely_overfitting"] = True


def _best(table: list[dict[str, Any]], held_out: bool) -> dict[str, Any] | None:
    key = "holdout" if held_out else "all"
    scored = [row for row in table if row[key]["mean"] is not None]
    if not scored:
        return None
    best = max(scored, key=lambda row: (row[key]["mean"], -row["number"]))
    return {"iteration": best["number"], "prompt_version_id": best["prompt_version_id"],
            "prompt_version": best["prompt_version"], "chosen_on": key,
            "score": best[key], "likely_overfitting": best["likely_overfitting"]}


def _models(session: Session, it: Iteration | None) -> list[dict[str, Any]]:
    """Per model of the best iteration, from its aggregate: the weighted composite with its
    interval, each criterion's mean, and the cost per case of its run targets."""
    if it is None or it.run_id is None:
        return []
    costs: dict[str, int] = defaultdict(int)
    ids: dict[str, int | None] = {}
    for model_id, name, params, spent in session.execute(
            select(RunTarget.model_id, ModelConfig.name, RunTarget.params,
                   RunTarget.spent_micros)
            .outerjoin(ModelConfig, ModelConfig.id == RunTarget.model_id)
            .where(RunTarget.run_id == it.run_id)):
        key = target_key(name, params)
        costs[key] += spent or 0
        ids[key] = model_id
    out = []
    for target, entry in _models_of(it).items():
        score = entry["all"]["composite"]
        out.append({"model_id": ids.get(target), "name": target, "score": dict(score),
                    "criteria": {n: c["mean"] for n, c in entry["all"]["criteria"].items()},
                    "cost_per_case_micros": round(costs.get(target, 0) / max(score["n"], 1))})
    return sorted(out, key=lambda row: -(row["score"]["mean"] or 0))


def _weak(it: Iteration | None) -> list[dict[str, Any]]:
    if it is None:
        return []
    means = criterion_means(_models_of(it), "all")
    if not means:
        return [{"name": n, "mean": None} for n in it.weakest_criteria or []][:WEAK]
    return [{"name": n, "mean": means[n]} for n in sorted(means, key=means.__getitem__)[:WEAK]]


def _next_steps(report: dict[str, Any]) -> list[str]:
    steps: list[str] = []
    best, verdict = report["best"], report["first_vs_last"]
    if best and best["likely_overfitting"]:
        steps.append("The best version gained on refinement cases more than on held-out "
                     "ones: add cases like the held-out ones before trusting it.")
    held = verdict.get("holdout") if verdict else None
    if held and held["verdict"] == "not distinguishable":
        steps.append(f"First and last versions are not distinguishable on {held['n']} "
                     "held-out cases: add cases to narrow the interval.")
    for weak in report["weak_criteria"]:
        mean = "" if weak["mean"] is None else f" (mean {weak['mean']:.2f})"
        steps.append(f"Work on {weak['name']}{mean}: add cases that exercise it or sharpen "
                     "its rubric description.")
    if best:
        steps.append(f"Mark prompt version {best['prompt_version']} as production and "
                     "watch its scores on live traffic.")
    return steps


def build(session: Session, experiment: Experiment) -> dict[str, Any]:
    iterations = list(session.scalars(select(Iteration).where(
        Iteration.experiment_id == experiment.id).order_by(Iteration.number)))
    runs = [it.run_id for it in iterations if it.run_id is not None]
    held, refine = set(experiment.holdout_case_ids or []), set(
        experiment.refinement_case_ids or [])
    versions = {v.id: v for v in session.scalars(select(PromptVersion).where(
        PromptVersion.id.in_([it.prompt_version_id for it in iterations]
                             + [experiment.seed_prompt_version_id or 0])))}
    table = [_iteration_row(it, versions) for it in iterations]
    _flag_overfitting(table)
    best = _best(table, bool(held))
    first_vs_last: dict[str, Any] = {}
    scored = [it for it in iterations if it.aggregate]
    if len(scored) >= 2:
        first, last = scored[0], scored[-1]
        target = _headline_target(last)  # the same model in both
        first_vs_last = {"first": first.number, "last": last.number, "model": target,
                         "all": _paired(_case_composites(first, target),
                                        _case_composites(last, target)),
                         "holdout": _paired(_case_composites(first, target, held),
                                            _case_composites(last, target, held))}
    best_it = next((it for it in iterations if best and it.number == best["iteration"]), None)
    models = _models(session, best_it)
    outputs = session.execute(select(Output.tokens_in, Output.tokens_out).where(
        Output.run_id.in_(runs))).all() if runs else []
    ended = experiment.finished_at or None
    report: dict[str, Any] = {
        "experiment": {
            "id": experiment.id, "name": experiment.name, "status": experiment.status,
            "stop_reason": experiment.stop_reason, "stop_detail": experiment.stop_detail,
            "objective": (experiment.config.get("objective") or {}).get("goal"),
            "started_at": experiment.started_at, "finished_at": ended,
            "duration_s": (ended - experiment.started_at).total_seconds()
            if ended and experiment.started_at else None,
            "refinement_cases": len(refine), "holdout_cases": len(held)},
        "iterations": table, "best": best, "first_vs_last": first_vs_last,
        "cost": {"execution_micros": experiment.execution_micros,
                 "judging_micros": experiment.judging_micros,
                 "refinement_micros": experiment.refinement_micros,
                 "assist_micros": experiment.assist_micros,
                 "total_micros": experiment.spent_micros},
        "tokens": {"input": experiment.tokens_in or sum(r[0] or 0 for r in outputs),
                   "output": experiment.tokens_out or sum(r[1] or 0 for r in outputs)},
        "models": models, "recommended_model": models[0] if models else None,
        "weak_criteria": _weak(best_it),
    }
    report["next_steps"] = _next_steps(report)
    report["best_prompt"] = _prompt(versions.get(best["prompt_version_id"]) if best else None)
    # what the best prompt is compared with in the PDF (not in the API's report schema)
    report["seed_prompt"] = _prompt(versions.get(experiment.seed_prompt_version_id or 0))
    return report


def _prompt(version: PromptVersion | None) -> dict[str, Any] | None:
    if version is None:
        return None
    return {"id": version.id, "number": version.number, "template": version.template,
            "system": version.system, "note": version.note}
