"""Judge mode: start judging a dataset's questions (202, the run; its scoring is queued),
list a dataset's judgings, read one run's judgments, and the question quality of each
generator model. Viewers read; editors start."""

from __future__ import annotations

from typing import Any

from assay.api.base import (
    Blueprint,
    PageArgs,
    commit,
    page_dict,
    page_of,
    project_access,
    runtime,
    session,
    user,
)
from assay.api.judgments.schemas import (
    JudgmentCreateSchema,
    JudgmentsSchema,
    QuestionQualityReportSchema,
)
from assay.api.runs.schemas import RunSchema
from assay.api.runs.views import run_view, run_views
from assay.core.projects.models import Role
from assay.core.runs import service as runs
from assay.core.scoring import judge_mode, judgments, question_report
from assay.jobs.queues import enqueue_scoring

blp = Blueprint("judgments", __name__, url_prefix="/api/projects/<int:project_id>",
                description="Judge mode: judge models rate the questions of a dataset")


@blp.post("/datasets/<int:dataset_id>/judgments")
@blp.arguments(JudgmentCreateSchema)
@blp.response(202, RunSchema)
def start_judging(data: dict[str, Any], project_id: int, dataset_id: int) -> Any:
    """Every judge rates every question of the dataset's version on the chosen criteria
    (1-10 each, with a justification) and/or as the instruction asks. Answers with the
    judge-mode run, complete at once (its outputs are the questions); the ratings land as
    its scoring job runs: read them at GET /runs/{run_id}/judgments. 422 names each bad
    field (judges, criteria, instruction, dataset_id for an empty version)."""
    project, _ = project_access(project_id, Role.editor)
    run = judge_mode.start_judging(session(), user(), project, dataset_id,
                                   judge_mode.JudgingSpec.from_dict(data))
    commit()
    enqueue_scoring(runtime(), run.id)
    return run_view(run)


@blp.get("/datasets/<int:dataset_id>/judgments")
@blp.arguments(PageArgs, location="query")
@blp.response(200, page_of(RunSchema))
def list_judgings(args: dict[str, Any], project_id: int, dataset_id: int) -> Any:
    """The dataset's judge-mode runs, newest first."""
    project, _ = project_access(project_id, Role.viewer)
    page = judge_mode.judging_runs(session(), project, dataset_id, args["page"],
                                   args["page_size"])
    return page_dict(page, run_views(page.items))


@blp.get("/runs/<int:run_id>/judgments")
@blp.arguments(PageArgs, location="query")
@blp.response(200, JudgmentsSchema)
def get_judgments(args: dict[str, Any], project_id: int, run_id: int) -> Any:
    """A page of questions with each judge's ratings side by side, each judge's mean per
    criterion, the agreement between judges per criterion (Krippendorff's alpha), and the
    scoring progress. 404 for a run that is not a judge-mode run."""
    project, _ = project_access(project_id, Role.viewer)
    run = runs.get_run(session(), project, run_id)
    return judgments.judgments(session(), project, run, args["page"], args["page_size"])


@blp.get("/reports/question-quality")
@blp.response(200, QuestionQualityReportSchema)
def question_quality(project_id: int) -> Any:
    """Question quality by generator model: the mean overall rating (1-10, with a 95%
    interval) judges gave the questions each model generated, across the project's
    judge-mode runs; written or imported questions form their own row."""
    project, _ = project_access(project_id, Role.viewer)
    return {"items": question_report.quality_by_generator(session(), project)}
