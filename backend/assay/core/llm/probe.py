"""Connection tests and model discovery: one small, real call to a provider.

Each call re-checks the base URL against the SSRF guard, never follows a redirect, has a
10 s timeout (ASSAY_PROBE_TIMEOUT_S) and reports failures as one short, human sentence
("401 from provider: invalid API key", "connection refused"; with open registration one
sentence for every failure to connect, COULD_NOT_CONNECT). The key is sent in a header and
never appears in a message: any echo of it by the provider is masked.

The calls are built by the same adapters the runs use (providers/: URL joining, auth and
config headers; `check_call` and `models_call`) and made by the same client
(`LLMClient.fetch`: SSRF guard, no redirects, timeout, classified `ProviderError`s), so a
green test means the runs will reach the provider the same way. This module only turns a
`ProviderError` into the sentence the UI shows.

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
google_gemini      GET /v1beta/models                       GET /v1beta/models
google_vertex      a token from the service account, then   GET /v1beta1/publishers/
                   GET .../locations/{location}/models      google/models
aws_bedrock        GET /foundation-models (control plane,   GET /foundation-models
                   SigV4-signed)                            (modelSummaries[].modelId)
=================  =======================================  ==========================
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import urlsplit

from assay.core.errors import DomainError
from assay.core.llm.kinds import ANTHROPIC, AZURE, OLLAMA, ProviderKind
from assay.providers.base import Endpoint, HttpCall, ProviderError, with_query
from assay.providers.client import LLMClient, RetryPolicy
from assay.providers.registry import adapter_for, api_key_for
from assay.providers.ssrf import OPEN, UrlPolicy

TIMEOUT_S = 10.0
MAX_PAGES = 20
EXCERPT = 200
NOT_JSON = "the provider's answer is not JSON (is the base URL right?)"
# With open registration a stranger may test any URL: a refused connection and one that
# is never answered (a filtered port) give this one sentence, both after the full timeout,
# so the test cannot map which ports of a host are open.
COULD_NOT_CONNECT = "could not connect to the provider (no answer at this address and port)"

T = TypeVar("T")


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


@dataclass
class Sent:
    """What the requests of a test or a discovery were: how many reached for the provider,
    and the tokens of any that answered with usage (Azure's 1-token chat): the ledger's."""

    calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0

    def add(self, body: Any) -> None:
        self.calls += 1
        usage = body.get("usage") if isinstance(body, dict) else None
        if isinstance(usage, dict):
            self.tokens_in += _count(usage.get("prompt_tokens", usage.get("input_tokens")))
            self.tokens_out += _count(usage.get("completion_tokens",
                                                usage.get("output_tokens")))


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


@dataclass(frozen=True)
class Outcome:
    ok: bool
    error: str | None
    latency_ms: int | None
    sent: Sent = field(default_factory=Sent)


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


def _provider_message(body: Any) -> str:
    """The provider's own words from an error body (JSON, or the text of one that is not)."""
    if isinstance(body, str):
        return " ".join(body.split())[:EXCERPT]
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        error = error.get("message")
    if isinstance(error, str):
        return " ".join(error.split())[:EXCERPT]
    return ""


def _status_message(status: int, raw: Any, path: str, target: Target) -> str:
    raw = raw if isinstance(raw, dict) else {}
    if 300 <= status < 400:
        where = str(raw.get("location") or "")[:EXCERPT]
        return (f"{status} from provider: redirected to {where or 'another URL'}; Assay does "
                "not follow redirects, so use the final address as the base URL")
    if status == 401:
        return "401 from provider: invalid API key"
    detail = _provider_message(raw.get("body"))
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
    return text


def _message(error: ProviderError, call: HttpCall, target: Target) -> str:
    """The client's classified error as one short sentence, the key masked."""
    if error.status is not None:
        text = _status_message(error.status, error.raw, urlsplit(call.url).path, target)
    elif error.reason:  # a transport failure, or a URL the SSRF guard refused
        text = error.reason
    elif error.error_class == "malformed_response":
        text = NOT_JSON
    else:
        text = error.message[:EXCERPT]
    return _mask(text, target.api_key)


@dataclass(frozen=True)
class Manner:
    """How a test or a discovery calls: its timeout, and whether a failure to connect is
    blurred (COULD_NOT_CONNECT, always after the whole timeout: settings.uniform_connect_errors)."""

    timeout_s: float = TIMEOUT_S
    uniform_failures: bool = False


PLAIN = Manner()


def _run(url_policy: UrlPolicy, manner: Manner,
         work: Callable[[LLMClient], Awaitable[T]]) -> T:
    """`work` with a client of its own: one timeout per call, no retry (someone waits)."""
    async def go() -> T:
        async with LLMClient(timeout_s=manner.timeout_s, retry=RetryPolicy(attempts=1),
                             max_connections=4, url_policy=url_policy) as client:
            return await work(client)

    return asyncio.run(go())


def _unconnected(error: ProviderError) -> bool:
    """Nothing HTTP came back: refused, reset, unreachable or timed out."""
    return error.status is None and error.error_class in {"network", "timeout"}


async def _fetch(client: LLMClient, target: Target, call: HttpCall, sent: Sent,
                 manner: Manner = PLAIN) -> Any:
    try:
        await client.check_url(call.url)  # refused by the guard: nothing was sent
    except ProviderError as error:
        raise _Failed(_message(error, call, target)) from None
    started = time.monotonic()
    try:
        body = await client.fetch(call)
    except ProviderError as error:
        sent.add(None)
        if manner.uniform_failures and _unconnected(error):
            await asyncio.sleep(max(0.0, started + manner.timeout_s - time.monotonic()))
            raise _Failed(COULD_NOT_CONNECT) from None
        raise _Failed(_message(error, call, target)) from None
    sent.add(body)
    return body


def _built(target: Target, build: Callable[[], T]) -> T:
    """An adapter's call; a secret it cannot sign or authorise with (a Vertex token refused,
    a Bedrock secret missing) fails the test in words."""
    try:
        return build()
    except ProviderError as error:
        raise _Failed(_mask(error.message[:EXCERPT], target.api_key)) from None


def is_paid(target: Target) -> bool:
    """Whether the connection test sends a model call (Azure's 1-token chat with a
    deployment) rather than a free model list."""
    endpoint = _endpoint(target)
    try:
        return _built(target, lambda: adapter_for(endpoint.kind).check_call(endpoint)).method \
            != "GET"
    except _Failed:
        return False  # the test fails before any call


def check_connection(target: Target, url_policy: UrlPolicy = OPEN,
                     manner: Manner = PLAIN) -> Outcome:
    """One small real call: does this base URL answer, and does it accept the key?"""
    endpoint = _endpoint(target)
    started, sent = time.monotonic(), Sent()
    try:
        call = _built(target, lambda: adapter_for(endpoint.kind).check_call(endpoint))
    except _Failed as failed:
        return Outcome(False, failed.message, None, sent)
    try:
        _run(url_policy, manner, lambda client: _fetch(client, target, call, sent, manner))
    except _Failed as failed:
        return Outcome(False, failed.message, None, sent)
    return Outcome(True, None, round((time.monotonic() - started) * 1000), sent)


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


async def _list(client: LLMClient, target: Target, models: HttpCall,
                sent: Sent, manner: Manner) -> list[dict[str, Any]]:
    kind = target.kind.kind
    items = getattr(adapter_for(kind), "model_items", None)
    if items is not None:  # Google's and Bedrock's own list shapes
        body = await _fetch(client, target, models, sent, manner)
        try:
            return [{"id": str(i["id"])[:200], "name": i.get("name")} for i in items(body)]
        except ProviderError:
            raise _Failed("the provider's model list has an unexpected shape") from None
    if kind == OLLAMA:
        body = await _fetch(client, target, models, sent, manner)
        return _ids(body.get("models") if isinstance(body, dict) else None, "name")
    if kind != ANTHROPIC:
        body = await _fetch(client, target, models, sent, manner)
        return _ids(body.get("data") if isinstance(body, dict) else None, "id")
    found: list[dict[str, Any]] = []
    after = None
    for _ in range(MAX_PAGES):
        query = {"limit": "1000", **({"after_id": after} if after else {})}
        page_call = HttpCall(with_query(models.url, query), {}, models.headers, "GET")
        body = await _fetch(client, target, page_call, sent, manner)
        found += _ids(body.get("data") if isinstance(body, dict) else None, "id")
        after = body.get("last_id") if isinstance(body, dict) else None
        if not (isinstance(body, dict) and body.get("has_more") is True
                and isinstance(after, str) and after):
            break
    return found


def discover(target: Target, url_policy: UrlPolicy = OPEN,
             sent: Sent | None = None, manner: Manner = PLAIN) -> list[dict[str, Any]]:
    """The provider's model ids ({id, name}), sorted; ProviderUnavailable on failure.
    `sent` counts the requests made, failed or not."""
    endpoint = _endpoint(target)
    counted = sent if sent is not None else Sent()
    try:
        models = _built(target, lambda: adapter_for(endpoint.kind).models_call(endpoint))
        if models is None:
            raise _Failed("this provider offers no model list")
        found = _run(url_policy, manner,
                     lambda client: _list(client, target, models, counted, manner))
    except _Failed as failed:
        raise ProviderUnavailable(f"Discovery failed: {failed.message}") from None
    unique = {item["id"]: item for item in found}
    return [unique[key] for key in sorted(unique)]
