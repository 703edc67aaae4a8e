"""Generation jobs live in Redis, not in tables: a job is a preview until it is accepted
into a dataset, and a preview nobody accepted expires (TTL) instead of piling up.

Keys, all under the settings' Redis prefix:
  {prefix}:generation:ids                    the id counter (ids are integers, like rows')
  {prefix}:generation:{job_id}               the job as JSON (spec, status, items, cost...)
  {prefix}:generation:{job_id}:events        its progress events (a capped Stream)
  {prefix}:generation:project:{project_id}   the project's job ids, newest last (a ZSET)
"""

from __future__ import annotations

import json
from typing import Any

import redis

from assay.core.errors import NotFound

TTL_S = 7 * 86400  # a preview is kept for a week
QUEUED, RUNNING, SUCCEEDED, FAILED = "queued", "running", "succeeded", "failed"
PARTIAL = "partial"  # finished with fewer items than asked for; `error` says why
CANCELLED = "cancelled"  # stopped by a user: the items of the batches done are kept
STATUSES = (QUEUED, RUNNING, SUCCEEDED, PARTIAL, FAILED, CANCELLED)
TERMINAL = frozenset({SUCCEEDED, PARTIAL, FAILED, CANCELLED})
ACCEPTABLE = frozenset({SUCCEEDED, PARTIAL, CANCELLED})  # a preview with items to accept


def job_key(prefix: str, job_id: int) -> str:
    return f"{prefix}:generation:{job_id}"


def events_key(prefix: str, job_id: int) -> str:
    return f"{prefix}:generation:{job_id}:events"


def _project_key(prefix: str, project_id: int) -> str:
    return f"{prefix}:generation:project:{project_id}"


def new_id(conn: redis.Redis, prefix: str) -> int:
    return int(conn.incr(f"{prefix}:generation:ids"))


def save(conn: redis.Redis, prefix: str, state: dict[str, Any]) -> None:
    job_id, project_id = int(state["id"]), int(state["project_id"])
    pipe = conn.pipeline()
    pipe.set(job_key(prefix, job_id), json.dumps(state), ex=TTL_S)
    pipe.zadd(_project_key(prefix, project_id), {str(job_id): job_id})
    pipe.expire(_project_key(prefix, project_id), TTL_S)
    pipe.expire(events_key(prefix, job_id), TTL_S)
    pipe.execute()


def load(conn: redis.Redis, prefix: str, job_id: int) -> dict[str, Any] | None:
    raw = conn.get(job_key(prefix, job_id))
    return None if raw is None else dict(json.loads(raw))


def get(conn: redis.Redis, prefix: str, project_id: int, job_id: int) -> dict[str, Any]:
    """The job of this project, or NotFound (another project's job is not found either)."""
    state = load(conn, prefix, job_id)
    if state is None or state.get("project_id") != project_id:
        raise NotFound("Generation job not found")
    return state


def project_jobs(conn: redis.Redis, prefix: str, project_id: int, page: int,
                 page_size: int) -> tuple[list[dict[str, Any]], int]:
    """The project's jobs still kept, newest first, and how many there are."""
    key = _project_key(prefix, project_id)
    start = (page - 1) * page_size
    ids = [int(i) for i in conn.zrevrange(key, start, start + page_size - 1)]
    states = [load(conn, prefix, i) for i in ids]
    gone = [str(i) for i, s in zip(ids, states, strict=True) if s is None]
    if gone:  # expired: forget them
        conn.zrem(key, *gone)
    return [s for s in states if s is not None], int(conn.zcard(key))


def active_ids(conn: redis.Redis, prefix: str, project_id: int) -> list[int]:
    """The project's jobs queued or running (those a stop concerns)."""
    ids = [int(i) for i in conn.zrange(_project_key(prefix, project_id), 0, -1)]
    return [i for i in ids
            if (state := load(conn, prefix, i)) is not None and state["status"] not in TERMINAL]
