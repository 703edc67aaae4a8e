"""Liveness (/health: the process answers, with what it can reach) and readiness (/ready:
503 until the database, Redis, a worker and the schema are all there)."""

from __future__ import annotations

from typing import Any

from marshmallow import Schema, fields
from rq import Queue, Worker
from sqlalchemy import text

from assay.api.base import Blueprint, runtime, session
from assay.observability.ready import readiness

blp = Blueprint("health", __name__, url_prefix="/api", description="Health")


class CheckSchema(Schema):
    ok = fields.Boolean(required=True)
    error = fields.String()


class WorkersSchema(Schema):
    ok = fields.Boolean(required=True)
    count = fields.Integer(required=True)


class HealthSchema(Schema):
    status = fields.String(required=True, metadata={
        "enum": ["ok", "degraded", "down"],
        "description": "ok: all reachable; degraded: Redis or the workers are not (200); "
                       "down: the database cannot serve a query (503)"})
    database = fields.Nested(CheckSchema, required=True)
    redis = fields.Nested(CheckSchema, required=True)
    workers = fields.Nested(WorkersSchema, required=True)


def _check(probe: Any) -> dict[str, Any]:
    try:
        probe()
        return {"ok": True}
    except Exception as exc:  # health reports failures instead of raising them
        return {"ok": False, "error": f"{type(exc).__name__}: {exc}"[:300]}


@blp.get("/health")
@blp.doc(security=[])  # public: see security.PUBLIC_ENDPOINTS
@blp.response(200, HealthSchema, description="The database answers (status ok or degraded)")
@blp.alt_response(503, schema=HealthSchema,
                  description="Down: the database cannot serve a query (a connection did not "
                              "come free in ASSAY_DB_POOL_TIMEOUT_S, or the query failed)")
def health() -> Any:
    rt = runtime()
    database = _check(lambda: session().execute(text("SELECT 1")))
    redis = _check(rt.redis.ping)
    try:
        queue = Queue(rt.settings.runs_queue, connection=rt.redis)
        count = len(Worker.all(queue=queue)) if redis["ok"] else 0
    except Exception:
        count = 0
    ok = database["ok"] and redis["ok"] and count > 0
    status = "ok" if ok else "degraded" if database["ok"] else "down"
    found = {"status": status, "database": database, "redis": redis,
             "workers": {"ok": count > 0, "count": count}}
    return found, 503 if status == "down" else 200


class MigrationsSchema(Schema):
    ok = fields.Boolean(required=True)
    current = fields.String(required=True, allow_none=True)
    head = fields.String(required=True, allow_none=True)


class ProbeSchema(Schema):
    ok = fields.Boolean(required=True)
    error = fields.String(metadata={"description": "the failure's class, never its message"})


class DatabaseProbeSchema(ProbeSchema):
    migrations = fields.Nested(MigrationsSchema, required=True)


class WorkerProbeSchema(ProbeSchema):
    count = fields.Integer(required=True, metadata={"description": "workers with a recent "
                                                    "heartbeat"})


class ReadySchema(Schema):
    ready = fields.Boolean(required=True)
    database = fields.Nested(DatabaseProbeSchema, required=True)
    redis = fields.Nested(ProbeSchema, required=True)
    workers = fields.Nested(WorkerProbeSchema, required=True)


@blp.get("/ready")
@blp.doc(security=[])  # public, for load balancers and orchestrators: see PUBLIC_ENDPOINTS
@blp.response(200, ReadySchema, description="Ready for traffic")
@blp.alt_response(503, schema=ReadySchema, description="Not ready: see which probe failed")
def ready() -> Any:
    found = readiness(runtime(), session())
    return found, 200 if found["ready"] else 503
