"""What one API process keeps between reads, so that the run page's reads stay cheap under
load (issue 19: p95 < 50 ms for 50 clients over a million outputs):

- **A member's access to a project**, for safe requests (GET, HEAD), for
  ASSAY_AUTH_CACHE_S like credentials: a removed member, a lowered role or a deleted
  project takes effect within those seconds in every process, and at once in the process
  that made the change. Writes always ask the database. The project comes back unloaded:
  a view that reads more than its id loads it then, so its figures are never stale.
- **The bodies of a stopped run's reads** (the run, its progress, summary, statistics, an
  outputs page, a grid page), keyed by the run's whole row, its scores' version included,
  and the query string. A number on them cannot be stale: whatever moves a run's numbers
  moves its row (core/runs/cache.py). What they show from other rows (a model's or a
  scorer's name) follows within ASSAY_READ_CACHE_S, at once in the writer's process.

Every successful write clears both in the process that served it. Only bodies that were
answered 200 are kept, for the exact query string that got them, so a kept read answers
what the view would: access is checked first, with the view's own rules.
"""

from __future__ import annotations

import hashlib

from flask import Flask, Response, current_app, g, request
from sqlalchemy import select
from sqlalchemy.orm import Session, make_transient_to_detached

from assay.core.auth.models import User
from assay.core.errors import Forbidden, NotFound
from assay.core.projects import service as projects
from assay.core.projects.models import Project, Role
from assay.core.runs.models import TERMINAL, Run
from assay.core.ttl_cache import TTLCache
from assay.extensions import db
from assay.runtime import current

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
MEMBERSHIPS = "assay_memberships"
READS = "assay_reads"
READS_MAX_BYTES = 64 * 1024 * 1024  # per process; a grid page of 50 columns is ~0.5 MB
# Reads of one run that depend only on its row, its outputs and their scores, and the
# names of its targets and scorers: not comparisons or reviews, whose rows move apart.
KEPT_ENDPOINTS = frozenset({
    "runs.get_run", "runs.get_progress", "runs.get_summary", "runs.get_statistics",
    "runs.list_outputs", "runs.get_grid",
})


def project_access(session: Session, user: User, project_id: int,
                   needed: Role) -> tuple[Project, Role]:
    if request.method not in SAFE_METHODS:
        return projects.access(session, user, project_id, needed)
    memberships: TTLCache[Role] = current_app.extensions[MEMBERSHIPS]
    key = f"{user.id}:{project_id}"
    role = memberships.get(key)
    if role is None:
        project, role = projects.membership(session, user, project_id)
        memberships.put(key, role)
    else:
        project = _unloaded(session, project_id)
    projects.require(role, needed)
    return project, role


def _unloaded(session: Session, project_id: int) -> Project:
    """The project in the session with every column but its id still to load."""
    project = Project()
    project.id = project_id
    make_transient_to_detached(project)  # the missing attributes are expired
    return session.merge(project, load=False)


def _reads() -> TTLCache[tuple[bytes, str]]:
    reads: TTLCache[tuple[bytes, str]] = current_app.extensions[READS]
    return reads


def serve_kept() -> Response | None:
    """Answer a stopped run's read from what this process kept, else mark it to keep."""
    if request.method != "GET" or request.endpoint not in KEPT_ENDPOINTS:
        return None
    args = request.view_args or {}
    try:
        project_access(db.session, g.user, args["project_id"], Role.viewer)
    except (NotFound, Forbidden):
        return None  # the view refuses it in its own words
    row = db.session.execute(select(Run.__table__).where(
        Run.id == args["run_id"], Run.project_id == args["project_id"])).first()
    if row is None or row.status not in TERMINAL:
        return None
    digest = hashlib.blake2b(repr(tuple(row)).encode(), digest_size=16).hexdigest()
    key = f"{request.endpoint}|{row.id}|{digest}|{request.query_string.decode('latin-1')}"
    kept = _reads().get(key)
    if kept is not None:
        return Response(kept[0], 200, content_type=kept[1])
    g.kept_read = key
    return None


def keep_or_forget(response: Response) -> Response:
    key = g.pop("kept_read", None)
    if key is not None and response.status_code == 200 and not response.is_streamed:
        body = response.get_data()
        _reads().put(key, (body, response.content_type), len(body))
    elif request.method not in SAFE_METHODS and response.status_code < 400:
        forget(current_app)
    return response


def forget(app: Flask) -> None:
    """Drop what this process keeps (a write went through; tests between cases)."""
    for name in (MEMBERSHIPS, READS):
        app.extensions[name].clear()


def init_app(app: Flask) -> None:
    settings = current().settings
    app.extensions[MEMBERSHIPS] = TTLCache[Role](settings.auth_cache_s)
    app.extensions[READS] = TTLCache[tuple[bytes, str]](
        settings.read_cache_s, max_size=READS_MAX_BYTES)
    app.before_request(serve_kept)  # after authentication (security.init_app)
    app.after_request(keep_or_forget)
