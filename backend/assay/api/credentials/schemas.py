from __future__ import annotations

from collections.abc import Callable
from typing import Any

from marshmallow import Schema, ValidationError, fields, validate

from assay.api.fields import Count, StrictBoolean, version_field
from assay.api.patch import PatchSchema
from assay.core.llm.kinds import KINDS, MAX_CONCURRENCY

KIND_NAMES = list(KINDS)
KEY_SOURCES = ["stored", "env", "none"]


def not_blank(value: str) -> None:
    if not value.strip():
        raise ValidationError("Must not be blank.")


Validators = list[Callable[[Any], Any]]
LABEL: Validators = [validate.Length(min=1, max=100), not_blank]
BASE_URL = validate.Length(min=1, max=500)
API_KEY: Validators = [validate.Length(min=1, max=4096), not_blank]
ENV_NAME: Validators = [validate.Length(min=1, max=128),
            validate.Regexp(r"^[A-Z_][A-Z0-9_]*$",
                            error="An environment variable name: A-Z, 0-9 and _, not "
                                  "starting with a digit.")]


def Config(**kwargs: Any) -> fields.Dict:
    return fields.Dict(keys=fields.String(validate=validate.Length(min=1, max=64)),
                       values=fields.Raw(), **kwargs)


class CredentialSchema(Schema):
    id = fields.Integer(required=True)
    row_version = version_field()
    kind = fields.String(required=True, validate=validate.OneOf(KIND_NAMES))
    label = fields.String(required=True)
    base_url = fields.String(required=True)
    config = Config(required=True)
    key_hint = fields.String(required=True, allow_none=True, metadata={
        "description": "The stored key masked to its last 4 characters (••••1234); null "
                       "when the key comes from an environment variable or there is none"})
    key_source = fields.String(required=True, validate=validate.OneOf(KEY_SOURCES))
    secret_env = fields.String(required=True, allow_none=True)
    is_default = fields.Boolean(required=True)
    concurrency_ceiling = fields.Integer(required=True, allow_none=True, metadata={
        "description": "The most calls in flight on this credential at once, over every run, "
                       "shard and worker together; null: no ceiling"})
    last_tested_at = fields.DateTime(required=True, allow_none=True)
    last_test_ok = fields.Boolean(required=True, allow_none=True)
    last_test_error = fields.String(required=True, allow_none=True)
    model_count = fields.Integer(required=True, metadata={
        "description": "Models (archived ones included) that use this credential"})
    created_at = fields.DateTime(required=True)
    updated_at = fields.DateTime(required=True)


_DOCS = {
    "base_url": "The provider's server root (Assay adds /v1/...; a trailing /v1 is removed). "
                "Null or absent: the kind's default. Checked against the SSRF guard.",
    "api_key": "Write-only: stored encrypted, shown only as its last 4 characters. In a "
               "PATCH, null removes the stored key. For google_vertex: the service account's "
               "JSON key (checked on save); for aws_bedrock: the secret access key, or JSON "
               '{"secret_access_key": ..., "session_token": ...} for temporary credentials.',
    "secret_env": "Read the key from this server environment variable instead; it takes "
                  "precedence over a stored key. Only a variable the operator grants the "
                  "project (ASSAY_CREDENTIAL_ENV) is accepted, and its key is sent only to "
                  "the kind's default URL or one the operator adds (ASSAY_CREDENTIAL_ENV_URLS).",
    "config": "Settings of the kind (its config_fields in GET /api/provider-kinds: Azure "
              "api_version, required, and deployment; OpenAI organization; Anthropic "
              "anthropic_version), plus for every kind: max_concurrency (calls in flight per "
              "model, 1-1000), rpm_limit (requests per minute per model, 1-1,000,000), "
              "tpm_limit (tokens per minute per model, prompt plus max output tokens, "
              "1-1,000,000,000), both shared by every worker through Redis, and headers "
              "(extra request headers such as OpenRouter's HTTP-Referer; visible to "
              "members, so never a key).",
    "concurrency_ceiling": "The most calls in flight on this credential at once, over every "
                           "run, shard and worker together, so that several runs on one key "
                           "share it (each run also keeps to its own concurrency); null: no "
                           "ceiling. Unlike config.max_concurrency (per model, per worker "
                           "process), it holds across workers.",
    "is_default": "Make this the project's default credential of its kind (the previous "
                  "default stops being it). The first credential of a kind is the default.",
}


class CredentialCreateSchema(Schema):
    kind = fields.String(required=True, validate=validate.OneOf(KIND_NAMES))
    label = fields.String(required=True, validate=LABEL)
    base_url = fields.String(load_default=None, allow_none=True, validate=BASE_URL,
                             metadata={"description": _DOCS["base_url"]})
    api_key = fields.String(load_default=None, allow_none=True, validate=API_KEY,
                            load_only=True, metadata={"description": _DOCS["api_key"]})
    secret_env = fields.String(load_default=None, allow_none=True, validate=ENV_NAME,
                               metadata={"description": _DOCS["secret_env"]})
    config = Config(load_default=dict, metadata={"description": _DOCS["config"]})
    concurrency_ceiling = Count(1, MAX_CONCURRENCY, load_default=None, allow_none=True,
                                metadata={"description": _DOCS["concurrency_ceiling"]})
    is_default = StrictBoolean(load_default=False, metadata={"description": _DOCS["is_default"]})


class CredentialUpdateSchema(PatchSchema):
    label = fields.String(validate=LABEL)
    base_url = fields.String(allow_none=True, validate=BASE_URL,
                             metadata={"description": _DOCS["base_url"]})
    api_key = fields.String(allow_none=True, validate=API_KEY, load_only=True,
                            metadata={"description": _DOCS["api_key"]})
    secret_env = fields.String(allow_none=True, validate=ENV_NAME,
                               metadata={"description": _DOCS["secret_env"]})
    config = Config(metadata={"description": "Replaces the whole config. " + _DOCS["config"]})
    concurrency_ceiling = Count(1, MAX_CONCURRENCY, allow_none=True,
                                metadata={"description": _DOCS["concurrency_ceiling"]})
    is_default = StrictBoolean(metadata={"description": _DOCS["is_default"]})


class ConnectionTestSchema(Schema):
    ok = fields.Boolean(required=True)
    error = fields.String(required=True, allow_none=True)
    latency_ms = fields.Integer(required=True, allow_none=True)
    tested_at = fields.DateTime(required=True)


class DiscoveredModelSchema(Schema):
    id = fields.String(required=True, metadata={"description": "The provider's model id"})
    name = fields.String(required=True, allow_none=True)
    configured = fields.Boolean(required=True, metadata={
        "description": "A model of this credential already uses this id"})


class DiscoveredSchema(Schema):
    items = fields.List(fields.Nested(DiscoveredModelSchema), required=True)


class ConfigFieldSchema(Schema):
    name = fields.String(required=True)
    label = fields.String(required=True)
    required = fields.Boolean(required=True)
    help = fields.String(required=True)
    placeholder = fields.String(required=True, allow_none=True)


class ProviderKindSchema(Schema):
    kind = fields.String(required=True, validate=validate.OneOf(KIND_NAMES))
    label = fields.String(required=True)
    default_base_url = fields.String(required=True, allow_none=True)
    needs_key = fields.Boolean(required=True, metadata={
        "description": "A key (stored, or named in secret_env) is required"})
    accepts_key = fields.Boolean(required=True, metadata={
        "description": "False: this kind takes no key (Ollama)"})
    supports_discovery = fields.Boolean(required=True)
    description = fields.String(required=True)
    secret_label = fields.String(required=True, metadata={
        "description": "What the secret (api_key) is for this kind: an API key, Vertex's "
                       "service-account JSON key, Bedrock's secret access key"})
    config_fields = fields.List(fields.Nested(ConfigFieldSchema), required=True)
