"""A project's settings: its name and description, its spending cap and alert threshold,
the run defaults New run starts from, and the code-execution opt-in (FR-PM-003).

Run defaults and the opt-in live in `projects.settings` (JSON); the cap and the threshold
are columns because the engine reads them inside its budget transactions.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from assay.core import audit
from assay.core.auth.models import User
from assay.core.projects.models import Project
from assay.core.projects.service import touch

# A run's max_retries when neither the run nor its project chose one: 3 attempts in all,
# what the client always did before retries became a setting.
DEFAULT_MAX_RETRIES = 2
# Run defaults kept in projects.settings; None: the server's default applies.
RUN_DEFAULT_KEYS = ("default_concurrency", "default_timeout_s", "default_max_retries")
COLUMN_KEYS = ("name", "description", "budget_micros", "alert_threshold")
FLAG_KEYS = ("code_execution",)
# EvalArena: what judge runs paid by this project may cost in all when the learner is
# below editor (None: only editors and up may spend the project's money there).
ARENA_KEYS = ("arena_allowance_micros",)


def read(project: Project) -> dict[str, Any]:
    stored = project.settings or {}
    return {
        **{key: getattr(project, key) for key in COLUMN_KEYS},
        **{key: stored.get(key) for key in RUN_DEFAULT_KEYS},
        "code_execution": bool(stored.get("code_execution")),
        **{key: stored.get(key) for key in ARENA_KEYS},
        "spent_micros": project.spent_micros, "reserved_micros": project.reserved_micros,
    }


def run_defaults(project: Project) -> dict[str, Any]:
    """What a new run of this project uses where its request leaves a setting unset."""
    stored = project.settings or {}
    retries = stored.get("default_max_retries")
    return {"concurrency": stored.get("default_concurrency"),
            "timeout_s": stored.get("default_timeout_s"),
            "max_retries": DEFAULT_MAX_RETRIES if retries is None else retries}


def update(session: Session, actor: User, project: Project,
           changes: dict[str, Any]) -> Project:
    """Apply the values that differ (already checked by the API's schema); one audit event
    with before/after of exactly those, none when nothing changed."""
    current = read(project)
    changed = {key: value for key, value in changes.items() if current.get(key) != value}
    if not changed:
        return project
    stored = dict(project.settings or {})
    for key, value in changed.items():
        if key in COLUMN_KEYS:
            setattr(project, key, value)
        else:
            stored[key] = value
    project.settings = stored  # a new dict, so the JSON column is seen as changed
    touch(project)
    audit.record(session, actor, "project.updated", "project", project.id, project.id,
                 {"before": {key: current[key] for key in changed}, "after": changed})
    return project
