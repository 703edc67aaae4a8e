"""The result journal (jobs/journal.py) on a real Redis: an entry is taken up only by the
shard that took over exactly the lease it was made under; Redis errors never stop a run."""

from __future__ import annotations

import uuid
from types import SimpleNamespace
from typing import cast

import redis
from tests.conftest import REDIS_URL

from assay.core.runs.service import Cell, CellResult
from assay.core.scoring.apply import CellScore
from assay.jobs.journal import Journal
from assay.scorers.base import Evidence, ScoreResult


def cell(oid: int, attempt: int, taken_from: str | None = None) -> Cell:
    return cast(Cell, SimpleNamespace(output_id=oid, attempt=attempt, taken_from=taken_from))


def journal(owner: str, conn: redis.Redis | None = None) -> Journal:
    return Journal(conn or redis.Redis.from_url(REDIS_URL), f"test-{uuid.uuid4().hex[:8]}",
                   7, owner)


def test_results_come_back_exactly_for_the_lease_taken_over() -> None:
    dead = journal("dead")
    scored = CellResult(1, ok=True, text="hi", cost_micros=9, calls=2, raw_response={"a": [1]},
                        scores=(CellScore(3, "judge", ScoreResult(
                            0.5, True, {"tone": 1.0}, "fine",
                            (Evidence(0, 0, 2, "hi"),))),))
    assert dead.keep([(cell(1, 1), scored), (cell(2, 1), CellResult(2, ok=False,
                                                                   error_class="timeout"))])
    heir = Journal(dead.conn, dead.key.split(":run:")[0], 7, "heir")
    found = heir.recall([cell(1, 2, "dead"), cell(2, 3, "dead"), cell(3, 2, "dead"),
                         cell(4, 1, None)])
    assert found == {1: scored}  # 2: another attempt; 3: nothing kept; 4: not taken over
    assert heir.recall([cell(1, 2, "someone-else")]) == {}
    heir.forget([1])
    assert heir.recall([cell(1, 2, "dead")]) == {}
    assert heir.recall([cell(2, 2, "dead")])[2].error_class == "timeout"
    assert dead.conn.ttl(dead.key) > 0, "a forgotten run's journal expires"
    heir.drop()
    assert not dead.conn.exists(dead.key)


def test_redis_errors_are_reported_not_raised() -> None:
    gone = redis.Redis(host="127.0.0.1", port=1, socket_connect_timeout=0.2)
    down = journal("shard", gone)
    assert down.keep([(cell(1, 1), CellResult(1, ok=True))]) is False
    assert down.recall([cell(1, 2, "dead")]) == {}
    down.forget([1])
    down.drop()
    assert down.keep([]) is True and down.recall([cell(1, 1)]) == {}
