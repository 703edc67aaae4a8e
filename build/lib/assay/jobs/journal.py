"""A run's result journal in Redis: each finished cell's result, kept from the moment the
call returns until the database has it.

A worker that dies loses what it had not yet written. With the journal, the shard that
takes over its expired leases records those results instead of calling the provider again,
so a crash repeats only the calls that were in flight: at most the run's concurrency (a
slot of the run, slots.py, is held from the call's start until its result is journaled, so
calls in flight plus results not yet journaled never exceed it over the whole run).

An entry counts only for the lease it was made under: it carries the shard that made it and
the cell's attempt number, and is taken up only by a shard that took over exactly that
lease. A stale entry (the database write landed, the delete did not) can never be taken for
a later attempt. Best effort throughout: if Redis is down, the run goes on and a crash
repeats more calls.

Entries are pickled: RQ keeps its jobs in the same Redis as pickles, so this trusts Redis
no more than Assay already does, and keeps every nested result type exact.
"""

from __future__ import annotations

import logging
import pickle
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from assay.core.runs.service import Cell, CellResult

if TYPE_CHECKING:
    import redis

log = logging.getLogger(__name__)
KEEP_S = 7 * 24 * 3600  # a run's journal outlives any pause; a finished run drops it


class Journal:
    def __init__(self, conn: redis.Redis, prefix: str, run_id: int, owner: str) -> None:
        self.conn, self.owner = conn, owner
        self.key = f"{prefix}:run:{run_id}:journal"

    def keep(self, finished: Sequence[tuple[Cell, CellResult]]) -> bool:
        """Journal results of cells this shard holds; False when Redis would not take them."""
        if not finished:
            return True
        entries = {str(cell.output_id): pickle.dumps((self.owner, cell.attempt, result),
                                                     protocol=pickle.HIGHEST_PROTOCOL)
                   for cell, result in finished}
        import redis  # here, not at import: a shard alone (NoJournal) runs without Redis

        try:
            with self.conn.pipeline(transaction=False) as pipe:
                pipe.hset(self.key, mapping=entries)  # type: ignore[arg-type]
                pipe.expire(self.key, KEEP_S)
                pipe.execute()
            return True
        except redis.RedisError as exc:
            log.warning("%s: %d results not journaled: %s", self.key, len(entries), exc)
            return False

    def recall(self, cells: Iterable[Cell]) -> dict[int, CellResult]:
        """Results journaled under the leases these cells were taken over from."""
        taken = [cell for cell in cells if cell.taken_from is not None]
        if not taken:
            return {}
        import redis

        try:
            raw = self.conn.hmget(self.key, [str(cell.output_id) for cell in taken])
        except redis.RedisError as exc:
            log.warning("%s: journal not read, the taken-over cells are called: %s",
                        self.key, exc)
            return {}
        found: dict[int, CellResult] = {}
        for cell, data in zip(taken, raw, strict=True):
            if data is None:
                continue
            owner, attempt, result = pickle.loads(data)
            # the previous lease, and only it: its claim counted the attempt before ours
            if owner == cell.taken_from and attempt == cell.attempt - 1:
                found[cell.output_id] = result
        return found

    def forget(self, output_ids: Sequence[int]) -> None:
        """Written to the database: the entries are no longer needed."""
        if not output_ids:
            return
        import redis

        try:
            self.conn.hdel(self.key, *map(str, output_ids))
        except redis.RedisError as exc:  # stale entries are never taken up (see above)
            log.warning("%s: %d entries not deleted: %s", self.key, len(output_ids), exc)

    def drop(self) -> None:
        import redis

        try:
            self.conn.delete(self.key)
        except redis.RedisError as exc:
            log.warning("%s: not dropped (it expires): %s", self.key, exc)


class NoJournal(Journal):
    """A shard alone in its process (`assay eval` locally): nobody can take its leases over,
    so there is nothing to journal, and no Redis is needed."""

    def __init__(self) -> None:
        self.owner, self.key = "", ""

    def keep(self, finished: Sequence[tuple[Cell, CellResult]]) -> bool:
        return True

    def recall(self, cells: Iterable[Cell]) -> dict[int, CellResult]:
        return {}

    def forget(self, output_ids: Sequence[int]) -> None:
        pass

    def drop(self) -> None:
        pass
