"""What a run's scorers made of its outputs: per scorer, its score rows passed, failed and
errored, the errors by class. A judge whose every call failed must read as failing, beside
the call errors, never as "no failures"."""

from __future__ import annotations

import re
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from assay.core.scoring.models import Score, ScorerConfig, ScorerVersion

# The judge layer's messages (scorers/judging.py ask()) name what went wrong.
_CALL_FAILED = re.compile(r"call failed \(([A-Za-z0-9_]+)\)")


def error_class(error: str, details: dict[str, Any] | None = None) -> str:
    """A short class for a score's error: the judge call's error class when there is one,
    a rejected (not the asked-for JSON) reply, a judge that could not be called, else a
    scorer error."""
    found = (details or {}).get("error_class")
    if "reply rejected" in error or (details or {}).get("raw_reply") is not None:
        return "judge_reply_rejected"
    if "could not be called" in error:
        return "judge_unavailable"
    match = _CALL_FAILED.search(error)
    if match or found:
        return f"judge_call_{match.group(1) if match else found}"
    return "scorer_error"


def scoring_outcomes(session: Session, run_id: int) -> list[dict[str, Any]]:
    """One entry per scorer with scores on the run (every version together), by name."""
    rows = session.execute(
        select(ScorerConfig.id, ScorerConfig.name, ScorerConfig.kind, Score.passed,
               Score.error, Score.details)
        .join(ScorerVersion, ScorerVersion.id == Score.scorer_version_id)
        .join(ScorerConfig, ScorerConfig.id == ScorerVersion.scorer_id)
        .where(Score.run_id == run_id))
    out: dict[int, dict[str, Any]] = {}
    for scorer_id, name, kind, passed, error, details in rows:
        entry = out.setdefault(scorer_id, {
            "scorer_id": scorer_id, "name": name, "kind": kind, "scores": 0, "passed": 0,
            "failed": 0, "errored": 0, "errors": {}})
        entry["scores"] += 1
        if error is not None:  # an error is never a pass, whatever verdict came with it
            entry["errored"] += 1
            key = error_class(error, details)
            entry["errors"][key] = entry["errors"].get(key, 0) + 1
        elif passed is True:
            entry["passed"] += 1
        elif passed is False:
            entry["failed"] += 1
    return sorted(out.values(), key=lambda e: (e["name"], e["scorer_id"]))
