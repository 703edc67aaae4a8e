"""The Gemini, Vertex AI and Bedrock adapters through the real HTTP path (LLMClient, aiohttp)
against the fake provider, which checks their authentication as the real services do:
success with tokens and cost, each error class, rate limits with the provider's retry
hints, streaming, safety stops, discovery, and wrong keys or signatures refused."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from tests.cloud_keys import AWS_KEY_ID, AWS_SECRET, service_account, trust

from assay.providers import bedrock
from assay.providers.base import ChatRequest, Endpoint
from assay.providers.client import CallResult, LLMClient, RetryPolicy
from assay.providers.fake import FakeConfig, FakeProviderThread
from assay.providers.google_token import TokenCache
from assay.providers.pricing import Price
from assay.providers.registry import adapter_for
from assay.providers.vertex import VertexAdapter

FAST = RetryPolicy(attempts=3, base_s=0.001, cap_s=0.01)
ONCE = RetryPolicy(attempts=1)
BEDROCK_MODEL = "anthropic.claude-3-haiku-20240307-v1:0"  # a ':' to sign in the path
REQUEST = ChatRequest("fake-fast", [{"role": "system", "content": "Be brief."},
                                    {"role": "user", "content": "name three colours"}],
                      {"max_tokens": 50, "temperature": 0})


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeProviderThread]:
    with FakeProviderThread(FakeConfig(latency_ms=0, retry_after_s=0.3, seed=5)) as server:
        trust(server.url)
        yield server


def gemini(fake: FakeProviderThread, key: str = "g-key", **config: Any) -> Endpoint:
    return Endpoint("google_gemini", fake.url, key, config)


def vertex(fake: FakeProviderThread, key: str = "trusted", **config: Any) -> Endpoint:
    return Endpoint("google_vertex", fake.url, service_account(fake.url, key),
                    {"location": "us-central1", **config})


def aws(fake: FakeProviderThread, secret: str = AWS_SECRET, key_id: str = AWS_KEY_ID,
        **config: Any) -> Endpoint:
    return Endpoint("aws_bedrock", fake.url, secret,
                    {"access_key_id": key_id, "region": "eu-west-1", **config})


def forced(endpoint: Endpoint, fault: str) -> Endpoint:
    return Endpoint(endpoint.kind, endpoint.base_url, endpoint.api_key,
                    {**endpoint.config, "headers": {"X-Fake-Fault": fault}})


def chat(endpoint: Endpoint, request: ChatRequest = REQUEST, stream: bool = False,
         retry: RetryPolicy = FAST, **kw: Any) -> CallResult:
    async def go() -> CallResult:
        async with LLMClient(retry=retry, **kw) as client:
            return await client.chat(endpoint, request, stream)
    return asyncio.run(go())


def stats(fake: FakeProviderThread) -> dict[str, Any]:
    return dict(httpx.get(f"{fake.url}/_fake/stats").json())


def received(fake: FakeProviderThread) -> dict[str, Any]:
    return dict(httpx.get(f"{fake.url}/_fake/requests").json()["requests"][-1])


KINDS = ["gemini", "vertex", "bedrock"]


def endpoint_of(kind: str, fake: FakeProviderThread) -> Endpoint:
    return {"gemini": gemini, "vertex": vertex, "bedrock": aws}[kind](fake)


def model_of(kind: str) -> str:
    return BEDROCK_MODEL if kind == "bedrock" else "fake-fast"


@pytest.mark.parametrize("kind", KINDS)
def test_a_call_answers_with_tokens_and_cost(fake: FakeProviderThread, kind: str) -> None:
    request = ChatRequest(model_of(kind), REQUEST.messages, REQUEST.params)
    result = chat(endpoint_of(kind, fake), request)
    assert result.ok, result.error and result.error.message
    assert result.response is not None
    assert result.response.text.startswith(f"{model_of(kind)} says")
    assert result.response.finish_reason == "stop"
    assert not result.usage_counted  # the provider's own usage
    # the fake counts words plus 4 per message, the system prompt included
    assert result.response.tokens_in == (2 + 4) + (3 + 4)
    assert result.response.tokens_out == len(result.response.text.split())
    assert Price(1_000_000, 2_000_000).cost(result.response.tokens_in,
                                            result.response.tokens_out) \
        == result.response.tokens_in + 2 * result.response.tokens_out
    assert result.raw_request is not None and "headers" not in result.raw_request
    sent = received(fake)
    if kind == "bedrock":
        assert sent["system"] == [{"text": "Be brief."}]
        assert sent["inferenceConfig"] == {"maxTokens": 50, "temperature": 0}
    else:
        assert sent["systemInstruction"] == {"parts": [{"text": "Be brief."}]}
        assert sent["generationConfig"] == {"maxOutputTokens": 50, "temperature": 0}


@pytest.mark.parametrize("kind", ["gemini", "vertex"])
def test_google_streams_with_time_to_first_token(fake: FakeProviderThread, kind: str) -> None:
    whole = chat(endpoint_of(kind, fake))
    streamed = chat(endpoint_of(kind, fake), stream=True)
    assert streamed.ok and whole.ok and streamed.response and whole.response
    assert streamed.response.text == whole.response.text
    assert streamed.ttft_ms is not None
    assert (streamed.response.tokens_in, streamed.response.tokens_out) == \
        (whole.response.tokens_in, whole.response.tokens_out)
    assert streamed.raw_request and "streamGenerateContent?alt=sse" in streamed.raw_request["url"]


def test_bedrock_answers_unstreamed_when_asked_to_stream(fake: FakeProviderThread) -> None:
    result = chat(aws(fake), ChatRequest(BEDROCK_MODEL, REQUEST.messages), stream=True)
    assert result.ok and result.ttft_ms is None


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("fault", "error_class", "status"), [
    ("400", "bad_request", 400), ("401", "auth", 401), ("403", "auth", 403),
    ("404", "bad_request", 404), ("500", "server_error", 500), ("429", "rate_limited", 429),
    ("safety", "content_filter", None),
])
def test_each_error_is_classified(fake: FakeProviderThread, kind: str, fault: str,
                                  error_class: str, status: int | None) -> None:
    request = ChatRequest(model_of(kind), REQUEST.messages, REQUEST.params)
    result = chat(forced(endpoint_of(kind, fake), fault), request, retry=ONCE)
    assert result.error is not None
    assert (result.error.error_class, result.error.status) == (error_class, status)


@pytest.mark.parametrize("kind", KINDS)
def test_transient_errors_are_retried_and_final_ones_are_not(fake: FakeProviderThread,
                                                             kind: str) -> None:
    request = ChatRequest(model_of(kind), REQUEST.messages)
    assert chat(forced(endpoint_of(kind, fake), "500"), request).attempts == 3
    assert chat(forced(endpoint_of(kind, fake), "400"), request).attempts == 1


@pytest.mark.parametrize("kind", KINDS)
def test_a_prompt_past_the_context_is_context_length(fake: FakeProviderThread,
                                                     kind: str) -> None:
    model = "fake-tiny-context"
    result = chat(endpoint_of(kind, fake),
                  ChatRequest(model, [{"role": "user", "content": "word " * 80}]))
    assert result.error is not None and result.error.error_class == "context_length"


@pytest.mark.parametrize("kind", ["gemini", "vertex"])
def test_google_retry_info_sets_the_wait(fake: FakeProviderThread, kind: str) -> None:
    """The fake's 429 has no Retry-After header: the wait is RetryInfo's retryDelay."""
    once = chat(forced(endpoint_of(kind, fake), "429"), retry=ONCE)
    assert once.error is not None and once.error.retry_after == pytest.approx(0.3)
    started = time.monotonic()
    retried = chat(forced(endpoint_of(kind, fake), "429"),
                   retry=RetryPolicy(attempts=2, base_s=0.001, cap_s=0.001))
    assert retried.attempts == 2 and time.monotonic() - started >= 0.3


def test_bedrock_throttling_is_a_rate_limit_retried(fake: FakeProviderThread) -> None:
    result = chat(forced(aws(fake), "429"), ChatRequest(BEDROCK_MODEL, REQUEST.messages))
    assert result.error is not None and result.error.error_class == "rate_limited"
    assert result.attempts == 3


def test_gemini_refuses_a_wrong_or_missing_key(fake: FakeProviderThread) -> None:
    wrong = chat(gemini(fake, "bad-key"))
    assert wrong.error and (wrong.error.error_class, wrong.error.status) == ("auth", 400)
    missing = chat(Endpoint("google_gemini", fake.url, None))
    assert missing.error and (missing.error.error_class, missing.error.status) == ("auth", 403)
    assert wrong.raw_request and "bad-key" not in json.dumps(wrong.raw_request)


def test_vertex_mints_one_token_for_many_calls(fake: FakeProviderThread) -> None:
    tokens = TokenCache()
    adapter = VertexAdapter(tokens)
    httpx.post(f"{fake.url}/_fake/reset")

    async def go() -> list[CallResult]:
        async with LLMClient(retry=FAST, adapters=lambda kind: adapter) as client:
            return list(await asyncio.gather(*(client.chat(vertex(fake), REQUEST)
                                               for _ in range(40))))

    results = asyncio.run(go())
    assert all(r.ok for r in results)
    assert tokens.refreshes == 1 and stats(fake)["tokens_minted"] == 1


def test_vertex_refreshes_ahead_of_expiry_without_waiting(fake: FakeProviderThread) -> None:
    """A token with 200 s left (under REFRESH_AHEAD_S) is used while one refresh runs
    in the background; the call after it has the new token."""
    trust(fake.url, google_token_ttl_s=200)
    try:
        tokens = TokenCache()
        adapter = VertexAdapter(tokens)
        endpoint = vertex(fake)

        async def go() -> None:
            async with LLMClient(retry=FAST, adapters=lambda kind: adapter) as client:
                assert (await client.chat(endpoint, REQUEST)).ok  # waits: no token yet
                first = tokens.token(endpoint.api_key)
                assert (await client.chat(endpoint, REQUEST)).ok  # starts the refresh
                for _ in range(100):
                    if tokens.token(endpoint.api_key) != first:
                        break
                    await asyncio.sleep(0.01)
                assert tokens.token(endpoint.api_key) != first
                assert (await client.chat(endpoint, REQUEST)).ok

        asyncio.run(go())
        assert tokens.refreshes >= 2
    finally:
        trust(fake.url, google_token_ttl_s=3600)


def test_vertex_refuses_an_untrusted_service_account(fake: FakeProviderThread) -> None:
    result = chat(Endpoint("google_vertex", fake.url, service_account(fake.url, "stranger"),
                           {"location": "us-central1"}))
    assert result.error is not None and result.error.error_class == "auth"
    assert "Invalid JWT Signature" in result.error.message


def test_vertex_refuses_a_bearer_token_it_did_not_mint(fake: FakeProviderThread) -> None:
    url = (f"{fake.url}/v1/projects/p/locations/us-central1/publishers/google/models/"
           "fake-fast:generateContent")
    reply = httpx.post(url, headers={"Authorization": "Bearer ya29.forged"},
                       json={"contents": [{"role": "user", "parts": [{"text": "hi"}]}]})
    assert reply.status_code == 401 and reply.json()["error"]["status"] == "UNAUTHENTICATED"


def test_bedrock_refuses_a_wrong_secret_or_an_unknown_key(fake: FakeProviderThread) -> None:
    request = ChatRequest(BEDROCK_MODEL, REQUEST.messages)
    wrong = chat(aws(fake, secret="not-the-secret"), request)
    assert wrong.error and (wrong.error.error_class, wrong.error.status) == ("auth", 403)
    assert "signature we calculated does not match" in wrong.error.message
    unknown = chat(aws(fake, key_id="AKIAUNKNOWN000000000"), request)
    assert unknown.error and unknown.error.error_class == "auth"
    assert "security token included in the request is invalid" in unknown.error.message


def test_bedrock_refuses_a_body_changed_after_signing(fake: FakeProviderThread) -> None:
    endpoint = aws(fake)
    call = bedrock.ADAPTER.build(endpoint, ChatRequest(BEDROCK_MODEL, REQUEST.messages))
    assert call.body is not None
    sent = httpx.post(call.url, content=call.body, headers=call.headers)
    assert sent.status_code == 200, sent.text
    tampered = httpx.post(call.url, content=call.body.replace(b"colours", b"numbers"),
                          headers=call.headers)
    assert tampered.status_code == 403
    assert tampered.headers["x-amzn-ErrorType"].startswith("InvalidSignatureException")


def test_bedrock_signs_a_session_token(fake: FakeProviderThread) -> None:
    secret = json.dumps({"secret_access_key": AWS_SECRET, "session_token": "FwoGZXIvYXdz"})
    endpoint = aws(fake, secret=secret)
    call = bedrock.ADAPTER.build(endpoint, ChatRequest(BEDROCK_MODEL, REQUEST.messages))
    assert call.headers["X-Amz-Security-Token"] == "FwoGZXIvYXdz"
    assert "x-amz-security-token" in call.headers["Authorization"]
    assert chat(endpoint, ChatRequest(BEDROCK_MODEL, REQUEST.messages)).ok


@pytest.mark.parametrize("kind", KINDS)
def test_the_model_list_and_connection_check(fake: FakeProviderThread, kind: str) -> None:
    endpoint = endpoint_of(kind, fake)

    async def go() -> tuple[list[str] | None, Any]:
        async with LLMClient(retry=FAST) as client:
            adapter = adapter_for(kind_name(kind))
            return (await client.list_models(endpoint),
                    await client.fetch(adapter.check_call(endpoint), adapter))

    found, checked = asyncio.run(go())
    assert found is not None and "fake-fast" in found
    assert isinstance(checked, dict)


def kind_name(kind: str) -> str:
    return {"gemini": "google_gemini", "vertex": "google_vertex", "bedrock": "aws_bedrock"}[kind]
