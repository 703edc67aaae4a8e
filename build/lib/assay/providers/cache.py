"""The content-addressed response cache: the same deterministic request gets the same reply,
once paid for.

The key is the SHA-256 of canonical JSON (sorted keys, no spaces) of (project, provider kind,
base URL host, model, params), then of the messages, then of the repeat number. The project
scopes it: tenants never share entries (a hit would tell one what another asked). The repeat
is in it so that the repeats of one run stay independent samples of the model (their spread
is what flakiness is measured from), while a second identical run replays each repeat. Only
deterministic calls are cached (temperature 0, or a seed). Writes are `INSERT .. ON CONFLICT
DO NOTHING` (both SQLite and PostgreSQL), so concurrent workers storing the same reply never
fail; hits are counted.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, cast
from urllib.parse import urlsplit

from sqlalchemy import Table, bindparam, select, update
from sqlalchemy.orm import Session

from assay.core import bulk
from assay.core.llm.models import CachedResponse

VERSION = 1


def is_deterministic(params: Mapping[str, Any]) -> bool:
    temperature = params.get("temperature")
    zero = (isinstance(temperature, int | float) and not isinstance(temperature, bool)
            and temperature == 0)
    return zero or params.get("seed") is not None


def _host(base_url: str) -> str:
    try:
        return (urlsplit(base_url.strip()).netloc or base_url).lower()
    except ValueError:
        return base_url


def _canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      default=str).encode()


def key_prefix(kind: str, base_url: str, model: str, params: Mapping[str, Any],
               scope: int | str | None = None) -> Any:
    """The hash state of what every call of one model shares (computed once per model).
    `scope` (the project) keeps tenants apart: a hit must never tell one project what
    another one asked."""
    return hashlib.sha256(_canonical({"v": VERSION, "scope": scope, "provider": kind,
                                      "host": _host(base_url), "model": model,
                                      "params": dict(params)}))


def keyed(prefix: Any, messages: list[dict[str, Any]], repeat: int = 0) -> str:
    state = prefix.copy()
    state.update(b"\n" + _canonical(messages) + b"\n" + str(repeat).encode())
    return str(state.hexdigest())


def cache_key(kind: str, base_url: str, model: str, params: Mapping[str, Any],
              messages: list[dict[str, Any]], repeat: int = 0,
              scope: int | str | None = None) -> str:
    return keyed(key_prefix(kind, base_url, model, params, scope), messages, repeat)


@dataclass(frozen=True)
class Hit:
    key: str
    text: str
    tokens_in: int | None
    tokens_out: int | None
    raw: dict[str, Any]


def lookup(session: Session, keys: Iterable[str]) -> dict[str, Hit]:
    wanted = sorted(set(keys))
    if not wanted:
        return {}
    rows = session.execute(select(CachedResponse.key, CachedResponse.text,
                                  CachedResponse.tokens_in, CachedResponse.tokens_out,
                                  CachedResponse.raw)
                           .where(bulk.any_of(CachedResponse.key, wanted,
                                              session.connection())))
    return {row.key: Hit(row.key, row.text, row.tokens_in, row.tokens_out, row.raw or {})
            for row in rows}


@dataclass(frozen=True)
class Entry:
    key: str
    provider: str
    model: str
    text: str
    tokens_in: int | None
    tokens_out: int | None
    raw: dict[str, Any]


def store(session: Session, entries: Iterable[Entry]) -> None:
    """Insert replies not cached yet; an entry another worker stored first is left as is."""
    rows = {e.key: {"key": e.key, "provider": e.provider, "model": e.model, "text": e.text,
                    "tokens_in": e.tokens_in, "tokens_out": e.tokens_out, "raw": e.raw,
                    "hits": 0} for e in entries}
    if not rows:
        return
    bulk.insert_rows(session.connection(), cast(Table, CachedResponse.__table__),
                     [rows[k] for k in sorted(rows)], keys=["key"], skip_existing=True)


def count_hits(session: Session, keys: Iterable[str]) -> None:
    counts = Counter(keys)
    if not counts:
        return
    table = cast(Table, CachedResponse.__table__)
    statement = (update(table).where(table.c.key == bindparam("k"))
                 .values(hits=table.c.hits + bindparam("n")))
    # sorted: concurrent workers lock the rows in one order, so they cannot deadlock
    session.connection().execute(statement,
                                 [{"k": k, "n": n} for k, n in sorted(counts.items())])
