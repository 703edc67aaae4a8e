"""What the OpenAPI document says beyond each view's own decorators, in one place: the
security schemes, an operationId per operation, the errors each operation can answer,
shared enum components and the typed error body. An apispec plugin, so it runs on every
operation of every blueprint, including ones added later."""

from __future__ import annotations

import re
from typing import Any

from apispec import APISpec, BasePlugin
from apispec.ext.marshmallow import MarshmallowPlugin
from marshmallow import fields
from werkzeug.routing import Rule

from assay.api import security
from assay.api.events_doc import DATA_SCHEMAS, event_schemas
from assay.api.fields import ENUM_COMPONENT
from assay.api.patch import PatchSchema
from assay.api.typed_schemas import nullable_as_one_type

SECURITY_SCHEMES = {
    "bearer": {"type": "http", "scheme": "bearer",
               "description": "An API token (POST /api/auth/tokens) or the login's token."},
    "cookie": {"type": "apiKey", "in": "cookie", "name": security.SESSION_COOKIE,
               "description": "The session cookie set by POST /api/auth/login."},
    "csrf": {"type": "apiKey", "in": "header", "name": security.CSRF_HEADER,
             "description": f"With the session cookie, every unsafe method (POST, PUT, PATCH, "
                            f"DELETE) must echo the {security.CSRF_COOKIE} cookie's value in "
                            f"this header (double submit); bearer tokens need no CSRF token."},
}
READ_SECURITY: list[dict[str, list[str]]] = [{"bearer": []}, {"cookie": []}]
WRITE_SECURITY: list[dict[str, list[str]]] = [{"bearer": []}, {"cookie": [], "csrf": []}]

# Status -> response component: flask-smorest registers one per HTTP status (lazily, with
# the Error schema); 423, 429 and 503 are ours, to document Retry-After.
ERROR_RESPONSES = {401: "UNAUTHORIZED", 403: "FORBIDDEN", 404: "NOT_FOUND", 409: "CONFLICT",
                   414: "URI_TOO_LONG", 422: "UNPROCESSABLE_ENTITY", 423: "ACCOUNT_LOCKED",
                   429: "RATE_LIMITED",
                   502: "BAD_GATEWAY", 503: "SERVICE_BUSY"}
RETRY_AFTER = {"Retry-After": {"description": "Seconds to wait before trying again",
                               "schema": {"type": "integer", "minimum": 0}}}
UNSAFE = frozenset({"post", "put", "patch", "delete"})
HTTP_METHODS = UNSAFE | {"get"}

# Errors no rule below infers (a view's docstring that says "<status> CODE" declares it).
RAISES: dict[str, set[int]] = {
    "auth.login": {423, 429},
    "auth.register": {403, 409, 429},
}
_MENTIONED = re.compile(r"\b(4\d\d|5\d\d) [A-Z][A-Z_]+\b")

# operationIds the rule in operation_id() gets wrong or makes unclear, by endpoint.
OPERATION_IDS: dict[str, str] = {
    "auth.me": "auth_me",
    "auth.list_tokens": "tokens_list",
    "auth.create_token": "tokens_create",
    "auth.delete_token": "tokens_delete",
    "health.health": "health_get",
    "projects.audit_trail": "projects_audit",
    "project-settings.get_settings": "projects_settings_get",
    "project-settings.update_settings": "projects_settings_update",
    "critiques.critique_rubric": "critiques_create",
    "arena.list_challenges": "arena_challenges_list",
    "arena.get_challenge": "arena_challenges_get",
    "arena.save_draft": "arena_drafts_save",
    "arena.reveal_hint": "arena_hints_reveal",
    "arena.validate_eval": "arena_evals_validate",
    "arena.create_attempt": "arena_attempts_create",
    "arena.list_attempts": "arena_attempts_list",
    "arena.get_attempt": "arena_attempts_get",
    "datasets.list_cases": "cases_list",
    "datasets.add_case": "cases_create",
    "datasets.add_cases": "cases_create_many",
    "datasets.edit_case": "cases_update",
    "datasets.delete_case": "cases_delete",
    "datasets.diff_versions": "datasets_diff",
    "datasets.list_versions": "datasets_versions_list",
    "datasets.list_tags": "datasets_tags_list",
    "datasets.remove_tag": "datasets_tags_remove",
    "datasets.rename_tag": "datasets_tags_rename",
    "dataset_transfer.dataset_coverage": "datasets_coverage",
    "dataset_transfer.export_cases": "datasets_export",
    "dataset_transfer.import_cases": "datasets_import",
    "dataset_transfer.preview_import": "datasets_import_preview",
    "documents.upload": "documents_upload",
    "generation.list_jobs": "generation_list",
    "generation.get_job": "generation_get",
    "generation.job_events": "generation_events",
    **{f"generation.{verb}_{kind}": f"generation_{kind}_{name}"
       for kind in ("cases", "conversations", "questions")
       for verb, name in (("generate", "create"), ("estimate", "estimate"))},
    "judgments.start_judging": "judgments_create",
    "judgments.list_judgings": "judgments_list",
    "judgments.get_judgments": "judgments_get",
    "judgments.question_quality": "reports_question_quality",
    "members.change_role": "members_update",
    "members.remove_member": "members_delete",
    "members.add_member": "members_create",
    "invites.revoke_invite": "invites_delete",
    "prompts.list_versions": "prompts_versions_list",
    "prompts.add_version": "prompts_versions_create",
    "prompts.lineage": "prompts_versions_lineage",
    "prompts.set_production": "prompts_production_set",
    "prompts.diff_versions": "prompts_versions_diff",
    "prompts.preview_diff": "prompts_versions_diff_preview",
    "prompts.version_tree": "prompts_versions_tree",
    "scorers.list_versions": "scorers_versions_list",
    "scorers.add_version": "scorers_versions_create",
    "scorers.preview_judge_prompt": "scorers_preview",
    "scorers.try_scorer": "scorers_try",
    "runs.set_run_budget": "runs_update",
    "runs.retry_failed_run": "runs_retry_failed",
    "runs.get_case": "runs_case_get",
    "runs.get_target_comparison": "runs_compare_targets",
    "runs.get_run_comparison": "runs_compare",
    "runs.start_comparisons": "runs_comparisons_create",
    "runs.list_comparisons": "runs_comparisons_list",
    "runs.comparison_summary": "runs_comparisons_summary",
    "runs.run_events": "runs_events",
    "runs.list_outputs": "runs_outputs_list",
    "runs.get_output": "runs_outputs_get",
    "runs.put_score": "runs_scores_set",
    "runs.delete_score": "runs_scores_delete",
    "runs.put_scores": "runs_scores_set_many",
    "runs.add_scorers": "runs_scorers_add",
    "runs.estimate_scorers": "runs_scorers_estimate",
    "runs.scoring_events": "runs_scorers_events",
    "runs.create_demo_run": "runs_create_demo",
    "runs.get_facets": "runs_statistics_facets",
    "run_exports.export_run": "runs_export",
}
_RESOURCES = {"dataset_transfer": "datasets", "run_exports": "runs",
              "project-settings": "projects"}


def operation_id(endpoint: str, method: str) -> str:
    """`resource_verb` from the endpoint ("runs.list_runs" -> "runs_list"): the blueprint
    names the resource, the function's words without the resource's own name the rest."""
    if endpoint in OPERATION_IDS:
        return OPERATION_IDS[endpoint]
    blueprint, _, function = endpoint.partition(".")
    resource = _RESOURCES.get(blueprint, blueprint).replace("-", "_")
    own = {w for word in resource.split("_") for w in (word, word.removesuffix("s"))}
    words = [w for w in function.split("_") if w not in own]
    if words and words[0] == "get" and len(words) > 1:
        words = words[1:]  # reports.get_costs -> reports_costs
    if not words:
        words = ["get"] if method == "get" else [method]
    return "_".join([resource, *words])


def _errors(rule: Rule, method: str, operation: dict[str, Any]) -> set[int]:
    public = rule.endpoint in security.PUBLIC_ENDPOINTS
    # 503: no database connection came free; 414: any URL can be longer than the server's
    # request line (gunicorn answers it, in the Error shape: server_errors.py)
    statuses = {414, 503} if public else {401, 403, 414, 503}
    if rule.arguments:
        statuses.add(404)
    if method in UNSAFE and not public:
        statuses.add(409)
    statuses |= RAISES.get(rule.endpoint, set())
    text = f"{operation.get('summary', '')}\n{operation.get('description', '')}"
    statuses |= {int(s) for s in _MENTIONED.findall(text)}
    return statuses & set(ERROR_RESPONSES)


class ContractPlugin(BasePlugin):
    def init_spec(self, spec: APISpec) -> None:
        super().init_spec(spec)
        for name, scheme in SECURITY_SCHEMES.items():
            spec.components.security_scheme(name, scheme)
        for status, description in ((423, "The account is locked for a while"),
                                    (429, "Too many requests: wait before trying again"),
                                    (503, "Busy: no database connection came free in time "
                                          "(DATABASE_BUSY) or the slow-work lane is full "
                                          "(SLOW_WORK_BUSY); try again after Retry-After")):
            spec.components.response(ERROR_RESPONSES[status], {
                "description": description, "headers": RETRY_AFTER, "content": {
                    "application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}})
        spec.components.response(ERROR_RESPONSES[414], {
            "description": "URI_TOO_LONG: the request line (path and query) is longer than the "
                           "server reads (gunicorn's limit_request_line, 4094 bytes)",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}})
        for name, schema in ERROR_SCHEMAS.items():
            spec.components.schema(name, schema)
        spec.components.response("STALE_WRITE", STALE_WRITE)
        for plugin in spec.plugins:
            if isinstance(plugin, MarshmallowPlugin) and plugin.converter is not None:
                plugin.converter.add_attribute_function(_named_enum(spec))
                plugin.converter.add_attribute_function(nullable_as_one_type)
        for name, data in DATA_SCHEMAS.items():
            spec.components.schema(name, schema=data)
        for name, envelope in event_schemas().items():
            spec.components.schema(name, envelope)

    def schema_helper(self, name: str, definition: dict[str, Any], **kwargs: Any
                      ) -> dict[str, Any] | None:
        """A PATCH body (api/patch.py) must change something: minProperties 1."""
        schema = kwargs.get("schema")
        cls = schema if isinstance(schema, type) else type(schema)
        return {"minProperties": 1} if issubclass(cls, PatchSchema) else None

    def operation_helper(self, path: str | None = None,
                         operations: dict[str, Any] | None = None, **kwargs: Any) -> None:
        rule: Rule | None = kwargs.get("rule")
        if rule is None or not operations:
            return
        for method, operation in operations.items():
            if method not in HTTP_METHODS:
                continue
            operation["operationId"] = operation_id(rule.endpoint, method)
            if rule.endpoint in security.PUBLIC_ENDPOINTS:
                operation["security"] = []
            else:
                operation["security"] = WRITE_SECURITY if method in UNSAFE else READ_SECURITY
            responses = operation.setdefault("responses", {})
            for status in sorted(_errors(rule, method, operation)):
                responses.setdefault(str(status), ERROR_RESPONSES[status])  # apispec: a $ref


def _named_enum(spec: APISpec) -> Any:
    """An apispec attribute function: a NamedEnum field becomes a $ref to its component."""

    def convert(converter: Any, field: fields.Field, ret: dict[str, Any],
                **kwargs: Any) -> dict[str, Any]:
        name = field.metadata.get(ENUM_COMPONENT)
        if not name:
            return {}
        values = [v for v in ret.pop("enum") if v is not None]  # None: `nullable` says it
        ret.pop("type", None)
        if name not in spec.components.schemas:
            spec.components.schema(name, {"type": "string", "enum": values})
        elif spec.components.schemas[name]["enum"] != values:
            raise ValueError(f"enum component {name} used with different values")
        ref = {"$ref": f"#/components/schemas/{name}"}
        if not ret:
            return ref
        return {"allOf": [ref]}  # 3.0 ignores keys beside a $ref: default, nullable...

    return convert


# api/preconditions.py: the refusal of a write based on an old version.
STALE_WRITE = {
    "description": "STALE_WRITE: If-Match names an older version than the one stored; "
                   "nothing was written. `current` is the resource as it is now.",
    "headers": {"ETag": {"description": "The current version", "schema": {"type": "string"}}},
    "content": {"application/json": {"schema": {"allOf": [
        {"$ref": "#/components/schemas/Error"},
        {"type": "object", "required": ["current", "current_version"], "properties": {
            "current": {"type": "object", "additionalProperties": {},
                        "description": "The resource as its GET (or this write) returns it"},
            "current_version": {"type": "integer"}}}]}}}}

# anyOf, not recursive: generators (openapi-python-client) refuse recursive unions.
_ITEMS = {"type": "array", "items": {"anyOf": [{"type": "string"},
                                               {"$ref": "#/components/schemas/ErrorItem"}]}}
ERROR_SCHEMAS: dict[str, dict[str, Any]] = {
    "ErrorMessages": {
        "description": "One field's messages, a list of structured problems (RUN_NOT_READY's "
                       "`reasons`, an import's `rows`), the messages by field of one input "
                       "location (json, query, path, files), or a detail of the refusal (a "
                       "count, a status: INVALID_TRANSITION's `status` and `to`).",
        "anyOf": [_ITEMS, {"$ref": "#/components/schemas/FieldErrors"}, {"type": "string"},
                  {"type": "number"}, {"type": "boolean"}]},
    "FieldErrors": {
        "type": "object", "description": "Messages by field name (or list index).",
        "additionalProperties": {"anyOf": [_ITEMS, {"$ref": "#/components/schemas/NestedErrors"},
                                           {"type": "string"}]}},
    "NestedErrors": {
        "type": "object", "additionalProperties": {},
        "description": "A nested field's messages, nested as the input is."},
    "ErrorItem": {
        "type": "object", "additionalProperties": {},
        "description": "One structured problem: a reason a run cannot start {code, ...}, a "
                       "row of an import {row, field, reason}, a position in a rules scorer."},
}
