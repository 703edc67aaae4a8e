"""A score on its own scale: a person's 1-5 rating is "4/5" wherever one score is shown
(grid, case view, exports); the 0-1 value it is stored as (0.75) is for aggregates only."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def rating_of(kind: str, details: Mapping[str, Any] | None) -> float | None:
    """The 1-5 rating a reviewer entered: the overall rating, else the mean of the
    per-criterion ratings; None for scores that are not manual ratings."""
    if kind != "manual":
        return None
    entered = (details or {}).get("entered") or {}
    rating = entered.get("rating")
    if isinstance(rating, int | float):
        return float(rating)
    criteria = [v for v in (entered.get("criteria") or {}).values()
                if isinstance(v, int | float)]
    return sum(criteria) / len(criteria) if criteria else None


def shown(ratings: Sequence[float | None]) -> str | None:
    """"4/5" (or "4.5/5", the mean of several reviewers' ratings) when every score given
    is a rating; None when any is not (then the 0-1 value is the score's own scale)."""
    if not ratings or any(r is None for r in ratings):
        return None
    mean = sum(r for r in ratings if r is not None) / len(ratings)
    return f"{mean:.1f}".rstrip("0").rstrip(".") + "/5"
