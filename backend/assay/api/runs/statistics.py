"""A run's statistics (every number with its 95% interval), its facets, and paired
comparisons of two targets or of two runs on the same cases."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from assay.api.base import commit, project_access, session
from assay.api.runs.blueprint import blp
from assay.api.runs.statistics_schemas import (
    CompareRunsArgs,
    CompareTargetsArgs,
    RunComparisonSchema,
    RunFacetsSchema,
    RunStatisticsSchema,
    StatisticsArgs,
    StatsFacetArgs,
    TargetComparisonSchema,
)
from assay.core.errors import Invalid
from assay.core.projects.models import Role
from assay.core.runs import service as runs
from assay.core.runs.case_numbers import case_numbers
from assay.core.runs.models import Run, RunTarget
from assay.core.runs.results import targets_of
from assay.core.scoring.paired_comparison import (
    check_same_dataset,
    compare_runs,
    compare_targets,
)
from assay.core.scoring.run_facets import run_facets
from assay.core.scoring.run_scorers import (
    ScorerInfo,
    chosen_scorer,
    matching_scorer,
    scorers_of_run,
)
from assay.core.scoring.statistics import statistics_view


def _scorer(info: ScorerInfo) -> dict[str, Any]:
    return {"scorer_version_id": info.version_id, "scorer_id": info.scorer_id,
            "name": info.name, "kind": info.kind, "version": info.number,
            "pinned": info.pinned}


def _target(target: RunTarget) -> dict[str, Any]:
    return {"target_id": target.id, "label": target.label, "model_id": target.model_id}


def _run_target(targets: list[RunTarget], target_id: int, name: str) -> RunTarget:
    for target in targets:
        if target.id == target_id:
            return target
    raise Invalid("No such target in this run", {"query": {name: [
        "Not a target of this run"]}})


@blp.get("/<int:run_id>/statistics")
@blp.arguments(StatisticsArgs, location="query")
@blp.response(200, RunStatisticsSchema)
def get_statistics(args: dict[str, Any], project_id: int, run_id: int) -> Any:
    """Per target and scorer: outputs scored, failed scores, the mean with a bootstrap
    interval clustered by case, the pass rate with a Wilson interval, per-criterion avg,
    min, max and std, flakiness across repeats, agreement between judges (Krippendorff's
    alpha; Cohen's kappa on pass/fail for two) and between judges and people who scored
    the same outputs. No scores yet: numbers are null and counts 0."""
    project, _ = project_access(project_id, Role.viewer)
    run = runs.get_run(session(), project, run_id)
    version_id = args["scorer_version_id"]
    if version_id is not None:
        chosen_scorer(session(), project, run, version_id)
    scorers, items = statistics_view(session(), run, version_id)
    commit()  # what was computed is kept for the next reader
    _number_flaky_cases(run, items)
    targets = {target.id: target for target in targets_of(session(), run)}
    return {"run_id": run.id, "scorers": [_scorer(info) for info in scorers],
            "items": [{**_target(targets[item["target_id"]]), **item} for item in items]}


def _number_flaky_cases(run: Run, items: list[dict[str, Any]]) -> None:
    """Each flaky case's number in the run's dataset version (what the screen shows; the
    kept statistics hold only ids)."""
    listed = [case for item in items if item.get("flakiness")
              for case in item["flakiness"]["cases"]]
    numbers = case_numbers(session(), run.dataset_version_id,
                           [case["case_id"] for case in listed])
    for case in listed:
        case["case_number"] = numbers.get(case["case_id"])


@blp.get("/<int:run_id>/statistics/facets")
@blp.arguments(StatsFacetArgs, location="query")
@blp.response(200, RunFacetsSchema)
def get_facets(args: dict[str, Any], project_id: int, run_id: int) -> Any:
    """Per target, one scorer's scored outputs grouped by tag, length bucket and
    difficulty, each group with its mean (interval clustered by case) and pass rate."""
    project, _ = project_access(project_id, Role.viewer)
    run = runs.get_run(session(), project, run_id)
    targets = targets_of(session(), run)
    if args["target_id"] is not None:
        targets = [_run_target(targets, args["target_id"], "target_id")]
    info = chosen_scorer(session(), project, run, args["scorer_version_id"])
    found = run_facets(session(), run, info.version_id, [t.id for t in targets],
                       args["length_of"])
    return {"run_id": run.id, "scorer": _scorer(info), "length_of": args["length_of"],
            "targets": [{**_target(target), "n_outputs": item.n_outputs,
                         **{name: [asdict(group) for group in getattr(item.facets, name)]
                            for name in ("by_tag", "by_length", "by_difficulty")}}
                        for target, item in zip(targets, found, strict=True)]}


@blp.get("/<int:run_id>/compare-targets")
@blp.arguments(CompareTargetsArgs, location="query")
@blp.response(200, TargetComparisonSchema)
def get_target_comparison(args: dict[str, Any], project_id: int, run_id: int) -> Any:
    """Target B against target A of this run on the cases both scored (case means): the
    mean difference B - A with its paired bootstrap interval, the effect size, the
    p-value (exact McNemar for pass/fail, else Wilcoxon signed-rank) and the verdict."""
    project, _ = project_access(project_id, Role.viewer)
    run = runs.get_run(session(), project, run_id)
    targets = targets_of(session(), run)
    given = {name: None if args[name] is None else _run_target(targets, args[name], name)
             for name in ("target_a", "target_b")}
    if None in given.values() and len(targets) < 2:
        raise Invalid("This run has a single target", {"query": {"target_b": [
            "A run with one target has nothing to compare it with inside the run: "
            "compare the run with another run of the same dataset instead"]}})
    other = given["target_b"]
    target_a = given["target_a"] or next(
        t for t in targets if other is None or t.id != other.id)
    target_b = other or next(t for t in targets if t.id != target_a.id)
    if target_a.id == target_b.id:
        raise Invalid("A target compared with itself", {"query": {"target_b": [
            "Choose two different targets of the run"]}})
    info = chosen_scorer(session(), project, run, args["scorer_version_id"])
    return {"run_id": run.id, "scorer": _scorer(info), "target_a": _target(target_a),
            "target_b": _target(target_b), "comparison": asdict(
                compare_targets(session(), run, info.version_id, target_a, target_b))}


@blp.get("/<int:run_id>/compare/<int:base_run_id>")
@blp.arguments(CompareRunsArgs, location="query")
@blp.response(200, RunComparisonSchema)
def get_run_comparison(args: dict[str, Any], project_id: int, run_id: int,
                       base_run_id: int) -> Any:
    """This run (B) against a base run (A) of the same dataset, target by matched target
    (by label, else by model), on the cases both scored."""
    project, _ = project_access(project_id, Role.viewer)
    run = runs.get_run(session(), project, run_id)
    base = runs.get_run(session(), project, base_run_id)
    check_same_dataset(session(), base, run)
    info = chosen_scorer(session(), project, run, args["scorer_version_id"])
    base_info = matching_scorer(base, scorers_of_run(session(), base), info)
    found = compare_runs(session(), base, base_info.version_id, run, info.version_id)
    return {"run_id": run.id, "base_run_id": base.id, "scorer": _scorer(info),
            "base_scorer": _scorer(base_info),
            "pairs": [{"target_a": _target(pair.target_a), "target_b": _target(pair.target_b),
                       "comparison": asdict(pair.comparison)} for pair in found.pairs],
            "unmatched_a": [_target(t) for t in found.unmatched_a],
            "unmatched_b": [_target(t) for t in found.unmatched_b]}
