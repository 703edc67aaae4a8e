"""An iteration's numbers (edison FR-RV-001, §9.1 "aggregating"), from its rubric scores.

Per model (a run target, named by its label so iterations line up): the composite (the
rubric's weights over the criteria) and each criterion's mean, with case-clustered
bootstrap intervals (core/stats); the delta vs the previous iteration's same model with the
paired verdict (core/stats/paired.py) on the cases both scored; and the weakest criteria.
Each is computed on three sets: all cases, the refinement cases (what the refiner sees) and
the held-out cases (what it never sees: the honest measure of a prompt change).

The win rate vs the previous iteration per model comes from the pairwise judge's verdicts
when the experiment has one (pairwise.py), else from comparing per-case composites.

Values are normalised 0..1 as the judges report them. A case's value is the mean over its
judges and repeats; a case missing a weighted criterion has no composite (never a silent
zero).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from assay.core.stats.bootstrap import MeanCI, mean_ci
from assay.core.stats.composite import composite_score, normalise_weights
from assay.core.stats.paired import compare_paired

SETS = ("all", "refinement", "holdout")
RESAMPLES = 1000  # per interval: a 200-case iteration with 5 criteria stays well under 1 s


@dataclass(frozen=True)
class Row:
    target: str  # the run target's label (model and params)
    case_id: int
    criteria: Mapping[str, float]  # normalised 0..1


def target_key(model: str | None, params: dict[str, Any] | None) -> str:
    """A target's name across iterations: its model and parameters (its run label names
    the prompt version too, which changes every iteration)."""
    shown = ", ".join(f"{k}={v}" for k, v in sorted((params or {}).items()))
    return f"{model or 'trace'}" + (f" ({shown})" if shown else "")


def _ci(ci: MeanCI) -> dict[str, Any]:
    return {"mean": ci.mean, "low": ci.low, "high": ci.high, "n": ci.n_cases}


def _case_criteria(rows: Iterable[Row]) -> dict[str, dict[int, dict[str, float]]]:
    """target -> case -> criterion -> mean over the case's judges and repeats."""
    sums: dict[str, dict[int, dict[str, list[float]]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(list)))
    for row in rows:
        for name, value in row.criteria.items():
            sums[row.target][row.case_id][name].append(float(value))
    return {target: {case: {name: sum(v) / len(v) for name, v in crit.items()}
                     for case, crit in cases.items()} for target, cases in sums.items()}


def _members(split: str, case_id: int, refinement: set[int], holdout: set[int]) -> bool:
    return split == "all" or (case_id in refinement if split == "refinement"
                              else case_id in holdout)


def case_composites(per_case: Mapping[int, Mapping[str, float]],
                    weights: Mapping[str, float]) -> dict[int, float]:
    out = {}
    for case_id, values in per_case.items():
        if all(name in values for name in weights):
            out[case_id] = composite_score({n: values[n] for n in weights}, weights)
    return out


def aggregate(rows: Iterable[Row], weights: Mapping[str, float], refinement: Iterable[int],
              holdout: Iterable[int], previous: Mapping[str, Any] | None = None,
              resamples: int = RESAMPLES,
              pairwise: Mapping[str, Mapping[int, list[float]]] | None = None
              ) -> dict[str, Any]:
    """The iteration's aggregate (JSON-ready). `previous`: the previous iteration's;
    `pairwise`: target -> case -> the pairwise judges' win values vs the previous iteration
    (None: no pairwise judge, the win rate compares per-case composites)."""
    weights = normalise_weights(weights)
    refinement_set, holdout_set = set(refinement), set(holdout)
    per_target = _case_criteria(rows)
    models: dict[str, Any] = {}
    cases: dict[str, dict[str, float]] = {}
    delta: dict[str, Any] = {}
    before = (previous or {}).get("cases") or {}
    for target, per_case in sorted(per_target.items()):
        composites = case_composites(per_case, weights)
        cases[target] = {str(k): v for k, v in composites.items()}
        entry: dict[str, Any] = {}
        for split in SETS:
            chosen = {c: v for c, v in composites.items()
                      if _members(split, c, refinement_set, holdout_set)}
            criteria = {
                name: _ci(mean_ci({c: [vals[name]] for c, vals in per_case.items()
                                   if name in vals
                                   and _members(split, c, refinement_set, holdout_set)},
                                  n_resamples=resamples))
                for name in weights}
            entry[split] = {"composite": _ci(mean_ci({c: [v] for c, v in chosen.items()},
                                                     n_resamples=resamples)),
                            "criteria": criteria}
        models[target] = entry
        prior = before.get(target)
        if prior is not None:
            delta[target] = {}
            for split in SETS:
                a = {int(c): float(v) for c, v in prior.items()
                     if _members(split, int(c), refinement_set, holdout_set)}
                b = {c: v for c, v in composites.items()
                     if _members(split, c, refinement_set, holdout_set)}
                paired = compare_paired(a, b, binary=False, n_resamples=resamples)
                delta[target][split] = {k: v for k, v in asdict(paired).items() if k in (
                    "n", "mean_a", "mean_b", "mean_difference", "low", "high", "p_value",
                    "effect_size", "verdict", "test")}
    return {"weights": weights, "models": models, "cases": cases, "delta": delta,
            "win_rate": win_rates(cases, before, pairwise, resamples),
            "weakest": weakest(models, "refinement"), "best_model": best_model(models)}


def win_rates(cases: Mapping[str, Mapping[str, float]],
              before: Mapping[str, Mapping[str, float]],
              pairwise: Mapping[str, Mapping[int, list[float]]] | None,
              resamples: int = RESAMPLES) -> dict[str, Any]:
    """Per target, the share of cases this iteration won against the previous one (a tie
    counts half) with its case-clustered interval: from the pairwise judges' verdicts when
    there is a pairwise judge, else from the per-case composites of both iterations."""
    out: dict[str, Any] = {}
    if pairwise is not None:
        for target, values in sorted(pairwise.items()):
            if values:
                out[target] = {**_ci(mean_ci(values, n_resamples=resamples)),
                               "source": "pairwise"}
        return out
    for target, now in sorted(cases.items()):
        prior = before.get(target) or {}
        values = {int(c): [1.0 if v > prior[c] + 1e-9 else 0.0 if v < prior[c] - 1e-9
                           else 0.5] for c, v in now.items() if c in prior}
        if values:
            out[target] = {**_ci(mean_ci(values, n_resamples=resamples)),
                           "source": "composite"}
    return out


def criterion_means(models: Mapping[str, Any], split: str) -> dict[str, float]:
    """Each criterion's mean over the models (the refiner's view: all models' outputs)."""
    sums: dict[str, list[float]] = defaultdict(list)
    for entry in models.values():
        for name, ci in entry[split]["criteria"].items():
            if ci["mean"] is not None:
                sums[name].append(ci["mean"])
    return {name: sum(v) / len(v) for name, v in sums.items()}


def weakest(models: Mapping[str, Any], split: str = "refinement", count: int = 2) -> list[str]:
    means = criterion_means(models, split)
    return sorted(means, key=lambda name: means[name])[:count]


def best_model(models: Mapping[str, Any]) -> str | None:
    scored = [(entry["all"]["composite"]["mean"], target) for target, entry in models.items()
              if entry["all"]["composite"]["mean"] is not None]
    return max(scored)[1] if scored else None


def headline(result: Mapping[str, Any]) -> tuple[float | None, float | None, float | None]:
    """(composite, refinement composite, held-out composite) of the best model."""
    best = result.get("best_model")
    if best is None:
        return None, None, None
    entry = result["models"][best]
    return (entry["all"]["composite"]["mean"], entry["refinement"]["composite"]["mean"],
            entry["holdout"]["composite"]["mean"])
