"""Who a credential (an API token's digest, a session's id) belongs to, kept for a few
seconds in each process so that a read does not pay two or three queries to learn it again.

Revocation stays prompt: every write through the API clears the cache in every process
(api/forget_everywhere.py), and an entry lives at most `ttl_s` (ASSAY_AUTH_CACHE_S, 5 s by
default) from the moment it was read from the database, which bounds a revocation made
outside the API or missed while Redis could not be reached.
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
