"""The retention job (edison §8.5): an RQ job on the runs queue, scheduled once per
ASSAY_RETENTION_INTERVAL_HOURS by the workers' reapers (a Redis SET NX EX key elects one
reaper per interval, whatever the number of workers), and runnable by hand as
`assay retention [--dry-run]`. A dry run only reports; a real run removes exactly what its
plan reported (core/retention/service.py), then the finished runs' progress streams."""

from __future__ import annotations

import logging
from typing import Any

from rq import Queue

from assay.core.base import utcnow
from assay.core.retention import service
from assay.core.retention.policy import RetentionPolicy
from assay.runtime import Runtime, current

log = logging.getLogger(__name__)
JOB = "assay.jobs.retention.apply_retention"


def _stream_runs(rt: Runtime) -> list[int]:
    """Runs that have a progress stream in Redis (SCAN: never blocks the server)."""
    sentinel = 987654321
    prefix, suffix = rt.events_key(sentinel).split(str(sentinel))
    runs = []
    for key in rt.redis.scan_iter(match=f"{prefix}*{suffix}", count=1000):
        middle = (key.decode() if isinstance(key, bytes) else key)[len(prefix):-len(suffix)]
        if middle.isdigit():
            runs.append(int(middle))
    return runs


def retention(rt: Runtime, policy: RetentionPolicy, dry_run: bool) -> dict[str, Any]:
    now = utcnow()
    with rt.db.factory() as session:
        report = service.plan(session, policy, now)
        going = set(report.runs) | service.runs_of_projects(
            session, [p["id"] for p in report.projects])
        report.event_streams = service.stale_streams(session, policy, now, _stream_runs(rt),
                                                     going)
        applied: dict[str, int] = {}
        if not dry_run:
            applied = service.apply(session, report)
            session.commit()
            keys = [rt.events_key(run_id) for run_id in report.event_streams]
            applied["event_streams"] = int(rt.redis.delete(*keys)) if keys else 0
    result = {"dry_run": dry_run, "report": report.as_dict(), "applied": applied}
    log.info("retention %s: %d projects, %d runs (%d outputs), %d outputs' raw payloads, "
             "%d audit events, %d event streams", "dry run" if dry_run else "applied",
             len(report.projects), len(report.runs), report.runs_outputs, report.raw_outputs,
             report.audit_events, len(report.event_streams))
    return result


def apply_retention(dry_run: bool = False) -> dict[str, Any]:
    """The RQ entry point: the instance's policy, from its environment."""
    rt = current()
    return retention(rt, rt.settings.retention, dry_run)


def schedule(rt: Runtime) -> bool:
    """Enqueue the retention job when this interval has none yet; True when enqueued."""
    interval_s = max(1, int(rt.settings.retention.interval_hours * 3600))
    key = f"{rt.settings.redis_prefix}:retention:scheduled"
    if not rt.redis.set(key, utcnow().isoformat(), nx=True, ex=interval_s):
        return False
    Queue(rt.settings.runs_queue, connection=rt.redis).enqueue(
        JOB, job_timeout=3600, result_ttl=7 * 86400, failure_ttl=7 * 86400)
    return True
