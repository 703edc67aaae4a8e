"""Connection tests and model discovery: one small, real call to a provider.

Each call re-checks the base URL against the SSRF guard, never follows a redirect, has a
10 s timeout and reports failures as one short, human sentence ("401 from provider:
invalid API key", "connection refused"). The key is sent in a header and never appears in
a message: any echo of it by the provider is masked.

The calls are built by the same adapters the runs use (providers/: URL joining, auth and
config headers), so a green test means the runs will reach the provider the same way.

Calls per kind:

=================  =======================================  ==========================
kind               test                                     discover
=================  =======================================  ==========================
openai, fake,      GET /v1/models                           GET /v1/models (data[].id)
openai_compatible
openrouter         GET /v1/key (its model list is public)   GET /v1/models
anthropic          GET /v1/models (free, no model id to     GET /v1/models (paged)
                   guess, unlike a 1-token message)
azure_openai       POST /openai/deployments/{deployment}/   not offered
                   chat/completions (1 token) when a
                   deployment is set, else GET /openai/models
ollama             GET /api/tags                            GET /api/tags (models[].name)
=================  =======================================  ==========================
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import httpx

from assay.core.errors import DomainError, Invalid
from assay.core.llm.kinds import ANTHROPIC, AZURE, OLLAMA, OPENROUTER, ProviderKind
from assay.providers import azure
from assay.providers.base import ChatRequest, Endpoint, HttpCall, join_url
from assay.providers.registry import adapter_for, api_key_for
from assay.providers.ssrf import UnresolvableHost, check_base_url

TIMEOUT_S = 10.0
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
    config: dict[str, Any]


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


def _endpoint(target: Target) -> Endpoint:
    kind = target.kind.kind
    return Endpoint(kind, target.base_url, api_key_for(kind, target.api_key), target.config)


def _root(base_url: str) -> str:
    """The server root under an API root that may end in a version (/v1)."""
    root = base_url.rstrip("/")
    return root[:-3] if root.lower().endswith("/v1") else root


def _models_call(endpoint: Endpoint) -> HttpCall:
    call = adapter_for(endpoint.kind).models_call(endpoint)
    if call is None:
        raise _Failed("this provider offers no model list")
    return call


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


def _call(client: httpx.Client, target: Target, call: HttpCall, allow_private: bool) -> Any:
    """One request: SSRF re-checked, no redirects, failures as a _Failed message."""
    try:
        check_base_url(call.url, allow_private)
    except UnresolvableHost:
        raise _Failed("could not resolve the host name") from None
    except Invalid as refused:
        raise _Failed(" ".join(refused.errors.get("base_url", [refused.message]))) from None
    try:
        response = client.request(call.method, call.url, headers=call.headers,
                                  json=call.json if call.method != "GET" else None)
    except httpx.HTTPError as error:
        raise _Failed(_mask(_transport_message(error), target.api_key)) from None
    if response.status_code != 200:
        path = httpx.URL(call.url).path
        raise _Failed(_status_message(response, path, target))
    try:
        return response.json()
    except ValueError:
        raise _Failed("the provider's answer is not JSON (is the base URL right?)") from None


def _client(transport: httpx.BaseTransport | None) -> httpx.Client:
    # trust_env=False: no proxy from the environment, so the SSRF check sees the real host
    return httpx.Client(timeout=TIMEOUT_S, follow_redirects=False, trust_env=False,
                        transport=transport)


def _test_call(target: Target) -> HttpCall:
    endpoint = _endpoint(target)
    kind = target.kind.kind
    if kind == OLLAMA:
        return HttpCall(_root(target.base_url) + "/api/tags", {}, {"Accept": "application/json"},
                        method="GET")
    if kind == OPENROUTER:  # its model list is public: /key is what checks the key
        call = _models_call(endpoint)
        return HttpCall(join_url(target.base_url, "key"), {}, call.headers, method="GET")
    if kind == AZURE:
        if target.config.get("deployment"):
            request = ChatRequest(str(target.config["deployment"]),
                                  [{"role": "user", "content": "ping"}], {"max_tokens": 1})
            return azure.ADAPTER.build(endpoint, request)
        root = target.base_url.rstrip("/").removesuffix("/openai")
        query = httpx.QueryParams({"api-version": azure.api_version(endpoint)})
        headers = {k: v for k, v in azure.ADAPTER.headers(endpoint).items()
                   if k != "Content-Type"}
        return HttpCall(f"{root}/openai/models?{query}", {}, headers, method="GET")
    return _models_call(endpoint)  # OpenAI-style and Anthropic: GET .../v1/models


def check_connection(target: Target, allow_private: bool = True,
                     transport: httpx.BaseTransport | None = None) -> Outcome:
    """One small real call: does this base URL answer, and does it accept the key?"""
    call = _test_call(target)
    started = time.monotonic()
    try:
        with _client(transport) as client:
            _call(client, target, call, allow_private)
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
                body = _call(client, target, _test_call(target), allow_private)
                found = _ids(body.get("models") if isinstance(body, dict) else None, "name")
            elif kind == ANTHROPIC:
                models = _models_call(_endpoint(target))
                after = None
                for _ in range(MAX_PAGES):
                    query = {"limit": "1000", **({"after_id": after} if after else {})}
                    url = str(httpx.URL(models.url).copy_merge_params(query))
                    body = _call(client, target, HttpCall(url, {}, models.headers, "GET"),
                                 allow_private)
                    page = body.get("data") if isinstance(body, dict) else None
                    found += _ids(page, "id")
                    after = body.get("last_id") if isinstance(body, dict) else None
                    if not (isinstance(body, dict) and body.get("has_more") is True
                            and isinstance(after, str) and after):
                        break
            else:
                body = _call(client, target, _models_call(_endpoint(target)), allow_private)
                found = _ids(body.get("data") if isinstance(body, dict) else None, "id")
    except _Failed as failed:
        raise ProviderUnavailable(f"Discovery failed: {failed.message}") from None
    unique = {item["id"]: item for item in found}
    return [unique[key] for key in sorted(unique)]
