"""What one API process keeps between reads, so that the run page's reads stay cheap under
load (issue 19: p95 < 50 ms for 50 clients over a million outputs):

- **A member's access to a project**, for safe requests (GET, HEAD), for
  ASSAY_AUTH_CACHE_S like credentials: a removed member, a lowered role or a deleted
  project takes effect at once in every process (forget_everywhere.py), and within those
  seconds when made outside the API. Writes always ask the database. The project comes
  back unloaded: a view that reads more than its id loads it then, so its figures are
  never stale.
- **The bodies of a stopped run's reads** (the run, its progress, summary, statistics, an
  outputs page, a grid page), keyed by the run's whole row, its scores' version included,
  and the query string. A number on them cannot be stale: whatever moves a run's numbers
  moves its row (core/runs/cache.py). What they show from other rows (a model's or a
  scorer's name) follows at once, or within ASSAY_READ_CACHE_S when changed outside the API.

- **The project's lists** (projects, datasets, models: rows only the API writes), per user
  and query string, for ASSAY_LIST_CACHE_S (5 s): a change made outside the API (the CLI,
  a seed) shows within those seconds.
- **A page of the runs list whose runs have all stopped**, per user and query string, keyed
  like a stopped run's reads by the page's rows, and by the count of runs it is paged from
  (workers move runs: a run started, moved or deleted changes one or the other). A page
  with a run still going is made each time, each stopped run's view kept as for its reads.

Every successful write through the API (but those in FORGETS_NOTHING) clears these and
the credentials in every process: the one that served it at once, the others when they
hear of it (forget_everywhere.py). An entry read before a clear is not kept after it
(TTLCache's generation). Only bodies that were answered 200 are kept, for the exact query
string that got them, so a kept read answers what the view would: access is checked first,
with the view's own rules.
"""

from __future__ import annotations

import functools
import hashlib
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple
from urllib.parse import parse_qs

from flask import Flask, Response, current_app, g, request
from marshmallow import EXCLUDE, Schema, ValidationError
from sqlalchemy import Select, String, bindparam, func, inspect, literal_column, select
from sqlalchemy.exc import TimeoutError as PoolTimeout
from sqlalchemy.orm import Session, make_transient_to_detached
from werkzeug.exceptions import HTTPException

from assay.admission import ARRIVED, Environ, StartResponse, WSGIApp
from assay.api import dump, forget_everywhere
from assay.api import security as credentials
from assay.api.fields import MAX_ID
from assay.api.json_bodies import FastJSONProvider
from assay.api.security import CREDENTIALS, HEADERS
from assay.core.auth.models import User
from assay.core.errors import Forbidden, NotFound
from assay.core.projects import service as projects
from assay.core.projects.models import Project, Role
from assay.core.runs.models import TERMINAL, Run
from assay.core.runs.output_detail import output_detail
from assay.core.runs.service import runs_listing
from assay.core.ttl_cache import TTLCache
from assay.extensions import db
from assay.observability import tracing
from assay.observability.logs import REQUEST_ID_HEADER, job_context, request_id_from
from assay.observability.web import observe_request
from assay.runtime import current

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
RUN_PATH = "/runs/<int:run_id>"  # in every kept read's route
KEEP_AS = "assay.kept_read"  # the environ's key for a read to keep, and under which key
MEMBERSHIPS = "assay_memberships"
READS = "assay_reads"
LISTS = "assay_lists"
RUN_VIEWS = "assay_run_views"
READS_MAX_BYTES = 64 * 1024 * 1024  # per process; a grid page of 50 columns is ~0.5 MB
LISTS_MAX_BYTES = 16 * 1024 * 1024
_RUN_ATTRS = [attr.key for attr in inspect(Run).column_attrs]
# Reads of one run that depend only on its row, its outputs and their scores, and the
# names of its targets and scorers: not comparisons or reviews, whose rows move apart.
KEPT_ENDPOINTS = frozenset({
    "runs.get_run", "runs.get_progress", "runs.get_summary", "runs.get_statistics",
    "runs.list_outputs", "runs.get_grid",
})
KEPT_LISTS = frozenset({"projects.list_projects", "datasets.list_datasets", "models.list_models"})
# A page of runs every one of which has stopped, keyed by its rows and the project's count.
RUNS_LIST = "runs.list_runs"
LIST_PATHS = ("/api/projects", "/datasets", "/models", "/runs")  # how their paths end
KEPT = KEPT_ENDPOINTS | KEPT_LISTS | {RUNS_LIST}
# Made by the door each time, never kept: outputs are many and rarely read twice.
OUTPUT = "runs.get_output"
DOOR = KEPT | {OUTPUT}

# Writes that change nothing a process keeps (they only compute, or write a person's own
# practice rows): they leave every process's caches be. A sign-in makes a new credential
# only; a practice challenge's drafts are saved as people type.
FORGETS_NOTHING = frozenset({
    "auth.login", "runs.estimate", "runs.estimate_scorers", "generation.estimate_questions",
    "generation.estimate_cases", "generation.estimate_conversations",
    "scorers.preview_judge_prompt", "prompts.preview_diff", "dataset_transfer.preview_import",
    "experiments.validate_steps", "arena.save_draft", "arena.reveal_hint",
})

# The run page's reads and the project's lists, the reads people make most: plain SELECTs,
# none through a server-side cursor (an export's), which PostgreSQL allows only inside a
# transaction.
ALONE_ENDPOINTS = KEPT_ENDPOINTS | {
    "runs.list_runs", OUTPUT, "projects.list_projects", "projects.get_project",
    "datasets.list_datasets", "models.list_models", "scorers.list_scorers",
    "prompts.list_prompts",
}


def project_access(session: Session, user: User, project_id: int,
                   needed: Role) -> tuple[Project, Role]:
    if request.method not in SAFE_METHODS:
        return projects.access(session, user, project_id, needed)
    role, project = _kept_role(session, user, project_id)
    projects.require(role, needed)
    return project or _unloaded(session, project_id), role


def _kept_role(session: Session, user: User, project_id: int) -> tuple[Role, Project | None]:
    """The member's role, as kept (the project then stays unread), else read with it."""
    memberships = _cache(MEMBERSHIPS)
    key = f"{user.id}:{project_id}"
    role = memberships.get(key)
    if role is not None:
        return role, None
    since = memberships.generation
    project, role = projects.membership(session, user, project_id)
    memberships.put(key, role, since=since)
    return role, project


def _unloaded(session: Session, project_id: int) -> Project:
    """The project in the session with every column but its id still to load."""
    project = Project()
    project.id = project_id
    make_transient_to_detached(project)  # the missing attributes are expired
    return session.merge(project, load=False)


def _cache(name: str, app: Flask | None = None) -> TTLCache[Any]:
    """This process's cache `name`, of `app` (outside a request) or the current one (the
    app holds them: tests swap them per "process")."""
    found: TTLCache[Any] = (app or current_app).extensions[name]
    return found


class KeptReadsDoor:
    """WSGI, in front of Flask: a stopped run's read or a list answered from what this
    process kept, without a request context, routing through the views or a session (a kept
    read cost about 0.9 ms of CPU through Flask under load, most of it Flask's own work). It
    answers only what it can check from memory plus the run's row: a credential this
    process verified in the last ASSAY_AUTH_CACHE_S, the member's role kept as long, and a
    body kept for that very row (a list: that user) and query string. Anything else goes on
    to Flask, which answers it in full and fills what the next read finds here. With
    tracing on it stands aside: a read's span comes from Flask's instrumentation."""

    def __init__(self, app: Flask, wsgi_app: WSGIApp):
        self.app = app
        self.wsgi_app = wsgi_app
        assert all(RUN_PATH in rule.rule for rule in app.url_map.iter_rules()
                   if rule.endpoint in KEPT_ENDPOINTS | {OUTPUT})  # __call__'s test holds
        assert all(rule.rule.endswith(LIST_PATHS) for rule in app.url_map.iter_rules()
                   if rule.endpoint in KEPT_LISTS | {RUNS_LIST})

    def __call__(self, environ: Environ,
                 start_response: StartResponse) -> Iterable[bytes]:
        # string tests spare other reads a second routing
        path = environ.get("PATH_INFO", "")
        if environ["REQUEST_METHOD"] == "GET" and ("/runs/" in path
                                                   or path.endswith(LIST_PATHS)):
            started = environ.get(ARRIVED) or time.perf_counter()
            try:
                found = self._kept(environ)
            except PoolTimeout:  # no connection free: Flask answers it (503 if still none)
                found = None
            if found is not None:
                return self._answer(environ, start_response, started, *found)
        return self.wsgi_app(environ, start_response)

    def _kept(self, environ: Environ) -> tuple[str, bytes, str, dict[str, Any]] | None:
        """(route, body, content type, the ids its log lines carry) when this read is
        kept; else marks it to keep."""
        try:
            rule, args = self.app.url_map.bind_to_environ(environ).match(return_rule=True)
        except HTTPException:
            return None
        endpoint = rule.endpoint
        if endpoint not in DOOR or not all(
                1 <= value <= MAX_ID for value in args.values() if isinstance(value, int)):
            return None
        user_id = credentials.user_id_kept(self.app, environ)
        if user_id is None:
            return None  # Flask checks it, refuses it in its own words, or keeps it
        if "project_id" in args:
            role = _cache(MEMBERSHIPS, self.app).get(f"{user_id}:{args['project_id']}")
            if role is None or not role.at_least(Role.viewer):
                return None
        kept = (_output(self.app, args) if endpoint == OUTPUT
                else _find(self.app, environ, endpoint, args, user_id))
        return None if kept is None else (rule.rule, *kept, {"user_id": user_id, **args})

    def _answer(self, environ: Environ, start_response: StartResponse, started: float,
                route: str, body: bytes, content_type: str,
                ids: dict[str, Any]) -> list[bytes]:
        request_id = request_id_from(environ.get("HTTP_X_REQUEST_ID"))
        start_response("200 OK", [("Content-Type", content_type),
                                  ("Content-Length", str(len(body))), *HEADERS.items(),
                                  (REQUEST_ID_HEADER, request_id)])
        with job_context({"log": {**ids, "request_id": request_id}}):  # as Flask's would
            observe_request("GET", route, 200, time.perf_counter() - started)
        return [body]


def _find(app: Flask, environ: Environ, endpoint: str, args: Mapping[str, Any],
          user_id: int) -> tuple[bytes, str] | None:
    """A kept read's body (body, content type), else None and the read marked to keep when
    it may be."""
    if endpoint in KEPT_ENDPOINTS:
        return _lookup(app, environ, endpoint, args)
    if endpoint == RUNS_LIST:
        return _runs_lookup(app, environ, args["project_id"], user_id)
    return _list_lookup(app, environ, endpoint, user_id)


def _lookup(app: Flask, environ: Environ, endpoint: str,
            args: Mapping[str, Any]) -> tuple[bytes, str] | None:
    """The kept body of an allowed read of a stopped run, else None and, the run stopped,
    the read marked to keep (keep_or_forget). The key is the run's row read before the
    view: a body can then be newer than its key, never older."""
    environ[KEEP_AS] = None  # looked up: Flask's hook need not look again
    reads = _cache(READS, app)
    since = reads.generation
    row = _run_row(args["project_id"], args["run_id"])
    if row is None or row.status not in TERMINAL:
        return None
    key = f"{endpoint}|{row.id}|{row.digest}|{environ.get('QUERY_STRING', '')}"
    return _kept_or_marked(environ, READS, reads, key, since)


def _runs_lookup(app: Flask, environ: Environ, project_id: int,
                 user_id: int) -> tuple[bytes, str] | None:
    """The kept body of a page of runs that have all stopped, keyed by the page's rows and
    the count of the project's runs it is paged from (a run added, moved or deleted
    changes one or the other), else None and the read marked to keep."""
    environ[KEEP_AS] = None
    page = _page_args(environ.get("QUERY_STRING", ""))
    if page is None:
        return None  # Flask refuses it in its own words
    reads = _cache(READS, app)
    since = reads.generation
    stamp = _runs_page_stamp(project_id, page["page"], page["page_size"], page["status"])
    if stamp is None:
        return None
    key = f"{RUNS_LIST}|{user_id}|{project_id}|{stamp}|{environ.get('QUERY_STRING', '')}"
    return _kept_or_marked(environ, READS, reads, key, since)


@functools.cache
def _page_schema() -> Schema:
    from assay.api.runs.schemas import RunListArgs  # its package imports us

    return RunListArgs(unknown=EXCLUDE)


def _page_args(query_string: str) -> dict[str, Any] | None:
    """A runs page's arguments as the view reads them (the first of repeated values), or
    None where the view would refuse them."""
    parsed = parse_qs(query_string, keep_blank_values=True)
    values = {name: found[0] for name, found in parsed.items()}
    try:
        loaded: dict[str, Any] = _page_schema().load(values)
    except ValidationError:
        return None
    return loaded


def _list_lookup(app: Flask, environ: Environ, endpoint: str,
                 user_id: int) -> tuple[bytes, str] | None:
    """The kept body of an allowed list read, else None and the read marked to keep."""
    lists = _cache(LISTS, app)
    key = f"{endpoint}|{user_id}|{environ.get('PATH_INFO')}|{environ.get('QUERY_STRING', '')}"
    return _kept_or_marked(environ, LISTS, lists, key, lists.generation)


def _kept_or_marked(environ: Environ, name: str, cache: TTLCache[Any], key: str,
                    since: int) -> tuple[bytes, str] | None:
    """What `cache` (named `name`) keeps under `key`, else None and the read marked to be
    kept there once answered (unless a clear came after `since`)."""
    kept: tuple[bytes, str] | None = cache.get(key)
    environ[KEEP_AS] = None if kept is not None else (name, key, since)
    return kept


@functools.cache
def _output_schema() -> Schema:
    from assay.api.runs.results_schemas import OutputDetailSchema  # its package imports us

    return dump.install(OutputDetailSchema())


def _output(app: Flask, args: Mapping[str, Any]) -> tuple[bytes, str] | None:
    """One output in full, as the view makes it; None for Flask to say why there is none
    (or to write it, when its encoder must)."""
    encoder = app.json
    if not isinstance(encoder, FastJSONProvider):
        return None
    with db.autocommit_engine.connect() as connection:
        view = output_detail(connection, args["project_id"], args["run_id"], args["output_id"])
    body = None if view is None else encoder.body(_output_schema().dump(view))
    return None if body is None else (body, encoder.mimetype)


def serve_kept() -> Response | None:
    """Flask's turn at a kept read the door could not check from memory (a credential or a
    role this process had not kept): answered as kept, else marked to keep, once Flask has
    authenticated the request and the member's role is read."""
    endpoint = request.endpoint
    if (request.method != "GET" or endpoint not in KEPT
            or KEEP_AS in request.environ):
        return None
    args = request.view_args or {}
    if "project_id" in args:
        try:
            projects.require(_kept_role(db.session, g.user, args["project_id"])[0],
                             Role.viewer)
        except (NotFound, Forbidden):
            return None  # the view refuses it in its own words
    kept = _find(current_app, request.environ, endpoint, args, g.user.id)
    return None if kept is None else Response(kept[0], 200, content_type=kept[1])


class RunStamp(NamedTuple):
    id: int
    status: str
    digest: str  # of the whole row: any change to it changes this


# built once: making the statement anew (its operators, its cache key) cost a kept read
# more than running it
_OF_RUN = (Run.id == bindparam("run_id"), Run.project_id == bindparam("project_id"))
_RUN_ROW = select(Run.__table__).where(*_OF_RUN)
# PostgreSQL digests the row itself: three columns cost the driver and SQLAlchemy less
# than the row's 26 (a description and a conversion each) and a digest made here
_RUN_STAMP = select(Run.id, Run.status,
                    literal_column("md5(runs::text)", String)).where(*_OF_RUN)


def _run_row(project_id: int, run_id: int) -> RunStamp | None:
    """The run's stamp, each statement committed on its own on PostgreSQL (no BEGIN)."""
    params = {"run_id": run_id, "project_id": project_id}
    with db.autocommit_engine.connect() as connection:
        if connection.dialect.name == "postgresql":
            stamped = connection.execute(_RUN_STAMP, params).first()
            return None if stamped is None else RunStamp(stamped[0], stamped[1], stamped[2])
        row = connection.execute(_RUN_ROW, params).first()
    return None if row is None else RunStamp(row.id, row.status, _digest(tuple(row)))


@functools.lru_cache(maxsize=32)
def _page_stamp(status: str | None) -> Select[Any]:
    """PostgreSQL: the count, a digest of the page's rows, and whether they all stopped, of
    the runs list's own page (core/runs/service.runs_listing)."""
    listing = runs_listing(status)
    rows = listing.window.subquery("page")
    return select(listing.count.scalar_subquery(),
                  literal_column("md5(string_agg(md5(page::text), ',' ORDER BY page.id))",
                                 String),
                  func.bool_and(rows.c.status.in_(sorted(TERMINAL)))).select_from(rows)


def _runs_page_stamp(project_id: int, page: int, page_size: int,
                     status: str | None) -> str | None:
    """The runs page's count and a digest of its rows; None when a run on it has not
    stopped (a running run's targets' counters move apart from its row)."""
    params = {"project_id": project_id, "page_limit": page_size,
              "page_offset": (page - 1) * page_size}
    with db.autocommit_engine.connect() as connection:
        if connection.dialect.name == "postgresql":
            count, digest, stopped = connection.execute(_page_stamp(status), params).one()
        else:
            listing = runs_listing(status)
            rows = connection.execute(listing.window, params).all()
            count = connection.scalar(listing.count, params)
            digest = _digest(tuple(tuple(row) for row in rows))
            stopped = all(row.status in TERMINAL for row in rows)
    return None if stopped is False else f"{count}:{digest}"


def kept_run_views(items: list[Run],
                   compute: Callable[[list[Run]], list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """The JSON views of `items` (a runs page): a stopped run's as kept from an earlier
    page, keyed by its whole row like its reads; `compute` makes the others."""
    if request.method != "GET":  # a write's answer is made from what it just changed
        return compute(items)
    views = _cache(RUN_VIEWS)
    since = views.generation
    keys = {run.id: "|".join((str(run.id), _digest(tuple(
        getattr(run, name) for name in _RUN_ATTRS)))) for run in items
        if run.status in TERMINAL}
    kept = {run_id: found for run_id, key in keys.items()
            if (found := views.get(key)) is not None}
    fresh = iter(compute([run for run in items if run.id not in kept]))
    out = []
    for run in items:
        view = kept.get(run.id) or next(fresh)
        if run.id in keys and run.id not in kept:
            views.put(keys[run.id], view, since=since)
        out.append(view)
    return out


def _digest(values: tuple[Any, ...]) -> str:
    return hashlib.blake2b(repr(values).encode(), digest_size=16).hexdigest()


def statements_alone() -> None:
    """The commonest reads run each statement on its own on PostgreSQL (autocommit),
    saving the BEGIN and ROLLBACK round trips around them. What they see is unchanged:
    READ COMMITTED already gives each statement its own snapshot, and what such a GET
    writes (a kept row of core/runs/cache.py) is one upsert either way."""
    if (request.method == "GET" and request.endpoint in ALONE_ENDPOINTS
            and db.engine.dialect.name == "postgresql"):
        db.session.bind = db.autocommit_engine


def keep_or_forget(response: Response) -> Response:
    keep = request.environ.pop(KEEP_AS, None)
    if keep is not None and response.status_code == 200 and not response.is_streamed:
        name, key, since = keep
        body = response.get_data()
        _cache(name).put(key, (body, response.content_type), len(body), since=since)
    elif (request.method not in SAFE_METHODS and response.status_code < 400
          and request.endpoint not in FORGETS_NOTHING):
        forget(current_app)
        forget_everywhere.announce()
    return response


def forget(app: Flask) -> None:
    """Drop what this process keeps (a write went through here or in another process;
    tests between cases)."""
    for name in (MEMBERSHIPS, READS, LISTS, RUN_VIEWS, CREDENTIALS):
        app.extensions[name].clear()


def hear_other_processes(app: Flask) -> forget_everywhere.Listener:
    """A serving process forgets what it keeps when another one serves a write."""
    return forget_everywhere.listen(lambda: forget(app))


def init_app(app: Flask) -> None:
    settings = current().settings
    app.extensions[MEMBERSHIPS] = TTLCache[Role](settings.auth_cache_s)
    app.extensions[READS] = TTLCache[tuple[bytes, str]](
        settings.read_cache_s, max_size=READS_MAX_BYTES)
    app.extensions[LISTS] = TTLCache[tuple[bytes, str]](
        settings.list_cache_s, max_size=LISTS_MAX_BYTES)
    app.extensions[RUN_VIEWS] = TTLCache[dict[str, Any]](settings.read_cache_s, 2_000)
    app.before_request(statements_alone)  # before authentication, whose reads it spares
    app.after_request(keep_or_forget)
    if not tracing.enabled():  # traced, every read gets its span from Flask's instrumentation
        app.wsgi_app = KeptReadsDoor(app, app.wsgi_app)  # type: ignore[method-assign]


def init_serving(app: Flask) -> None:
    app.before_request(serve_kept)  # once authentication has named the user
