"""One output in full, as its page shows it: the output with its raw request and reply, its
target's model and label, its case's input, expected and number, and its scores with their
scorer, version and author.

It is a read people make most, one output at a time and rarely the same one twice (nothing
is worth keeping), so it is one Core statement over a connection: the output's row joined
to its scores (one row per score, at least one), only the columns shown. ORM entities cost
a description and a conversion per column of every mapped row, and a second statement a
round trip: over a million outputs on PostgreSQL the read went from 3.0 to 2.4 ms of CPU in
one process, and to 1.2 ms made by the API's door (api/kept_reads.py) on a connection.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, bindparam, select
from sqlalchemy.orm import Session

from assay.core.auth.models import User
from assay.core.datasets.models import Case, DatasetVersion
from assay.core.runs.case_numbers import Version, case_numbers
from assay.core.runs.models import Output, Run, RunTarget
from assay.core.scoring.models import Score, ScorerConfig, ScorerVersion

# what a score's view shows of its row (the output's page and the score's own answers)
SCORE_COLUMNS = ("id", "scorer_version_id", "kind", "source", "value", "passed", "criteria",
                 "rationale", "evidence", "severity", "flags", "details", "error",
                 "author_id", "comment", "created_at", "updated_at", "row_version")
# the output's own, as named in its view
OUTPUT_COLUMNS = ("id", "case_id", "target_id", "repeat", "turn", "status", "text",
                  "error_class", "latency_ms", "ttft_ms", "tokens_in", "tokens_out",
                  "cost_micros", "cached", "attempts", "raw_request", "raw_response",
                  "retrieved")

_scores = (Score.__table__
           .join(ScorerVersion.__table__, ScorerVersion.id == Score.scorer_version_id)
           .join(ScorerConfig.__table__, ScorerConfig.id == ScorerVersion.scorer_id)
           .outerjoin(User.__table__, User.id == Score.author_id))
_score_labels = [getattr(Score, c).label(f"s_{c}") for c in SCORE_COLUMNS]
# built once, with bind parameters (as the lists', core/pagination.Listing)
_STATEMENT = (
    select(*(getattr(Output, c) for c in OUTPUT_COLUMNS),
           Output.error_message, Output.finished_at, RunTarget.model_id, RunTarget.label,
           Case.input, Case.expected, Run.dataset_version_id,
           DatasetVersion.created_at.label("version_created_at"), DatasetVersion.case_count,
           *_score_labels, ScorerConfig.id.label("scorer_id"),
           ScorerConfig.name.label("scorer_name"), ScorerVersion.number.label("version"),
           User.name.label("author"), User.email.label("author_email"))
    .select_from(Output.__table__
                 .join(Run.__table__, Run.id == Output.run_id)
                 .join(RunTarget.__table__, RunTarget.id == Output.target_id)
                 .join(Case.__table__, Case.id == Output.case_id)
                 .join(DatasetVersion.__table__, DatasetVersion.id == Run.dataset_version_id)
                 .outerjoin(_scores, Score.output_id == Output.id))
    .where(Output.id == bindparam("output_id"), Run.id == bindparam("run_id"),
           Run.project_id == bindparam("project_id"))
    .order_by(ScorerConfig.name, ScorerVersion.number, Score.source, Score.id))


def output_detail(connection: Connection | Session, project_id: int, run_id: int,
                  output_id: int) -> dict[str, Any] | None:
    """The output's view (OutputDetailSchema's fields); None when the project has no such
    run, or the run no such output."""
    rows = connection.execute(_STATEMENT, {"output_id": output_id, "run_id": run_id,
                                           "project_id": project_id}).all()
    if not rows:
        return None
    first = rows[0]
    numbers = case_numbers(connection, first.dataset_version_id, [first.case_id],
                           Version(first.version_created_at, first.case_count))
    finished = first.finished_at
    return {**{c: getattr(first, c) for c in OUTPUT_COLUMNS},
            "model_id": first.model_id, "label": first.label, "error": first.error_message,
            "case_number": numbers.get(first.case_id), "case_input": first.input,
            "case_expected": first.expected,
            "finished_at": finished.isoformat() if finished else None,
            "scores": [_score(row) for row in rows if row.s_id is not None]}


def _score(row: Any) -> dict[str, Any]:
    return {**{c: getattr(row, f"s_{c}") for c in SCORE_COLUMNS}, "scorer_id": row.scorer_id,
            "scorer_name": row.scorer_name, "version": row.version,
            "author_name": row.author or row.author_email}
