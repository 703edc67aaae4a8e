"""A bounded least-recently-used map whose entries expire a fixed time after they were
put: what one process may trust for a few seconds without asking the database again
(credentials, project memberships, a stopped run's reads), or keep for good because it
cannot change (a bootstrap interval of given values)."""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict
from typing import Generic, TypeVar

V = TypeVar("V")


class TTLCache(Generic[V]):
    """`ttl_s` <= 0 keeps nothing, None keeps until evicted. Bounded by entries and by the
    sum of their sizes (a response's bytes; 1 each unless told), the least recently read
    going first. `generation` moves on every clear: a value read from the database before a
    clear (another process's write) is put with `since` the generation it started in, and
    dropped if a clear came between."""

    def __init__(self, ttl_s: float | None, max_entries: int = 10_000, max_size: int | None = None):
        self.ttl_s = ttl_s
        self.max_entries = max_entries
        self.max_size = max_size
        self._entries: OrderedDict[str, tuple[V, float, int]] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()
        self.generation = 0

    @property
    def off(self) -> bool:
        return self.ttl_s is not None and self.ttl_s <= 0

    def get(self, key: str) -> V | None:
        if self.off:
            return None
        with self._lock:
            found = self._entries.get(key)
            if found is None:
                return None
            value, expires, _ = found
            if expires <= time.monotonic():
                self._drop(key)
                return None
            self._entries.move_to_end(key)
            return value

    def put(self, key: str, value: V, size: int = 1, since: int | None = None) -> None:
        if self.off or (self.max_size is not None and size > self.max_size):
            return
        with self._lock:
            if since is not None and since != self.generation:
                return  # read before a clear: it may show what the clear was for
            if key in self._entries:
                self._drop(key)
            expires = math.inf if self.ttl_s is None else time.monotonic() + self.ttl_s
            self._entries[key] = (value, expires, size)
            self._size += size
            while len(self._entries) > self.max_entries or (
                    self.max_size is not None and self._size > self.max_size):
                self._drop(next(iter(self._entries)))

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._size = 0
            self.generation += 1

    def _drop(self, key: str) -> None:
        self._size -= self._entries.pop(key)[2]
