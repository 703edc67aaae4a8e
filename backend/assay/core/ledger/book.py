"""The ledger's one writer (`record`) and what it is given (`Tab`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any, cast

from sqlalchemy import Table
from sqlalchemy.orm import Session

from assay.core import bulk
from assay.core.reports.models import SpendDay

# Every purpose of a call, in the order the cost report lists them. "model_calls" is a
# run's own cells (target_days); the others are `spend_days` kinds.
PURPOSES = ("model_calls", "judges", "judge_mode", "pairwise_targets", "pairwise_runs",
            "generation", "scorer_trials", "critique", "assist", "refinement",
            "pairwise_judge", "arena_judge", "connection_test")

_SPEND = cast(Table, SpendDay.__table__)
_KEY = ("project_id", "day", "kind", "model_key", "run_key")


@dataclass
class Usage:
    calls: int = 0  # requests sent to the provider (retries included)
    spent_micros: int = 0
    tokens_in: int = 0
    tokens_out: int = 0

    def add(self, calls: int, spent: int | None, tokens_in: int | None,
            tokens_out: int | None) -> None:
        self.calls += calls
        self.spent_micros += spent or 0
        self.tokens_in += tokens_in or 0
        self.tokens_out += tokens_out or 0


@dataclass
class Tab:
    """What some calls cost, per model config id (None: no model known)."""

    by_model: dict[int | None, Usage] = field(default_factory=dict)

    def add(self, model_id: int | None, calls: int = 1, spent: int | None = None,
            tokens_in: int | None = None, tokens_out: int | None = None) -> None:
        self.by_model.setdefault(model_id, Usage()).add(calls, spent, tokens_in, tokens_out)

    def merge(self, other: Tab) -> None:
        for model_id, u in other.by_model.items():
            self.add(model_id, u.calls, u.spent_micros, u.tokens_in, u.tokens_out)

    @property
    def spent_micros(self) -> int:
        return sum(u.spent_micros for u in self.by_model.values())

    @property
    def calls(self) -> int:
        return sum(u.calls for u in self.by_model.values())

    @property
    def tokens(self) -> tuple[int, int]:
        return (sum(u.tokens_in for u in self.by_model.values()),
                sum(u.tokens_out for u in self.by_model.values()))

    @classmethod
    def of_usages(cls, usages: Iterable[Mapping[str, Any] | None]) -> Tab:
        """From judge usages as scores keep them (scorers/judging.py `_usage`)."""
        tab = cls()
        for usage in usages:
            if usage:
                tab.add(usage.get("model_id"), int(usage.get("calls") or 1),
                        usage.get("cost_micros"), usage.get("tokens_in"),
                        usage.get("tokens_out"))
        return tab


def record(session: Session, project_id: int, purpose: str, tab: Tab,
           run_id: int | None = None, day: date | None = None) -> int:
    """Put `tab` on the ledger under `purpose` (one of PURPOSES but "model_calls"), in the
    caller's transaction (the one that settles its hold). Returns the micro-dollars. Rows
    are upserted in key order: concurrent writers of the same keys cannot deadlock."""
    assert purpose in PURPOSES and purpose != "model_calls", purpose
    when = day or datetime.now(UTC).date()
    rows = [{"project_id": project_id, "day": when, "kind": purpose, "model_key": m or 0,
             "run_key": run_id or 0, "calls": u.calls, "spent_micros": u.spent_micros,
             "tokens_in": u.tokens_in, "tokens_out": u.tokens_out}
            for m, u in tab.by_model.items()
            if u.calls or u.spent_micros or u.tokens_in or u.tokens_out]
    if rows:
        rows.sort(key=lambda r: tuple(r[k] for k in _KEY))
        bulk.insert_rows(session.connection(), _SPEND, rows, keys=_KEY,
                         add=("calls", "spent_micros", "tokens_in", "tokens_out"))
    return tab.spent_micros
