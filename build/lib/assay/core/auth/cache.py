"""Who a credential (an API token's digest, a session's id) belongs to, kept for a few
seconds in each process so that a read does not pay two or three queries to learn it again.

Revocation stays prompt: an entry lives `ttl_s` (ASSAY_AUTH_CACHE_S, 5 s by default) from
the moment it was read from the database, so a token deleted or a session signed out in
another process stops working within that time, and in this process at once (the views
that revoke clear the cache).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from assay.core.ttl_cache import TTLCache


@dataclass(frozen=True)
class Entry:
    user_id: int
    columns: dict[str, Any]  # the user's loaded columns, to rebuild it without a query


class CredentialCache(TTLCache[Entry]):
    pass
