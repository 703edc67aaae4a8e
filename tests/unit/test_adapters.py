"""The adapters (OpenAI, Azure OpenAI, Anthropic): pure translation, then each one against the
fake provider through the real client: happy path, streaming TTFT, and every fault class."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from assay.providers import anthropic, azure, openai
from assay.providers.base import (
    ERROR_CLASSES,
    ChatRequest,
    Endpoint,
    ProviderError,
    SSEDecoder,
    classify_status,
    join_url,
)
from assay.providers.client import CallResult, LLMClient, RetryPolicy
from assay.providers.fake import FakeConfig, FakeProviderThread
from assay.providers.registry import KINDS, adapter_for

KINDS_UNDER_TEST = ("openai", "azure_openai", "anthropic")
SYSTEM = {"role": "system", "content": "Answer briefly."}
USER = {"role": "user", "content": "What is the capital of Portugal?"}
REQUEST = ChatRequest("fake-fast", [SYSTEM, USER], {"temperature": 0, "max_tokens": 40})


# --- pure translation ---------------------------------------------------------------------


def test_openai_build_puts_key_in_header_and_params_in_body() -> None:
    call = openai.ADAPTER.build(Endpoint("openai", "https://api.openai.com", "sk-secret"),
                                REQUEST)
    assert call.url == "https://api.openai.com/v1/chat/completions"
    assert call.headers["Authorization"] == "Bearer sk-secret"
    assert call.json == {"model": "fake-fast", "messages": [SYSTEM, USER], "temperature": 0,
                         "max_tokens": 40}
    assert "sk-secret" not in repr(call) and "sk-secret" not in str(call.recorded())
    streamed = openai.ADAPTER.build(Endpoint("openai", "http://h/v1"), REQUEST, stream=True)
    assert streamed.url == "http://h/v1/chat/completions"
    assert streamed.json["stream"] is True and streamed.json["stream_options"] == {
        "include_usage": True}
    assert "Authorization" not in streamed.headers  # no key, no header (Ollama)


@pytest.mark.parametrize(("base", "url"), [
    ("https://api.openai.com", "https://api.openai.com/v1/chat/completions"),
    ("https://api.openai.com/v1/", "https://api.openai.com/v1/chat/completions"),
    ("https://openrouter.ai/api", "https://openrouter.ai/api/v1/chat/completions"),
    ("http://localhost:11434/v1", "http://localhost:11434/v1/chat/completions"),
])
def test_join_url_accepts_roots_with_or_without_version(base: str, url: str) -> None:
    assert join_url(base, "chat/completions") == url


def test_azure_build_uses_deployment_api_version_and_api_key_header() -> None:
    endpoint = Endpoint("azure_openai", "https://res.openai.azure.com/", "az-key",
                        {"api_version": "2024-06-01"})
    call = azure.ADAPTER.build(endpoint, REQUEST)
    assert call.url == ("https://res.openai.azure.com/openai/deployments/fake-fast/chat/"
                        "completions?api-version=2024-06-01")
    assert call.headers["api-key"] == "az-key" and "Authorization" not in call.headers
    assert "model" not in call.json
    pinned = azure.ADAPTER.build(Endpoint("azure_openai", "https://r.openai.azure.com/openai",
                                          "k", {"deployment": "prod gpt"}), REQUEST)
    assert pinned.url == ("https://r.openai.azure.com/openai/deployments/prod%20gpt/chat/"
                          f"completions?api-version={azure.DEFAULT_API_VERSION}")


def test_check_calls_prove_the_key_the_cheapest_way() -> None:
    """A connection test: the model list, or what checks the key where that list is public."""
    plain = adapter_for("openai").check_call(Endpoint("openai", "https://api.openai.com", "k"))
    assert (plain.method, plain.url) == ("GET", "https://api.openai.com/v1/models")
    assert plain.headers["Authorization"] == "Bearer k" and "Content-Type" not in plain.headers
    router = adapter_for("openrouter").check_call(
        Endpoint("openrouter", "https://openrouter.ai/api/v1", "k"))
    assert (router.method, router.url) == ("GET", "https://openrouter.ai/api/v1/key")
    ollama = Endpoint("ollama", "http://box:11434/v1")
    tags = adapter_for("ollama").check_call(ollama)
    assert (tags.method, tags.url) == ("GET", "http://box:11434/api/tags")
    assert adapter_for("ollama").parse_models(
        {"models": [{"name": "qwen2.5:7b"}, {"name": "llama3.2:3b"}]}) == [
        "llama3.2:3b", "qwen2.5:7b"]
    listed = adapter_for("anthropic").check_call(Endpoint("anthropic", "https://x.test", "k"))
    assert (listed.method, listed.url) == ("GET", "https://x.test/v1/models")
    bare = azure.ADAPTER.check_call(Endpoint("azure_openai", "https://r.openai.azure.com", "k",
                                             {"api_version": "2024-06-01"}))
    assert (bare.method, bare.url) == (
        "GET", "https://r.openai.azure.com/openai/models?api-version=2024-06-01")
    ping = azure.ADAPTER.check_call(Endpoint("azure_openai", "https://r.openai.azure.com", "k",
                                             {"deployment": "prod"}))
    assert ping.method == "POST" and "/openai/deployments/prod/chat/completions?" in ping.url
    assert ping.json["max_tokens"] == 1


def test_anthropic_build_splits_system_requires_max_tokens_and_maps_stop() -> None:
    request = ChatRequest("claude", [SYSTEM, USER, {"role": "system", "content": "Be kind."}],
                          {"temperature": 0.2, "stop": "END", "seed": 3,
                           "frequency_penalty": 1})
    call = anthropic.ADAPTER.build(Endpoint("anthropic", "https://api.anthropic.com", "ak"),
                                   request)
    assert call.url == "https://api.anthropic.com/v1/messages"
    assert call.headers["x-api-key"] == "ak"
    assert call.headers["anthropic-version"] == anthropic.VERSION
    assert call.json == {"model": "claude", "messages": [USER], "max_tokens": 1024,
                         "system": "Answer briefly.\n\nBe kind.", "temperature": 0.2,
                         "stop_sequences": ["END"]}
    sized = anthropic.ADAPTER.build(Endpoint("anthropic", "https://x"),
                                    ChatRequest("c", [USER], {"max_tokens": 7, "stop": ["a"]}),
                                    stream=True)
    assert sized.json["max_tokens"] == 7 and sized.json["stop_sequences"] == ["a"]
    assert sized.json["stream"] is True and "system" not in sized.json


TOOL = {"name": "lookup_order", "description": "Finds an order",
        "parameters": {"type": "object", "properties": {"number": {"type": "string"}}}}


def test_a_prompts_tools_are_written_in_each_providers_shape() -> None:
    """A prompt version's `{name, description, parameters}` (params["tools"] from the run
    engine) become OpenAI function tools and Anthropic tools with an input schema."""
    request = ChatRequest("m", [USER], {"tools": [TOOL, {"name": "ping"}]})
    sent = openai.ADAPTER.build(Endpoint("openai", "https://x"), request).json["tools"]
    assert sent == [{"type": "function", "function": TOOL},
                    {"type": "function", "function": {"name": "ping"}}]
    sent = anthropic.ADAPTER.build(Endpoint("anthropic", "https://x"), request).json["tools"]
    assert sent == [{"name": "lookup_order", "description": "Finds an order",
                     "input_schema": TOOL["parameters"]},
                    {"name": "ping", "input_schema": {"type": "object", "properties": {}}}]


def test_parse_replies_and_malformed_shapes() -> None:
    reply = openai.ADAPTER.parse({"choices": [{"message": {"content": "hi"},
                                               "finish_reason": "stop"}],
                                  "usage": {"prompt_tokens": 3, "completion_tokens": 1}})
    assert (reply.text, reply.tokens_in, reply.tokens_out, reply.finish_reason) == (
        "hi", 3, 1, "stop")
    no_usage = openai.ADAPTER.parse({"choices": [{"message": {"content": None}}]})
    assert (no_usage.text, no_usage.tokens_in) == ("", None)
    claude = anthropic.ADAPTER.parse({
        "content": [{"type": "text", "text": "a"}, {"type": "tool_use"},
                    {"type": "text", "text": "b"}], "stop_reason": "max_tokens",
        "usage": {"input_tokens": 5, "output_tokens": 2, "cache_read_input_tokens": 10}})
    assert (claude.text, claude.tokens_in, claude.tokens_out, claude.finish_reason) == (
        "ab", 15, 2, "length")
    for adapter, body in ((openai.ADAPTER, {"choices": []}), (openai.ADAPTER, [1]),
                          (anthropic.ADAPTER, {"content": "x"}), (anthropic.ADAPTER, None)):
        with pytest.raises(ProviderError) as caught:
            adapter.parse(body)
        assert caught.value.error_class == "malformed_response"


def test_stream_parsers_assemble_text_usage_and_errors() -> None:
    stream = openai.ADAPTER.stream_parser()
    assert stream.feed(None, '{"choices":[{"delta":{"role":"assistant","content":""}}]}') == ""
    assert stream.feed(None, '{"choices":[{"delta":{"content":"Hel"}}]}') == "Hel"
    assert stream.feed(None, '{"choices":[{"delta":{"content":"lo"},"finish_reason":"stop"}]}')
    stream.feed(None, '{"choices":[],"usage":{"prompt_tokens":4,"completion_tokens":2}}')
    with pytest.raises(ProviderError):
        stream.finish()  # no [DONE] yet: a cut stream is malformed, never a short answer
    stream.feed(None, "[DONE]")
    done = stream.finish()
    assert (done.text, done.tokens_in, done.tokens_out, done.finish_reason) == (
        "Hello", 4, 2, "stop")
    with pytest.raises(ProviderError) as caught:
        openai.ADAPTER.stream_parser().feed(None, '{"error":{"code":"context_length_exceeded"}}')
    assert caught.value.error_class == "context_length"
    with pytest.raises(ProviderError) as caught:
        anthropic.ADAPTER.stream_parser().feed(
            "error", '{"type":"error","error":{"type":"overloaded_error","message":"busy"}}')
    assert caught.value.error_class == "bad_request"
    with pytest.raises(ProviderError) as caught:
        openai.ADAPTER.stream_parser().feed(None, "{not json")
    assert caught.value.error_class == "malformed_response"


def test_sse_decoder_joins_data_lines_and_skips_comments() -> None:
    decoder = SSEDecoder()
    lines = [": keep-alive\n", "event: message_delta\n", "data: {\"a\":\n", "data: 1}\n", "\n",
             "data: [DONE]"]
    events = [e for e in (decoder.line(line) for line in lines) if e is not None]
    assert events == [("message_delta", '{"a":\n1}')]
    assert decoder.end() == (None, "[DONE]")


@pytest.mark.parametrize(("status", "body", "expected"), [
    (429, {"error": {"code": "rate_limit_exceeded"}}, "rate_limited"),
    (429, {"error": {"code": "insufficient_quota", "message": "quota"}}, "auth"),
    (401, {"error": {"message": "bad key"}}, "auth"),
    (403, "forbidden", "auth"),
    (408, "", "timeout"),
    (500, {}, "server_error"),
    (529, {"type": "error", "error": {"type": "overloaded_error"}}, "server_error"),
    (400, {"error": {"code": "context_length_exceeded"}}, "context_length"),
    (400, {"type": "error", "error": {"message": "prompt is too long: 9 > 5"}}, "context_length"),
    (400, {"error": "the request exceeds the available context size"}, "context_length"),
    (400, {"error": {"code": "content_filter", "innererror": {
        "code": "ResponsibleAIPolicyViolation"}}}, "content_filter"),
    (400, {"error": {"code": "content_policy_violation"}}, "content_filter"),
    (400, {"error": {"message": "max_tokens: Field required"}}, "bad_request"),
    (404, {"error": {"message": "model not found"}}, "bad_request"),
])
def test_classify_status_by_code_and_body(status: int, body: Any, expected: str) -> None:
    assert classify_status(status, body) == expected
    assert expected in ERROR_CLASSES


def test_registry_maps_every_credential_kind() -> None:
    assert set(KINDS) == {"openai", "openrouter", "ollama", "openai_compatible", "fake",
                          "azure_openai", "anthropic", "google_gemini", "google_vertex",
                          "aws_bedrock"}
    assert adapter_for("openai_compatible") is openai.ADAPTER
    assert isinstance(adapter_for("ollama"), openai.OpenAIAdapter)  # chat: OpenAI's
    assert isinstance(adapter_for("openrouter"), openai.OpenAIAdapter)
    assert adapter_for("azure_openai") is azure.ADAPTER
    with pytest.raises(KeyError):
        adapter_for("gemini")


# --- against the fake provider ------------------------------------------------------------


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeProviderThread]:
    config = FakeConfig(latency_ms=5, retry_after_s=0, hang_s=5, seed=1)
    with FakeProviderThread(config) as server:
        yield server


def stats(fake: FakeProviderThread) -> dict[str, Any]:
    return dict(httpx.get(f"{fake.url}/_fake/stats").json())


def call(fake: FakeProviderThread, kind: str, request: ChatRequest = REQUEST,
         key: str = "sk-test", headers: dict[str, str] | None = None, stream: bool = False,
         attempts: int = 3) -> CallResult:
    httpx.post(f"{fake.url}/_fake/reset")
    endpoint = Endpoint(kind, fake.url, key, {"headers": headers or {}})

    async def run() -> CallResult:
        retry = RetryPolicy(attempts=attempts, base_s=0.001, cap_s=0.01)
        async with LLMClient(timeout_s=0.5, retry=retry) as client:
            return await client.chat(endpoint, request, stream=stream)

    return asyncio.run(run())


@pytest.mark.parametrize("kind", KINDS_UNDER_TEST)
def test_happy_path(fake: FakeProviderThread, kind: str) -> None:
    result = call(fake, kind)
    assert result.error is None and result.response is not None
    assert result.response.text == "fake-fast says: What is the capital of Portugal?"
    assert result.response.tokens_in == 16 and result.response.tokens_out == 8  # as reported
    assert result.response.finish_reason == "stop" and not result.usage_counted
    assert result.attempts == 1 and result.ttft_ms is None and result.latency_ms >= 5
    assert result.raw_request is not None and "sk-test" not in str(result.raw_request)
    assert set(result.raw_request) == {"method", "url", "json"}
    assert result.raw_response == result.response.raw
    assert stats(fake)["requests"] == {"fake-fast": 1}


@pytest.mark.parametrize("kind", KINDS_UNDER_TEST)
def test_streaming_measures_time_to_first_token(fake: FakeProviderThread, kind: str) -> None:
    plain = call(fake, kind)
    result = call(fake, kind, stream=True, headers={"X-Fake-Latency-Ms": "120"})
    assert result.error is None and result.response is not None and plain.response is not None
    assert result.response.text == plain.response.text
    assert (result.response.tokens_in, result.response.tokens_out) == (
        plain.response.tokens_in, plain.response.tokens_out)
    assert result.ttft_ms is not None and 120 <= result.ttft_ms <= result.latency_ms
    assert result.raw_request is not None and result.raw_request["json"]["stream"] is True
    assert result.raw_response["streamed"] is True


@pytest.mark.parametrize("kind", KINDS_UNDER_TEST)
@pytest.mark.parametrize(("fault", "error_class", "requests"), [
    ("429", "rate_limited", 3), ("500", "server_error", 3), ("hang", "timeout", 3),
    ("reset", "network", 3), ("malformed", "malformed_response", 1)])
def test_fault_classes(fake: FakeProviderThread, kind: str, fault: str, error_class: str,
                       requests: int) -> None:
    result = call(fake, kind, headers={"X-Fake-Fault": fault}, stream=fault == "reset")
    assert result.error is not None, result
    assert result.error.error_class == error_class, result.error.message
    assert result.attempts == requests, "transient classes are retried, the others never"
    assert stats(fake)["total"] == requests
    if fault in ("429", "500"):
        assert result.raw_response["status"] == int(fault)


@pytest.mark.parametrize("kind", KINDS_UNDER_TEST)
def test_bad_key_is_auth_and_not_retried(fake: FakeProviderThread, kind: str) -> None:
    result = call(fake, kind, key="bad-key")
    assert result.error is not None and result.error.error_class == "auth"
    assert result.attempts == 1 and stats(fake)["total"] == 1
    assert "bad-key" not in str(result.raw_request)


@pytest.mark.parametrize("kind", KINDS_UNDER_TEST)
def test_context_length_is_classified(fake: FakeProviderThread, kind: str) -> None:
    long = ChatRequest("fake-tiny-context", [{"role": "user", "content": "word " * 80}])
    result = call(fake, kind, long)
    assert result.error is not None and result.error.error_class == "context_length"
    assert result.attempts == 1


def test_anthropic_missing_fields_is_bad_request(fake: FakeProviderThread) -> None:
    only_system = ChatRequest("fake-fast", [SYSTEM])  # no messages left once system is split
    result = call(fake, "anthropic", only_system)
    assert result.error is not None and result.error.error_class == "bad_request"
    assert "messages" in result.error.message and result.attempts == 1
    assert stats(fake)["total"] == 1


def test_no_usage_is_counted_with_the_bundled_tokenizer(fake: FakeProviderThread) -> None:
    # streaming without include_usage: the fake reports no usage, the client counts
    from assay.providers.tokens import count_messages, count_text

    class NoUsage(openai.OpenAIAdapter):
        def body(self, request: ChatRequest, stream: bool) -> dict[str, Any]:
            body = super().body(request, stream)
            body.pop("stream_options", None)
            return body

    async def run() -> CallResult:
        async with LLMClient(adapters=lambda kind: NoUsage()) as client:
            return await client.chat(Endpoint("openai", fake.url, "k"), REQUEST, stream=True)

    result = asyncio.run(run())
    assert result.response is not None and result.usage_counted
    assert result.response.tokens_in == count_messages(REQUEST.messages, "fake-fast")
    assert result.response.tokens_out == count_text(result.response.text) == 11
