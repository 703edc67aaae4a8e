"""Pairwise comparisons of a run's targets: start them (202, a background job), list them,
and summarise them per target pair and judge, with Bradley-Terry ratings of the targets."""

from __future__ import annotations

from typing import Any

from assay.api.base import commit, page_dict, page_of, project_access, runtime, session, user
from assay.api.runs.attach_schemas import JobsStoppingSchema
from assay.api.runs.blueprint import blp
from assay.api.runs.comparisons_schemas import (
    ComparisonCreateSchema,
    ComparisonListArgs,
    ComparisonSchema,
    ComparisonStartedSchema,
    ComparisonSummaryArgs,
    ComparisonSummarySchema,
)
from assay.core.projects.models import Role
from assay.core.runs import service as runs
from assay.core.scoring import comparisons, pairwise_runs
from assay.core.scoring.models import Comparison
from assay.jobs import stops
from assay.jobs.queues import enqueue_comparisons

_COLUMNS = ("id", "case_id", "scorer_version_id", "output_a_id", "output_b_id", "winner",
            "position_bias", "orders", "rationale", "error", "created_at")


def _comparison(row: Comparison, target_a_id: int, target_b_id: int) -> dict[str, Any]:
    return {**{name: getattr(row, name) for name in _COLUMNS}, "judge": row.judge_model,
            "target_a_id": target_a_id, "target_b_id": target_b_id}


@blp.post("/<int:run_id>/comparisons")
@blp.arguments(ComparisonCreateSchema)
@blp.response(202, ComparisonStartedSchema)
def start_comparisons(data: dict[str, Any], project_id: int, run_id: int) -> Any:
    """Compare two targets of the run, or a target of it with one of a base run, case by case

    With base_run_id (another run of the project; 404 otherwise) and base_target_id, the
    run's target_a_id is judged against the base run's target on the cases both runs ran;
    the comparisons belong to this run. Each pair of their outputs (same case, repeat and
    turn; both succeeded) is judged by every judge of the scorer's latest version, in both
    orders, in the background. Pairs already judged without error by this version are
    skipped. 422 for a scorer that is not a pairwise_judge of the project, targets not of
    their run, the same target twice, runs that share no cases, or no pair to compare."""
    project, _ = project_access(project_id, Role.editor)
    run = runs.get_run(session(), project, run_id)
    base = None if data["base_run_id"] is None else runs.get_run(session(), project,
                                                                  data["base_run_id"])
    plan = pairwise_runs.start(session(), user(), project, run, data["scorer_id"],
                               data["target_a_id"],
                               data["target_b_id"] if base is None else data["base_target_id"],
                               base)
    commit()
    if plan.plan.pairs:
        enqueue_comparisons(runtime(), run.id, plan.version.id, plan.target_a_id,
                            plan.target_b_id, plan.base_run_id)
    return {"run_id": run.id, "scorer_id": plan.scorer.id, "scorer_version_id": plan.version.id,
            "target_a_id": plan.target_a_id, "target_b_id": plan.target_b_id,
            "base_run_id": plan.base_run_id,
            "judges": list(plan.judges), "pairs": len(plan.plan.pairs),
            "already_compared": plan.plan.already_compared, "enqueued": bool(plan.plan.pairs)}


@blp.post("/<int:run_id>/comparisons/cancel")
@blp.response(202, JobsStoppingSchema)
def cancel_comparisons(project_id: int, run_id: int) -> Any:
    """Cancel the run's pairwise comparison jobs queued or running (of its targets, and
    against base runs): the judges' calls in flight are closed, the pairs judged by then are
    kept with every judge call the provider answered on the ledger, and the job's last
    run.compared event says stopped: cancelled. Starting the comparison again judges the
    pairs left."""
    project, _ = project_access(project_id, Role.editor)
    run = runs.get_run(session(), project, run_id)
    stops.request(runtime(), stops.COMPARISONS, run.id)
    return {"run_id": run.id, "stopping": True}


@blp.get("/<int:run_id>/comparisons")
@blp.arguments(ComparisonListArgs, location="query")
@blp.response(200, page_of(ComparisonSchema))
def list_comparisons(args: dict[str, Any], project_id: int, run_id: int) -> Any:
    """Ordered by case; filter by scorer, version, judge, target, case, winner, position
    bias, failure."""
    project, _ = project_access(project_id, Role.viewer)
    run = runs.get_run(session(), project, run_id)
    filters = comparisons.ComparisonFilters(**{
        name: args[name] for name in ("scorer_id", "scorer_version_id", "judge", "target_id",
                                      "case_id", "winner", "position_bias", "failed",
                                      "base_run_id")})
    page = comparisons.list_comparisons(session(), run, args["page"], args["page_size"],
                                        filters)
    return page_dict(page, [_comparison(*row) for row in page.items])


@blp.get("/<int:run_id>/comparisons/summary")
@blp.arguments(ComparisonSummaryArgs, location="query")
@blp.response(200, ComparisonSummarySchema)
def comparison_summary(args: dict[str, Any], project_id: int, run_id: int) -> Any:
    """Per target pair and judge: wins, losses, ties, disagreements of the two orders,
    failures, and the position-bias rate with its Wilson interval; Bradley-Terry ratings
    of the run's targets (95% bootstrap intervals) from every judged comparison, or a
    message saying why there are none (e.g. comparisons forming separate groups). With
    base_run_id (404 when not of the project): the comparisons of this run's targets
    against that run's, rating only the targets they involve."""
    project, _ = project_access(project_id, Role.viewer)
    run = runs.get_run(session(), project, run_id)
    base = None if args["base_run_id"] is None else runs.get_run(session(), project,
                                                                  args["base_run_id"])
    return comparisons.summary(session(), run, comparisons.ComparisonFilters(
        scorer_id=args["scorer_id"], scorer_version_id=args["scorer_version_id"],
        judge=args["judge"], base_run_id=args["base_run_id"]), base=base)
