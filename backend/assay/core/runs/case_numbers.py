"""One case number everywhere: a case's place (1-based) among the cases of the run's
dataset version, as the dataset page counts them. Positions are stable across versions and
may have gaps (a deleted case keeps its number free), so the number is a rank, not the
stored position; case ids stay in URLs only."""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from assay.core.datasets.models import VersionCase


def case_numbers(session: Session, version_id: int, case_ids: Iterable[int]) -> dict[int, int]:
    """case id -> its number in the version (one query, a window over the version)."""
    wanted = list(set(case_ids))
    if not wanted:
        return {}
    ranked = (select(VersionCase.case_id,
                     func.row_number().over(order_by=(VersionCase.position,
                                                      VersionCase.case_id)).label("number"))
              .where(VersionCase.version_id == version_id).subquery())
    rows = session.execute(select(ranked.c.case_id, ranked.c.number)
                           .where(ranked.c.case_id.in_(wanted)))
    return {int(case_id): int(number) for case_id, number in rows}
