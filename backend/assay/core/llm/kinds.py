"""The provider kinds a credential can be: what each needs, and how its config is checked.

Base URLs are server roots: Assay appends the API paths (``/v1/chat/completions``,
``/v1/models``, ``/openai/deployments/...``, ``/api/tags``), so a pasted trailing ``/v1``
is removed on save.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

OPENAI, ANTHROPIC, AZURE = "openai", "anthropic", "azure_openai"
OPENROUTER, OLLAMA, COMPATIBLE, FAKE = "openrouter", "ollama", "openai_compatible", "fake"
GEMINI, VERTEX, BEDROCK = "google_gemini", "google_vertex", "aws_bedrock"


@dataclass(frozen=True)
class ConfigField:
    name: str
    label: str
    required: bool
    help: str
    placeholder: str | None
    pattern: str  # a full match, checked on save
    pattern_help: str


@dataclass(frozen=True)
class ProviderKind:
    kind: str
    label: str
    # None: the user must give one (fake: the server's setting); a {name} in it is the
    # config's setting of that name (Vertex's {location}, Bedrock's {region})
    default_base_url: str | None
    needs_key: bool  # a key (stored, or named in secret_env) is required
    accepts_key: bool  # False: the provider takes no key (a plain Ollama)
    supports_discovery: bool
    params_family: str  # which parameter rules apply (see params.py)
    config_fields: tuple[ConfigField, ...] = field(default_factory=tuple)
    description: str = ""
    # what the secret is, when it is not an API key (the form's label and the 422s')
    secret_label: str = "API key"


API_VERSION = ConfigField(
    "api_version", "API version", True, "The Azure OpenAI REST API version to call.",
    "2024-10-21", r"\d{4}-\d{2}-\d{2}(-preview)?", "a date like 2024-10-21 (or 2025-01-01-preview)")
DEPLOYMENT = ConfigField(
    "deployment", "Deployment", False,
    "When set, every model of this credential calls this deployment; leave it empty to use "
    "each model's provider model id as its deployment name.",
    "gpt-4o-mini", r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}",
    "letters, digits, dots, hyphens and underscores, at most 64")
ORGANIZATION = ConfigField(
    "organization", "Organization ID", False, "Sent as OpenAI-Organization (optional).",
    "org-...", r"[A-Za-z0-9_-]{1,100}", "letters, digits, hyphens and underscores")
ANTHROPIC_VERSION = ConfigField(
    "anthropic_version", "anthropic-version", False,
    "The anthropic-version header (optional: 2023-06-01 by default).", "2023-06-01",
    r"\d{4}-\d{2}-\d{2}", "a date like 2023-06-01")

LOCATION = ConfigField(
    "location", "Location", True, "The Vertex AI region the models are called in, e.g. "
    "us-central1, europe-west4, or global.", "us-central1", r"global|[a-z]+-[a-z]+\d{1,2}",
    "a Google Cloud region like us-central1, or global")
PROJECT_ID = ConfigField(
    "project_id", "Project ID", False, "The Google Cloud project to bill (optional: the "
    "service account's own project by default).", "my-project",
    r"[a-z][a-z0-9-]{4,28}[a-z0-9]", "a Google Cloud project id (6-30 lowercase letters, "
    "digits and hyphens)")
ACCESS_KEY_ID = ConfigField(
    "access_key_id", "Access key ID", True, "The IAM access key id (AKIA... or, for temporary "
    "credentials, ASIA...); its secret goes in the secret access key.", "AKIA...",
    r"[A-Z0-9]{16,128}", "16 to 128 capital letters and digits")
REGION = ConfigField(
    "region", "Region", True, "The AWS region Bedrock is called in.", "us-east-1",
    r"[a-z]{2}(-[a-z]+)+-\d{1,2}", "an AWS region like us-east-1")

# Settings every kind accepts: extra request headers (OpenRouter's HTTP-Referer and X-Title,
# ...; API only), a cap on calls in flight per model, and per-minute request and token
# limits per model shared by every worker (drawn in the form's "Limits").
COMMON_CONFIG = ("headers", "max_concurrency", "rpm_limit", "tpm_limit")
MAX_CONCURRENCY = 1000
# name: (maximum, what it counts); minimum 1
LIMITS = {"max_concurrency": (MAX_CONCURRENCY, "calls in flight per model"),
          "rpm_limit": (1_000_000, "requests per minute per model"),
          "tpm_limit": (1_000_000_000, "tokens per minute per model")}
MAX_HEADERS, HEADER_VALUE_MAX = 20, 500
AUTH_HEADERS = frozenset({"authorization", "proxy-authorization", "api-key", "x-api-key",
                          "cookie", "host", "content-length", "content-type",
                          "transfer-encoding", "connection", "anthropic-version"})

KINDS: dict[str, ProviderKind] = {k.kind: k for k in (
    ProviderKind(OPENAI, "OpenAI", "https://api.openai.com", True, True, True, "openai",
                 (ORGANIZATION,)),
    ProviderKind(ANTHROPIC, "Anthropic", "https://api.anthropic.com", True, True, True,
                 "anthropic", (ANTHROPIC_VERSION,)),
    ProviderKind(AZURE, "Azure OpenAI", None, True, True, False, "openai",
                 (API_VERSION, DEPLOYMENT),
                 "The base URL is your resource endpoint, e.g. https://NAME.openai.azure.com; "
                 "a model's provider model id is its deployment name."),
    ProviderKind(OPENROUTER, "OpenRouter", "https://openrouter.ai/api", True, True, True,
                 "openai"),
    ProviderKind(OLLAMA, "Ollama", "http://localhost:11434", False, False, True, "openai",
                 description="A local Ollama server; it takes no API key."),
    ProviderKind(COMPATIBLE, "OpenAI-compatible server (vLLM, llama.cpp, LM Studio...)", None,
                 False, True, True, "openai",
                 description="Any server speaking the OpenAI chat API; the key is optional."),
    ProviderKind(FAKE, "Fake provider (Assay's test double, not a real model)", None, False,
                 True, True, "openai",
                 description="Assay's built-in fake provider: canned replies for demos and "
                             "tests. Its base URL defaults to ASSAY_FAKE_PROVIDER_URL."),
    ProviderKind(GEMINI, "Google Gemini API", "https://generativelanguage.googleapis.com",
                 True, True, True, "google",
                 description="Gemini models with an API key from Google AI Studio."),
    ProviderKind(VERTEX, "Google Vertex AI", "https://{location}-aiplatform.googleapis.com",
                 True, True, True, "google", (LOCATION, PROJECT_ID),
                 "Gemini models on Google Cloud, called as a service account: paste its "
                 "JSON key. The base URL defaults to the location's endpoint.",
                 "Service-account JSON key"),
    ProviderKind(BEDROCK, "AWS Bedrock", "https://bedrock-runtime.{region}.amazonaws.com",
                 True, True, True, "bedrock", (ACCESS_KEY_ID, REGION),
                 "Models on AWS Bedrock through the Converse API, requests signed with SigV4. "
                 "The base URL defaults to the region's endpoint.",
                 "Secret access key"),
)}


def get_kind(kind: str) -> ProviderKind:
    return KINDS[kind]


def default_base_url(kind: ProviderKind, fake_url: str,
                     config: dict[str, Any] | None = None) -> str | None:
    """The kind's default base URL; a {setting} in it filled from the config (None when
    the config lacks it)."""
    if kind.kind == FAKE:
        return fake_url
    url = kind.default_base_url
    if url is None or "{" not in url:
        return url
    config = config or {}
    names = re.findall(r"{(\w+)}", url)
    if not all(isinstance(config.get(n), str) and config.get(n) for n in names):
        return None
    if kind.kind == VERTEX and config.get("location") == "global":
        return "https://aiplatform.googleapis.com"
    return url.format(**{n: config[n] for n in names})


def normalise_base_url(url: str) -> str:
    """Strip whitespace, trailing slashes and a trailing /v1 (Assay appends the paths)."""
    url = url.strip().rstrip("/")
    if url.lower().endswith("/v1"):
        url = url[:-3].rstrip("/")
    return url


def _check_headers(value: Any) -> str | None:
    if not isinstance(value, dict):
        return "Must be an object of header names to values."
    if len(value) > MAX_HEADERS:
        return f"At most {MAX_HEADERS} headers."
    for name, text in value.items():
        if not re.fullmatch(r"[A-Za-z0-9-]{1,100}", name):
            return f"{name[:100]!r} is not a header name."
        if name.lower() in AUTH_HEADERS:
            return (f"{name} is set by Assay; put a key in api_key, never in headers (they "
                    "are visible to every member).")
        if not isinstance(text, str) or len(text) > HEADER_VALUE_MAX \
                or any(ord(c) < 32 for c in text):
            return f"The value of {name} must be one line of at most {HEADER_VALUE_MAX} characters."
    return None


def _check_common(name: str, value: Any) -> str | None:
    if name in LIMITS:
        top, what = LIMITS[name]
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= top:
            return f"Must be an integer from 1 to {top} ({what})."
        return None
    return _check_headers(value)


def check_config(kind: ProviderKind, config: dict[str, Any]) -> dict[str, list[str]]:
    """Field errors of a credential's config for its kind: unknown, missing or malformed."""
    known = {f.name: f for f in kind.config_fields}
    errors: dict[str, list[str]] = {}
    for name, value in config.items():
        if name in COMMON_CONFIG:
            problem = None if value is None else _check_common(name, value)
            if problem:
                errors[name] = [problem]
        elif name not in known:
            allowed = ", ".join([*known, *COMMON_CONFIG])
            errors[name] = [f"Unknown setting for {kind.label} (allowed: {allowed})."]
    for name, spec in known.items():
        value = config.get(name)
        if value is None or value == "":
            if spec.required:
                errors[name] = [f"{spec.label} is required for {kind.label}."]
            continue
        if not isinstance(value, str):
            errors[name] = ["Must be a string."]
        elif not re.fullmatch(spec.pattern, value):
            errors[name] = [f"Must be {spec.pattern_help}."]
    return errors


def clean_config(kind: ProviderKind, config: dict[str, Any]) -> dict[str, Any]:
    """The config as stored: known settings with a value, nothing else."""
    names = [f.name for f in kind.config_fields] + list(COMMON_CONFIG)
    return {name: config[name] for name in names if config.get(name) not in (None, "", {})}


def public(kind: ProviderKind, fake_url: str) -> dict[str, Any]:
    """What the UI needs to render the credential form of this kind."""
    return {
        "kind": kind.kind, "label": kind.label,
        "default_base_url": default_base_url(kind, fake_url),
        "needs_key": kind.needs_key, "accepts_key": kind.accepts_key,
        "supports_discovery": kind.supports_discovery, "description": kind.description,
        "secret_label": kind.secret_label,
        "config_fields": [{"name": f.name, "label": f.label, "required": f.required,
                           "help": f.help, "placeholder": f.placeholder}
                          for f in kind.config_fields],
    }
