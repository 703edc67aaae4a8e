"""What a scoring pass needs for one run: its scorers, built, and the context they may use
(judge models of the project through the given LLM client, the code-execution opt-in)."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from assay.core.projects.models import Project
from assay.core.runs.models import Run
from assay.core.scoring.apply import Applied, run_scorers
from assay.core.scoring.judge_calls import ModelJudge, judge_models
from assay.providers.client import LLMClient
from assay.scorers.base import Context


def for_run(session: Session, run_id: int, client: LLMClient,
            secret_key: str) -> tuple[list[Applied], Context]:
    applied = run_scorers(session, run_id)
    row = session.execute(select(Project.id, Project.settings).join(
        Run, Run.project_id == Project.id).where(Run.id == run_id)).first()
    if row is None:
        return [], Context()
    refs = {ref for item in applied for ref in item.scorer.judges}
    judges = judge_models(session, row.id, refs, secret_key) if refs else {}
    return applied, Context(judge=ModelJudge(client, judges),
                            code_execution=bool((row.settings or {}).get("code_execution")))
