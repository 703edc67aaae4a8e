"""Budgets: reserve a call's maximum cost before it is sent, settle to its actual cost when
its output is written, release what was never spent (DESIGN §4 "Budget").

A cap binds a run (`runs.budget_micros`) and its project (`projects.budget_micros`). Both
rows carry `spent_micros` and `reserved_micros`; they move only inside the transactions that
claim cells (reserve) and record them (settle + release), with the rows locked in one order
(`locks.py`: run, outputs, targets, project), so spent + reserved never exceeds a cap
however many workers share the run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from assay.providers import tokens
from assay.providers.pricing import cost_micros


def max_call_cost(messages: list[dict[str, Any]], model: str, params: dict[str, Any],
                  price_in: int | None, price_out: int | None) -> int:
    """The most one call can cost: its counted prompt tokens at the input price plus its
    max output tokens at the output price. An unpriced model reserves nothing (a run with a
    cap refuses unpriced models before it starts)."""
    if price_in is None or price_out is None:
        return 0
    cost = cost_micros(tokens.count_messages(messages, model), tokens.max_output_tokens(params),
                       price_in, price_out)
    return cost or 0


@dataclass(frozen=True)
class Room:
    """What the caps leave for new reservations, and what they leave at all."""

    now: int | None  # None: no cap binds
    ever: int | None  # with every current reservation released (None: no cap)

    def fits(self, amount: int) -> bool:
        return self.now is None or amount <= self.now

    def could_ever_fit(self, amount: int) -> bool:
        return self.ever is None or amount <= self.ever


def room(caps: list[tuple[int | None, int, int]]) -> Room:
    """`caps`: (cap, spent, reserved) of the run and of its project."""
    bound = [(cap, spent, reserved) for cap, spent, reserved in caps if cap is not None]
    if not bound:
        return Room(None, None)
    return Room(min(cap - spent - reserved for cap, spent, reserved in bound),
                min(cap - spent for cap, spent, _ in bound))


def crossed_alert(cap: int | None, spent: int, threshold: float) -> bool:
    return cap is not None and cap > 0 and spent >= cap * threshold
