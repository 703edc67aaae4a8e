"""What an iteration's numbers rest on: how many outputs its rubric judges scored, and the
ones they failed on, counted by judge and reason (edison FR-RV-001). A composite over 7 of
40 outputs reads very differently from one over all 40, so the dashboard says which.

Judges are named by the model's name in the project: the wizard refers to them by model id
(the scores' `source` is then "12"), which means nothing to a reader."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from assay.core.llm.models import ModelConfig

EXAMPLE_MAX = 300


@dataclass(frozen=True)
class Judged:
    target: str  # the run target's label (aggregate.target_key)
    output_id: int
    judge: str  # the score's source: a model id or name
    value: float | None  # None: the judge failed on this output
    error: str | None
    details: Mapping[str, Any]


def judge_names(session: Session, project_id: int, sources: Iterable[str]) -> dict[str, str]:
    """source -> the model's name, for sources that are a model id of the project (others,
    already names, map to themselves)."""
    wanted = {s for s in sources if s}
    ids = [int(s) for s in wanted if s.isdigit()]
    found: dict[str, str] = {}
    if ids:
        found = {str(i): name for i, name in session.execute(
            select(ModelConfig.id, ModelConfig.name).where(
                ModelConfig.project_id == project_id, ModelConfig.id.in_(ids)))}
    return {s: found.get(s, s) for s in wanted}


def reason_of(error: str | None, details: Mapping[str, Any]) -> str:
    """A failure's reason in a few words, so that failures group (the error text itself
    names the judge and quotes the reply)."""
    text = error or ""
    if "raw_reply" in details or "reply rejected" in text:
        return "reply was not the JSON asked for"
    if details.get("error_class"):
        return f"call failed ({details['error_class']})"
    if "no output" in text.lower():
        return "no output to judge"
    if "could not be called" in text or "No model" in text:
        return "judge model not available"
    return (text.split(":")[0] or "unknown")[:80]


def summary(rows: Iterable[Judged], names: Mapping[str, str]) -> dict[str, Any]:
    """outputs (judged), scored (with at least one valid score), failed (failed judge
    scores), failed_outputs, by target, and failures: [{judge, reason, count, example}]."""
    outputs: dict[str, set[int]] = defaultdict(set)
    scored: dict[str, set[int]] = defaultdict(set)
    failed_outputs: set[int] = set()
    counts: Counter[tuple[str, str]] = Counter()
    examples: dict[tuple[str, str], str] = {}
    for row in rows:
        outputs[row.target].add(row.output_id)
        if row.value is not None:
            scored[row.target].add(row.output_id)
            continue
        failed_outputs.add(row.output_id)
        key = (names.get(row.judge, row.judge) or "unknown judge",
               reason_of(row.error, row.details))
        counts[key] += 1
        examples.setdefault(key, (row.error or "")[:EXAMPLE_MAX])
    every = set().union(*outputs.values()) if outputs else set()
    rested = set().union(*scored.values()) if scored else set()
    return {
        "outputs": len(every), "scored": len(rested), "failed": sum(counts.values()),
        "failed_outputs": len(failed_outputs),
        "targets": {t: {"outputs": len(o), "scored": len(scored.get(t, set()))}
                    for t, o in sorted(outputs.items())},
        "failures": [{"judge": judge, "reason": reason, "count": n,
                      "example": examples[(judge, reason)]}
                     for (judge, reason), n in sorted(counts.items(),
                                                      key=lambda kv: (-kv[1], kv[0]))]}
