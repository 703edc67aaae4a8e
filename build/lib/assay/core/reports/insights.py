"""The dashboard's finer views: criterion breakdown, facets, pairwise win rates."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, aliased

from assay.core import stats
from assay.core.reports import uncertainty
from assay.core.runs.models import Output
from assay.core.scoring.models import Comparison


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) \
        and math.isfinite(value)


def criteria_view(rows: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """criterion -> {n, avg, min, max, std} over the scores that rated it (values that
    are not finite numbers are left out rather than failing the whole view)."""
    clean = [{name: float(v) for name, v in row.items() if _finite(v)}
             for row in rows if isinstance(row, Mapping)]
    return {name: {"n": s.n, "avg": s.avg, "min": s.min, "max": s.max, "std": s.std}
            for name, s in stats.criterion_breakdown(clean).items()}


def _group(group: stats.FacetGroup) -> dict[str, Any]:
    return {"key": group.key, "n_outputs": group.n_outputs, "n_cases": group.n_cases,
            "score": uncertainty.mean_view(group.mean),
            "pass_rate": uncertainty.rate_view(group.pass_rate)}


def facets_view(records: list[stats.FacetRecord]) -> dict[str, Any]:
    """By tag, input length bucket and difficulty: each group's score and pass rate."""
    found = stats.facets(records, confidence=uncertainty.CONFIDENCE,
                         n_resamples=uncertainty.RESAMPLES)
    return {"by_tag": [_group(g) for g in found.by_tag],
            "by_length": [_group(g) for g in found.by_length],
            "by_difficulty": [_group(g) for g in found.by_difficulty],
            "length_of": found.length_of}


def win_rates(session: Session, run_id: int) -> dict[int, dict[str, Any]]:
    """target id -> {wins, losses, ties, win_rate} over the run's pairwise judgements
    that reached a verdict (a tie counts half; judgements whose two orders disagreed, or
    that failed, count for neither side)."""
    a, b = aliased(Output), aliased(Output)
    rows = session.execute(
        select(Comparison.winner, a.target_id, b.target_id)
        .join(a, a.id == Comparison.output_a_id).join(b, b.id == Comparison.output_b_id)
        .where(Comparison.run_id == run_id, b.run_id == run_id,  # not against a base run
               Comparison.winner.is_not(None), Comparison.error.is_(None)))
    tallies: dict[int, list[int]] = {}
    for winner, target_a, target_b in rows:
        for target, side in ((target_a, "a"), (target_b, "b")):
            tally = tallies.setdefault(target, [0, 0, 0])
            tally[0 if winner == side else 2 if winner == "tie" else 1] += 1
    return {target: {"wins": w, "losses": lo, "ties": t,
                     "win_rate": (w + t / 2) / (w + lo + t)}
            for target, (w, lo, t) in tallies.items()}
