"""Files in and out of the API.

In: the same operation takes JSON (the file as text or base64) or multipart/form-data (what
`curl -F`, a browser's FormData and generated clients send). `json_or_form(JsonSchema,
FormSchema)` parses whichever came, with the same 422 shape as every other body ({"json":
...} or {"files": ...}), and `body_doc` declares both content types in the OpenAPI document.
A form's object fields (a mapping) are JSON text, as OpenAPI's multipart encoding says.

Out: `download` streams a file with its real content type and a Content-Disposition that
names it; `download_doc` declares each content type: text types as a string, binary ones
(PDF, zip) as a binary string. A generated client (openapi-python-client) reads every
format of an operation by the first media type it knows (text/* as text, JSON, octet-stream
as bytes), so the order is chosen for it: text first when every format is text, and
application/octet-stream first when any is binary, so its bytes come back whole."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import wraps
from typing import Any
from urllib.parse import quote

from flask import Response, request
from marshmallow import RAISE, Schema, ValidationError, fields
from webargs.multidictproxy import MultiDictProxy
from werkzeug.datastructures import CombinedMultiDict, FileStorage

from assay.api.bodies import ClosingBody
from assay.api.errors import Parser
from assay.core.errors import Invalid

MULTIPART = "multipart/form-data"


class FileField(fields.Field):
    """An uploaded file (a multipart part with a file name)."""

    def __init__(self, **kwargs: Any) -> None:
        metadata = {"type": "string", "format": "binary", **kwargs.pop("metadata", {})}
        super().__init__(metadata=metadata, **kwargs)

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> Any:
        if not isinstance(value, FileStorage):
            raise ValidationError("Send a file here (a part with a filename), not a value.")
        return value


class JsonText(fields.Nested):
    """An object sent as JSON text, as a form field is."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, partial: Any = None,
                     **kwargs: Any) -> Any:
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except (ValueError, RecursionError) as error:
                raise ValidationError("Not valid JSON.") from error
        return super()._deserialize(value, attr, data, partial, **kwargs)


class _FormParser(Parser):
    """"files" holds the form's files and its fields together (errors name the body
    "files", as the document upload's do)."""

    def load_files(self, req: Any, schema: Schema) -> Any:
        return MultiDictProxy(CombinedMultiDict([req.files, req.form]), schema)


_FORMS = _FormParser()


def is_form() -> bool:
    return request.mimetype == MULTIPART


def json_or_form(json_schema: type[Schema], form_schema: type[Schema]
                 ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Passes the parsed body (from JSON or from the form) as the view's first argument."""
    def decorator(view: Callable[..., Any]) -> Callable[..., Any]:
        @wraps(view)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if is_form():
                data = _FORMS.parse(form_schema(), request, location="files", unknown=RAISE)
            else:
                data = _FORMS.parse(json_schema(), request, location="json")
            return view(data, *args, **kwargs)
        return wrapper
    return decorator


def body_doc(json_schema: type[Schema], form_schema: type[Schema]) -> dict[str, Any]:
    return {"required": True, "content": {"application/json": {"schema": json_schema},
                                          MULTIPART: {"schema": form_schema}}}


@contextmanager
def file_errors(file_field: str = "file", content_field: str = "content") -> Iterator[None]:
    """A domain error about the JSON body's `content` names the form's file instead when the
    file came as a form, so a client sees the field it sent."""
    try:
        yield
    except Invalid as error:
        if is_form() and isinstance(error.errors.get("json"), dict):
            found = error.errors.pop("json")
            error.errors["files"] = {file_field if name == content_field else name: reasons
                                    for name, reasons in found.items()}
        raise


BINARY = {"schema": {"type": "string", "format": "binary"}}
TEXT = {"schema": {"type": "string"}}
ANY_FORMAT = "application/octet-stream"


def _is_text(content_type: str) -> bool:
    kind = content_type.split(";")[0].strip()
    return kind.startswith("text/") or kind in {"application/xml", "application/x-ndjson"} or (
        "charset=" in content_type)


def attachment(filename: str) -> str:
    """Content-Disposition for `filename` (RFC 6266): an ASCII name, and the UTF-8 one beside
    it when they differ. A header must be Latin-1: gunicorn refuses a dataset named "数据"."""
    plain = "".join(c if 32 <= ord(c) < 127 and c not in '"\\' else "-" for c in filename)
    if plain == filename:
        return f'attachment; filename="{plain}"'
    return f"attachment; filename=\"{plain}\"; filename*=UTF-8''{quote(filename, safe='')}"


def download(chunks: Iterator[str], content_type: str, filename: str) -> Response:
    return Response(ClosingBody(chunks), content_type=content_type, headers={
        "Content-Disposition": attachment(filename)})


def download_doc(description: str, *content_types: str,
                 json_schema: type[Schema] | None = None) -> dict[int, Any]:
    """The 200 response of a download: each content type (without its charset) a string,
    binary for a binary type; application/json, when a format is JSON, last and with its
    schema. With a binary type, application/octet-stream comes first (module docstring)."""
    content: dict[str, Any] = {}
    if not all(_is_text(t) for t in content_types):
        content[ANY_FORMAT] = {"schema": {**BINARY["schema"], "description": (
            "Any format's bytes, for clients that read one type for every format: the "
            "server sends the format's own type (below) in Content-Type")}}
    content |= {t.split(";")[0]: TEXT if _is_text(t) else BINARY for t in content_types}
    if json_schema is not None:
        content["application/json"] = {"schema": json_schema}
    return {200: {"description": description, "content": content, "headers": {
        "Content-Disposition": {"description": "attachment; filename=\"...\"",
                                "schema": {"type": "string"}}}}}
