"""gunicorn's gthread worker, taking new connections in turn with its siblings.

Keep-alive clients stay with the process that accepted them, and which process accepts is a
race. Measured under the read bench (50 keep-alive clients, 2 processes): one held 30-32
connections, the other 18-20. Both were busy, so the first one's clients waited about 1.6
times as long as the other's, and that process set the p95. Here each process counts its
open connections in memory shared with its siblings. It accepts only while it holds no
more than the fewest any sibling holds, so connections spread evenly, and a single process
(or a sibling at its own limit) never holds the others back.
"""

from __future__ import annotations

import ctypes
from multiprocessing.sharedctypes import RawArray
from typing import Any

from gunicorn.workers.gthread import ThreadWorker

FREE = -1  # a slot no live worker holds
SLOTS = 64  # live workers at most, counting those TTIN adds


class Shares:
    """Open connections per worker slot, in memory the arbiter's forks inherit. The arbiter
    alone hands out and takes back slots (pre_fork, child_exit), one at a time; a worker
    writes only its own."""

    def __init__(self, slots: int):
        self.counts = RawArray(ctypes.c_long, [FREE] * slots)

    def claim(self) -> int:
        for slot, count in enumerate(self.counts):
            if count == FREE:
                self.counts[slot] = 0
                return slot
        raise RuntimeError("more workers than connection slots")

    def release(self, slot: int) -> None:
        self.counts[slot] = FREE

    def fewest_besides(self, slot: int) -> int | None:
        """The fewest connections a live sibling holds; None without siblings."""
        others = [count for other, count in enumerate(self.counts)
                  if other != slot and count != FREE]
        return min(others) if others else None


class BalancedThreadWorker(ThreadWorker):
    shares: Shares  # set on the class before the arbiter forks (serve.py)
    slot: int  # set by the arbiter's pre_fork hook

    @property  # read by the accept loop on each turn: accept while below it
    def worker_connections(self) -> int:
        fewest = self.shares.fewest_besides(self.slot)
        return self._limit if fewest is None else min(self._limit, fewest + 1)

    @worker_connections.setter
    def worker_connections(self, limit: int) -> None:
        self._limit = limit

    def notify(self) -> None:
        """The loop's heartbeat, on each turn: publish this worker's count with it."""
        super().notify()
        self.shares.counts[self.slot] = self.nr_conns


def pre_fork(_server: Any, worker: Any) -> None:
    worker.slot = BalancedThreadWorker.shares.claim()


def release(worker: Any) -> None:
    BalancedThreadWorker.shares.release(worker.slot)
