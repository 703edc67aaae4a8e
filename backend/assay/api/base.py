"""What every view shares: the session, the current user, project access, pagination."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import flask_smorest
from flask import Response, g
from flask_smorest.utils import resolve_schema_instance
from marshmallow import Schema, fields, validate
from sqlalchemy.orm import Session

from assay.api import dump, kept_reads
from assay.api.bodies import ClosingBody
from assay.api.errors import Parser
from assay.core.auth.models import User
from assay.core.errors import Unauthorized
from assay.core.pagination import COUNT_CAP, Page
from assay.core.projects.models import Project, Role
from assay.extensions import db
from assay.runtime import Runtime, current


class Blueprint(flask_smorest.Blueprint):
    ARGUMENTS_PARSER = Parser()

    def arguments(self, schema: Any, **kwargs: Any) -> Any:
        """flask-smorest's, with one schema instance for every request (webargs made one
        per request from a class: a deep copy of its fields, a twentieth of a list read)."""
        return super().arguments(resolve_schema_instance(schema), **kwargs)

    def response(self, status_code: Any, schema: Any = None, **kwargs: Any) -> Any:
        """flask-smorest's, with the schema's dump compiled (api/dump.py)."""
        if schema is not None:
            schema = dump.install(resolve_schema_instance(schema))
        return super().response(status_code, schema, **kwargs)


def session() -> Session:
    return db.session


def runtime() -> Runtime:
    return current()


def user() -> User:
    found: User | None = g.get("user")
    if found is None:
        raise Unauthorized("Sign in to continue")
    return found


def project_access(project_id: int, needed: Role) -> tuple[Project, Role]:
    return kept_reads.project_access(session(), user(), project_id, needed)


def commit() -> None:
    session().commit()


class PageArgs(Schema):
    page = fields.Integer(load_default=1, validate=validate.Range(min=1, max=100_000))
    page_size = fields.Integer(load_default=20, validate=validate.Range(min=1, max=100))


_pages: dict[str, type[Schema]] = {}


def page_of(item: type[Schema], estimated: bool = False) -> type[Schema]:
    """The paginated-list schema for `item`: {items, total, page, page_size}, and
    `total_exact` for a list whose total may be an estimate (pagination.count_rows)."""
    name = item.__name__.removesuffix("Schema") + "PageSchema"
    if name not in _pages:
        extra = {"total_exact": fields.Boolean(required=True, metadata={
            "description": "false: `total` is approximate, the database's estimate (more "
                           f"than {COUNT_CAP:,} rows match and no counter keeps the number)"
        })} if estimated else {}
        _pages[name] = type(name, (Schema,), {
            "items": fields.List(fields.Nested(item), required=True),
            "total": fields.Integer(required=True),
            "page": fields.Integer(required=True),
            "page_size": fields.Integer(required=True),
            **extra,
        })
    return _pages[name]


def event_stream(frames: Iterator[str]) -> Response:
    """A Server-Sent Events response that no proxy buffers or caches."""
    return Response(ClosingBody(frames), mimetype="text/event-stream", headers={
        "Cache-Control": "no-cache", "X-Accel-Buffering": "no", "Connection": "keep-alive"})


def sse_response(description: str, event: str) -> dict[int, dict[str, Any]]:
    """The 200 of a stream endpoint, for @blp.doc(responses=...): `itemSchema` (OpenAPI
    3.2's keyword, which schemathesis reads in 3.0 documents too) is one event as it is on
    the wire, its component in api/events_doc.py. No `schema`: in 3.2 it would describe the
    whole stream, which no JSON schema does, and without one a generated client hands back
    the raw bytes instead of parsing a stream as one value."""
    return {200: {"description": f"{description} Frames `id:`, `event:`, `data: <JSON>`; "
                                 "comment lines are heartbeats.",
                  "content": {"text/event-stream": {
                      "itemSchema": {"$ref": f"#/components/schemas/{event}"}}}}}


def page_dict(page: Page[Any], items: list[Any]) -> dict[str, Any]:
    return {"items": items, "total": page.total, "page": page.page, "page_size": page.page_size,
            "total_exact": page.exact}
