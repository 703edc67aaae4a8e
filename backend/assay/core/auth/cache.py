"""Who a credential (an API token's digest, a session's id) belongs to, kept for a few
seconds in each process so that a read does not pay two or three queries to learn it again.

Revocation stays prompt: an entry lives `ttl_s` (ASSAY_AUTH_CACHE_S, 5 s by default) from
the moment it was read from the database, so a token deleted or a session signed out in
another process stops working within that time, and in this process at once (the views
that revoke clear the cache). Project access is not cached: the membership query also
loads the project every view needs, so a removed member is refused on their next request.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

MAX_ENTRIES = 10_000


@dataclass(frozen=True)
class Entry:
    user_id: int
    columns: dict[str, Any]  # the user's loaded columns, to rebuild it without a query
    expires: float


class CredentialCache:
    def __init__(self, ttl_s: float, max_entries: int = MAX_ENTRIES):
        self.ttl_s = ttl_s
        self.max_entries = max_entries
        self._entries: OrderedDict[str, Entry] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str) -> Entry | None:
        if self.ttl_s <= 0:
            return None
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            if entry.expires <= time.monotonic():
                del self._entries[key]
                return None
            return entry

    def put(self, key: str, user_id: int, columns: dict[str, Any]) -> None:
        if self.ttl_s <= 0:
            return
        with self._lock:
            self._entries[key] = Entry(user_id, columns, time.monotonic() + self.ttl_s)
            self._entries.move_to_end(key)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
