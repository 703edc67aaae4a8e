"""One case number everywhere: a case's place (1-based) among the cases of the run's
dataset version, as the dataset page counts them. Positions are stable across versions and
may have gaps (a deleted case keeps its number free), so the number is a rank, not the
stored position; case ids stay in URLs only.

A version's cases never change once it is written (an edit makes a new version), so each
process keeps the numbering of a few recent versions: ranking a 20,000-case version costs
about 15 ms of database time, which every outputs page and grid page would otherwise pay.
An entry is keyed by the version's id and creation time (SQLite may reuse the id of a
deleted last row) and kept only when it holds exactly the version's `case_count` cases.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable
from datetime import datetime
from typing import NamedTuple

from sqlalchemy import Connection, and_, bindparam, func, or_, select
from sqlalchemy.orm import Session

from assay.core.datasets.models import DatasetVersion, VersionCase

KEPT_VERSIONS = 8
KEPT_MAX_CASES = 200_000  # a bigger version is ranked per call, not held in memory

# built once: every outputs page, grid page and output read asks it
_VERSION_ROW = select(DatasetVersion.created_at, DatasetVersion.case_count).where(
    DatasetVersion.id == bindparam("version_id"))
_kept: OrderedDict[tuple[int, datetime], dict[int, int]] = OrderedDict()
_lock = threading.Lock()


class Version(NamedTuple):
    """What tells a version's numbering apart (its id aside), and how many cases it has."""

    created_at: datetime
    case_count: int


def _version_numbers(session: Session | Connection, version_id: int,
                     row: Version | None = None) -> dict[int, int] | None:
    """case id -> number for the whole version, from this process's cache or read once;
    None when the version is missing or too big to keep. `row`: the version's, when the
    caller read it already."""
    if row is None:
        read = session.execute(_VERSION_ROW, {"version_id": version_id}).one_or_none()
        row = None if read is None else Version(*read)
    if row is None or row.case_count > KEPT_MAX_CASES:
        return None
    key = (version_id, row.created_at)
    with _lock:
        found = _kept.get(key)
        if found is not None:
            _kept.move_to_end(key)
            return found
    ids = session.scalars(select(VersionCase.case_id).where(VersionCase.version_id == version_id)
                          .order_by(VersionCase.position, VersionCase.case_id)).all()
    numbers = {int(case_id): number for number, case_id in enumerate(ids, 1)}
    if len(numbers) != row.case_count:
        return None  # not the version as written (still being written?): rank per call
    with _lock:
        _kept[key] = numbers
        while len(_kept) > KEPT_VERSIONS:
            _kept.popitem(last=False)
    return numbers


def case_numbers(session: Session | Connection, version_id: int, case_ids: Iterable[int],
                 version: Version | None = None) -> dict[int, int]:
    """case id -> its number in the version: from this process's numbering of the version
    when it is kept, else the cases before the first one wanted are counted (an index range)
    and only the span from the first to the last one wanted is ranked, so a page of a
    100,000-case grid does not rank the whole version."""
    wanted = list(set(case_ids))
    if not wanted:
        return {}
    numbers = _version_numbers(session, version_id, version)
    if numbers is not None:
        return {case_id: numbers[case_id] for case_id in wanted if case_id in numbers}
    in_version = VersionCase.version_id == version_id
    places = session.execute(select(VersionCase.position, VersionCase.case_id)
                             .where(in_version, VersionCase.case_id.in_(wanted))).all()
    if not places:
        return {}
    (first_position, first_case), (last_position, last_case) = min(places), max(places)
    before = session.scalar(select(func.count()).where(in_version, or_(
        VersionCase.position < first_position,
        and_(VersionCase.position == first_position, VersionCase.case_id < first_case)))) or 0
    ranked = (select(VersionCase.case_id,
                     func.row_number().over(order_by=(VersionCase.position,
                                                      VersionCase.case_id)).label("number"))
              .where(in_version, VersionCase.position.between(first_position, last_position),
                     or_(VersionCase.position > first_position,
                         VersionCase.case_id >= first_case),
                     or_(VersionCase.position < last_position,
                         VersionCase.case_id <= last_case))
              .subquery())
    rows = session.execute(select(ranked.c.case_id, ranked.c.number)
                           .where(ranked.c.case_id.in_(wanted)))
    return {int(case_id): before + int(number) for case_id, number in rows}
