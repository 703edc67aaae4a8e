"""Project reports: the leaderboard across runs, cost and token reports, and per run the
dashboard and the diff against another run. Viewers read them all."""

from __future__ import annotations

from typing import Any

from assay.api.base import Blueprint, commit, project_access, session
from assay.api.reports.calibration_schemas import CalibrationSchema
from assay.api.reports.dashboard_schemas import DashboardSchema
from assay.api.reports.schemas import (
    CostReportSchema,
    LeaderboardArgs,
    LeaderboardSchema,
    PairwiseArgs,
    ProjectRatingsSchema,
    RagArgs,
    RagSummarySchema,
    RunDiffArgs,
    RunDiffSchema,
    ScopeArgs,
    ScorerArgs,
    ScorerCoverageListSchema,
    ScoreTrendSchema,
    TokenUsageSchema,
    TrendArgs,
)
from assay.core.projects.models import Role
from assay.core.reports import rollups
from assay.core.reports.calibration import judge_calibration
from assay.core.reports.costs import cost_report, token_usage
from assay.core.reports.dashboard import dashboard
from assay.core.reports.diff import run_diff
from assay.core.reports.leaderboard import leaderboard
from assay.core.reports.pairwise import project_ratings
from assay.core.reports.rag import rag_summary
from assay.core.reports.scope import ReportFilter
from assay.core.reports.trend import score_trend

blp = Blueprint("reports", __name__, url_prefix="/api/projects/<int:project_id>/reports",
                description="Reports: leaderboard, costs, tokens, run dashboard, run diff")
RUN = "/runs/<int:run_id>"


def _filters(args: dict[str, Any]) -> ReportFilter:
    return ReportFilter(scorer_id=args.get("scorer_id"), versions=args.get("versions", "all"),
                        date_from=args["date_from"], date_to=args["date_to"],
                        dataset_id=args["dataset_id"])


@blp.get("/leaderboard")
@blp.arguments(LeaderboardArgs, location="query")
@blp.response(200, LeaderboardSchema)
def get_leaderboard(args: dict[str, Any], project_id: int) -> Any:
    """One row per model over every run in scope: outputs and success rate, scored outputs,
    mean score (95% bootstrap interval clustered by case), pass rate (Wilson interval),
    cost per output, tokens, latency p50/p95. Versions of the scorer are pooled unless
    versions=latest. 422 for a scorer or dataset of another project or a reversed range."""
    project, _ = project_access(project_id, Role.viewer)
    found = leaderboard(session(), project, _filters(args))
    commit()  # a date range's per-run sums kept for the next reader (runs/cache.py)
    return found


@blp.get("/ratings")
@blp.arguments(PairwiseArgs, location="query")
@blp.response(200, ProjectRatingsSchema)
def get_ratings(args: dict[str, Any], project_id: int) -> Any:
    """Bradley-Terry ratings of the project's models (95% bootstrap intervals) from every
    judged pairwise comparison across its runs: a tie or a disagreement of the two orders
    is half a win each. 422 for a scorer or dataset of another project or a reversed
    range."""
    project, _ = project_access(project_id, Role.viewer)
    return project_ratings(session(), project, _filters(args))


@blp.get("/judge-calibration")
@blp.response(200, CalibrationSchema)
def get_judge_calibration(project_id: int) -> Any:
    """Per judge scorer version, over every run it scored: agreement between its judge
    models (Krippendorff's alpha, Cohen's kappa on two judges' verdicts) and with people
    (each manual scorer's reviewers: exact agreement, mean absolute difference, alpha,
    kappa)."""
    project, _ = project_access(project_id, Role.viewer)
    return judge_calibration(session(), project)


@blp.get("/rag")
@blp.arguments(RagArgs, location="query")
@blp.response(200, RagSummarySchema)
def get_rag_summary(args: dict[str, Any], project_id: int) -> Any:
    """Per model, for one RAG metrics scorer over the runs in scope: each metric's mean
    (1-5) and the judges' average with 95% bootstrap intervals clustered by case, the share
    of judgements that produced metrics (Wilson interval), latency p50/p95. 422 for a
    scorer that is not a RAG metrics scorer of this project, another project's dataset or
    run, or a reversed range. A model's runs with and without documents are separate rows;
    failed calls count against the success rate."""
    project, _ = project_access(project_id, Role.viewer)
    return rag_summary(session(), project, _filters(args), args.get("run_id"))


@blp.get("/scorers")
@blp.response(200, ScorerCoverageListSchema)
def get_scorer_coverage(project_id: int) -> Any:
    """How many scores each of the project's scorers has (all versions pooled, every run):
    the reports open on a scorer that has some."""
    project, _ = project_access(project_id, Role.viewer)
    return {"items": [
        {"scorer_id": s, "values": n, "verdicts": j, "models": m, "discriminates": d}
        for s, n, j, m, d in rollups.scorer_coverage(session(), project.id)]}


@blp.get("/costs")
@blp.arguments(ScopeArgs, location="query")
@blp.response(200, CostReportSchema)
def get_costs(args: dict[str, Any], project_id: int) -> Any:
    """Spend (micro-dollars), finished outputs and tokens: in total, by model, by run
    (newest first) and by UTC day (oldest first). Empty lists when nothing is in scope."""
    project, _ = project_access(project_id, Role.viewer)
    return cost_report(session(), project, _filters(args))


@blp.get("/tokens")
@blp.arguments(ScopeArgs, location="query")
@blp.response(200, TokenUsageSchema)
def get_token_usage(args: dict[str, Any], project_id: int) -> Any:
    """Tokens in and out per UTC day and model, oldest day first; and per purpose of the
    calls (by_kind), as the cost report's."""
    project, _ = project_access(project_id, Role.viewer)
    return token_usage(session(), project, _filters(args))


@blp.get("/trend")
@blp.arguments(TrendArgs, location="query")
@blp.response(200, ScoreTrendSchema)
def get_trend(args: dict[str, Any], project_id: int) -> Any:
    """One scorer's mean score (95% bootstrap interval clustered by case) per run, overall
    and per model, over the most recent runs it scored, oldest first. Versions pooled
    unless versions=latest; the date range keeps outputs that finished within it. Without
    scorer_id, the latest run's first pointwise scorer. 422 for a scorer or dataset of
    another project, a limit out of range or a reversed range."""
    project, _ = project_access(project_id, Role.viewer)
    found = score_trend(session(), project, _filters(args), args["limit"])
    commit()  # the runs' points kept for the next reader (runs/cache.py)
    return found


@blp.get(RUN + "/dashboard")
@blp.arguments(ScorerArgs, location="query")
@blp.response(200, DashboardSchema)
def get_dashboard(args: dict[str, Any], project_id: int, run_id: int) -> Any:
    """A run's numbers (edison FR-RV-001): composite score with its interval, pass and
    success rates, delta against the previous run on the dataset, pairwise win rate, cost,
    tokens, latency and counts; per target the same with criterion means; best and worst
    target; criterion breakdown; facets by tag, input length and difficulty; score trend."""
    project, _ = project_access(project_id, Role.viewer)
    return dashboard(session(), project, run_id, args["scorer_id"], args["scorer_version_id"])


@blp.get(RUN + "/diff/<int:base_run_id>")
@blp.arguments(RunDiffArgs, location="query")
@blp.response(200, RunDiffSchema)
def get_diff(args: dict[str, Any], project_id: int, run_id: int, base_run_id: int) -> Any:
    """What run `run_id` (head) fixed and broke against `base_run_id` (base), per case and
    matched target: fixed, regressed, new_fail, new_pass, still_failing, still_passing,
    missing; counters, a page of cases (what needs attention first) and the paired
    comparison of per-case means with its verdict. 422 DIFFERENT_DATASETS when the runs
    are on different datasets."""
    project, _ = project_access(project_id, Role.viewer)
    return run_diff(session(), project, run_id, base_run_id, args["scorer_id"],
                    args["outcome"], args["page"], args["page_size"])
