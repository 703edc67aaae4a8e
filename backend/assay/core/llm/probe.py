"""Connection tests and model discovery: one small, real call to a provider.

Each call re-checks the base URL against the SSRF guard, never follows a redirect, has a
10 s timeout and reports failures as one short, human sentence ("401 from provider:
invalid API key", "connection refused"). The key is sent in a header and never appears in
a message: any echo of it by the provider is masked.

Calls per kind (base URLs are server roots, see kinds.py):

=================  =======================================  ==========================
kind               test                                     discover
=================  =======================================  ==========================
openai, fake,      GET /v1/models                           GET /v1/models (data[].id)
openai_compatible
openrouter         GET /v1/key (its model list is public)   GET /v1/models
anthropic          GET /v1/models?limit=1 (free, no model   GET /v1/models (paged)
                   id to guess)
azure_openai       POST /openai/deployments/{deployment}/   not offered
                   chat/completions (1 token) when a
                   deployment is set, else GET /openai/models
ollama             GET /api/tags                            GET /api/tags (models[].name)
=================  =======================================  ==========================
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Any

import httpx

from assay.core.errors import DomainError, Invalid
from assay.core.llm.kinds import ANTHROPIC, AZURE, FAKE, OLLAMA, OPENAI, OPENROUTER, ProviderKind
from assay.providers.ssrf import UnresolvableHost, check_base_url

TIMEOUT_S = 10.0
ANTHROPIC_VERSION = "2023-06-01"
FAKE_PLACEHOLDER_KEY = "assay"  # the fake provider wants some key; a keyless fake sends this
MAX_PAGES = 20
EXCERPT = 200


class ProviderUnavailable(DomainError):
    """The provider could not be reached or refused the call (discovery)."""

    status, code = 502, "PROVIDER_ERROR"


@dataclass(frozen=True)
class Target:
    """Where and how to call a provider. Holds the key: never log or repr it."""

    kind: ProviderKind
    base_url: str
    api_key: str | None = field(repr=False)
    config: dict[str, str]


@dataclass(frozen=True)
class Outcome:
    ok: bool
    error: str | None
    latency_ms: int | None


class _Failed(Exception):
    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


def _mask(text: str, secret: str | None) -> str:
    if secret and len(secret) >= 4:
        text = text.replace(secret, "••••")
    return text


def _headers(target: Target) -> dict[str, str]:
    key, kind = target.api_key, target.kind.kind
    headers = {"Accept": "application/json"}
    if kind == ANTHROPIC:
        headers["anthropic-version"] = ANTHROPIC_VERSION
        if key:
            headers["x-api-key"] = key
    elif kind == AZURE:
        if key:
            headers["api-key"] = key
    else:
        key = key or (FAKE_PLACEHOLDER_KEY if kind == FAKE else None)
        if key:
            headers["Authorization"] = f"Bearer {key}"
        if kind == OPENAI and target.config.get("organization"):
            headers["OpenAI-Organization"] = target.config["organization"]
    return headers


def _provider_message(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return " ".join(response.text.split())[:EXCERPT]
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        error = error.get("message")
    if isinstance(error, str):
        return " ".join(error.split())[:EXCERPT]
    return ""


def _status_message(response: httpx.Response, path: str, target: Target) -> str:
    status = response.status_code
    if status in (301, 302, 303, 307, 308):
        where = response.headers.get("location", "")[:EXCERPT]
        return (f"{status} from provider: redirected to {where or 'another URL'}; Assay does "
                "not follow redirects, so use the final address as the base URL")
    if status == 401:
        return "401 from provider: invalid API key"
    detail = _provider_message(response)
    if status == 403:
        text = "403 from provider: the key is not allowed to do this"
    elif status == 404:
        hint = "base URL, deployment or API version" if target.kind.kind == AZURE else "base URL"
        text = f"404 from provider: {path} not found (check the {hint})"
    elif status == 429:
        text = "429 from provider: rate limited or out of quota"
    elif status >= 500:
        text = f"{status} from provider: server error"
    else:
        text = f"{status} from provider"
    if detail:
        text = f"{text}: {detail}"
    return _mask(text, target.api_key)


def _transport_message(error: httpx.HTTPError) -> str:
    text = str(error) or type(error).__name__
    lowered = text.lower()
    if isinstance(error, httpx.TimeoutException):
        phase = "connecting" if isinstance(error, httpx.ConnectTimeout) else "waiting for an answer"
        return f"timed out after {TIMEOUT_S:g} s {phase}"
    if "refused" in lowered:
        return "connection refused"
    if "certificate" in lowered or "ssl" in lowered or "tls" in lowered:
        return f"TLS error: {text[:EXCERPT]}"
    if "name or service not known" in lowered or "nodename nor servname" in lowered \
            or "getaddrinfo" in lowered:
        return "could not resolve the host name"
    if isinstance(error, httpx.RemoteProtocolError):
        return "the server closed the connection without a valid HTTP answer"
    return f"could not connect: {text[:EXCERPT]}"


def _call(client: httpx.Client, target: Target, method: str, path: str,
          allow_private: bool, **kwargs: Any) -> Any:
    """One request: SSRF re-checked, no redirects, failures as a _Failed message."""
    url = target.base_url + path
    try:
        check_base_url(url, allow_private)
    except UnresolvableHost:
        raise _Failed("could not resolve the host name") from None
    except Invalid as refused:
        raise _Failed(" ".join(refused.errors.get("base_url", [refused.message]))) from None
    try:
        response = client.request(method, url, headers=_headers(target), **kwargs)
    except httpx.HTTPError as error:
        raise _Failed(_mask(_transport_message(error), target.api_key)) from None
    if response.status_code != 200:
        raise _Failed(_status_message(response, path.split("?")[0], target))
    try:
        return response.json()
    except ValueError:
        raise _Failed("the provider's answer is not JSON (is the base URL right?)") from None


def _client(transport: httpx.BaseTransport | None) -> httpx.Client:
    # trust_env=False: no proxy from the environment, so the SSRF check sees the real host
    return httpx.Client(timeout=TIMEOUT_S, follow_redirects=False, trust_env=False,
                        transport=transport)


def _test_request(target: Target) -> tuple[str, str, dict[str, Any]]:
    kind = target.kind.kind
    if kind == ANTHROPIC:
        return "GET", "/v1/models?limit=1", {}
    if kind == OPENROUTER:
        return "GET", "/v1/key", {}
    if kind == OLLAMA:
        return "GET", "/api/tags", {}
    if kind == AZURE:
        version = target.config.get("api_version", "")
        deployment = target.config.get("deployment")
        if deployment:
            return "POST", (f"/openai/deployments/{deployment}/chat/completions"
                            f"?api-version={version}"), {"json": {
                                "messages": [{"role": "user", "content": "ping"}],
                                "max_tokens": 1}}
        return "GET", f"/openai/models?api-version={version}", {}
    return "GET", "/v1/models", {}


def check_connection(target: Target, allow_private: bool = True,
                    transport: httpx.BaseTransport | None = None) -> Outcome:
    """One small real call: does this base URL answer, and does it accept the key?"""
    method, path, kwargs = _test_request(target)
    started = time.monotonic()
    try:
        with _client(transport) as client:
            _call(client, target, method, path, allow_private, **kwargs)
    except _Failed as failed:
        return Outcome(False, failed.message, None)
    return Outcome(True, None, round((time.monotonic() - started) * 1000))


def _ids(items: Any, key: str) -> list[dict[str, Any]]:
    if not isinstance(items, list):
        raise _Failed("the provider's model list has an unexpected shape")
    found = []
    for item in items:
        if isinstance(item, dict) and isinstance(item.get(key), str) and item[key]:
            name = item.get("display_name") or item.get("name")
            found.append({"id": item[key][:200],
                          "name": name[:200] if isinstance(name, str) else None})
    return found


def discover(target: Target, allow_private: bool = True,
             transport: httpx.BaseTransport | None = None) -> list[dict[str, Any]]:
    """The provider's model ids ({id, name}), sorted; ProviderUnavailable on failure."""
    kind = target.kind.kind
    found: list[dict[str, Any]] = []
    try:
        with _client(transport) as client:
            if kind == OLLAMA:
                body = _call(client, target, "GET", "/api/tags", allow_private)
                found = _ids(body.get("models") if isinstance(body, dict) else None, "name")
            elif kind == ANTHROPIC:
                after = None
                for _ in range(MAX_PAGES):
                    query = "?limit=1000" + (f"&after_id={after}" if after else "")
                    body = _call(client, target, "GET", "/v1/models" + query, allow_private)
                    page = body.get("data") if isinstance(body, dict) else None
                    found += _ids(page, "id")
                    after = body.get("last_id") if isinstance(body, dict) else None
                    if not (isinstance(body, dict) and body.get("has_more") and after
                            and re.fullmatch(r"[\w.:-]+", str(after))):
                        break
            else:
                body = _call(client, target, "GET", "/v1/models", allow_private)
                found = _ids(body.get("data") if isinstance(body, dict) else None, "id")
    except _Failed as failed:
        raise ProviderUnavailable(f"Discovery failed: {failed.message}") from None
    unique = {item["id"]: item for item in found}
    return [unique[key] for key in sorted(unique)]
