"""The fake LLM provider (assay.providers.fake), exercised over real HTTP with httpx."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from assay.providers.fake import (
    ConfigError,
    FakeConfig,
    FakeProviderThread,
    Script,
    create_app,
)
from assay.providers.fake_shapes import pieces

OPENAI_KEY = {"Authorization": "Bearer sk-test"}
ANTHROPIC_KEY = {"x-api-key": "sk-ant-test", "anthropic-version": "2023-06-01"}
AZURE_KEY = {"api-key": "azure-test"}
AZURE_PATH = "/openai/deployments/my-gpt/chat/completions?api-version=2024-10-21"


def chat(
    text: str = "Tell me about the weather in Lisbon", model: str = "fake-fast", **extra: Any
) -> dict[str, Any]:
    return {"model": model, "messages": [{"role": "user", "content": text}], **extra}


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeProviderThread]:
    with FakeProviderThread(FakeConfig(latency_ms=0)) as server:
        yield server


@pytest.fixture
def client(fake: FakeProviderThread) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=fake.url, timeout=5.0) as c:
        yield c
        # leave the shared server as the next test expects it
        c.post("/_fake/config", json={"scripts": [], "fault_rate": 0.0, "latency_ms": 0})
        c.post("/_fake/reset")


def sse_data(body: str) -> list[str]:
    return [line[6:] for line in body.splitlines() if line.startswith("data: ")]


# --- OpenAI -------------------------------------------------------------------------------


def test_openai_completion_shape_and_usage(client: httpx.Client) -> None:
    r = client.post("/v1/chat/completions", json=chat(temperature=0.2), headers=OPENAI_KEY)
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("application/json")
    body = r.json()
    assert body["id"].startswith("chatcmpl-")
    assert body["object"] == "chat.completion"
    assert isinstance(body["created"], int)
    assert body["model"] == "fake-fast"
    choice = body["choices"][0]
    assert choice["message"]["role"] == "assistant"
    assert choice["message"]["content"] == "fake-fast says: Tell me about the weather in Lisbon"
    assert choice["finish_reason"] == "stop"
    # 7 words + 4 per message; the reply has 9 words
    assert body["usage"] == {"prompt_tokens": 11, "completion_tokens": 9, "total_tokens": 20}


def test_openai_reply_is_deterministic_and_depends_on_model_and_prompt(
    client: httpx.Client,
) -> None:
    def reply(payload: dict[str, Any]) -> str:
        r = client.post("/v1/chat/completions", json=payload, headers=OPENAI_KEY)
        return str(r.json()["choices"][0]["message"]["content"])

    long_prompt = " ".join(f"w{i}" for i in range(100))
    assert reply(chat(long_prompt)) == reply(chat(long_prompt))
    assert len(reply(chat(long_prompt)).split()) <= 40
    assert reply(chat("a")) != reply(chat("b"))
    assert reply(chat("a", model="fake-smart")).startswith("fake-smart says:")


def test_openai_max_tokens_truncates_with_finish_reason_length(client: httpx.Client) -> None:
    for field in ("max_tokens", "max_completion_tokens"):
        r = client.post("/v1/chat/completions", json=chat(**{field: 3}), headers=OPENAI_KEY)
        body = r.json()
        assert body["choices"][0]["message"]["content"] == "fake-fast says: Tell"
        assert body["choices"][0]["finish_reason"] == "length"
        assert body["usage"]["completion_tokens"] == 3


def test_openai_stream_reassembles_into_the_plain_reply(client: httpx.Client) -> None:
    plain = client.post("/v1/chat/completions", json=chat(), headers=OPENAI_KEY).json()
    r = client.post(
        "/v1/chat/completions",
        json=chat(stream=True, stream_options={"include_usage": True}),
        headers=OPENAI_KEY,
    )
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/event-stream")
    data = sse_data(r.text)
    assert data[-1] == "[DONE]"
    chunks = [json.loads(d) for d in data[:-1]]
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)
    assert len({c["id"] for c in chunks}) == 1
    deltas = [c["choices"][0]["delta"] for c in chunks if c["choices"]]
    assert deltas[0]["role"] == "assistant"
    text = "".join(d.get("content", "") for d in deltas)
    assert text == plain["choices"][0]["message"]["content"]
    assert len(deltas) >= len(text.split())  # word by word
    assert chunks[-2]["choices"][0]["finish_reason"] == "stop"
    assert chunks[-1]["choices"] == []
    assert chunks[-1]["usage"] == plain["usage"]


def test_openai_stream_without_include_usage_has_no_usage_chunk(client: httpx.Client) -> None:
    r = client.post(
        "/v1/chat/completions", json=chat(stream=True, max_tokens=2), headers=OPENAI_KEY
    )
    chunks = [json.loads(d) for d in sse_data(r.text)[:-1]]
    assert all(c["choices"] for c in chunks)
    assert "usage" not in chunks[-1]
    assert chunks[-1]["choices"][0]["finish_reason"] == "length"


def test_models_lists_known_and_scripted_models(client: httpx.Client) -> None:
    client.post(
        "/_fake/config",
        json={
            "scripts": [
                {"model": "my-scripted-model", "pattern": "x", "reply": "y"},
                {"model": None, "pattern": "x", "reply": "y"},
            ]
        },
    )
    r = client.get("/v1/models", headers=OPENAI_KEY)
    assert r.status_code == 200
    ids = [m["id"] for m in r.json()["data"]]
    assert {"fake-fast", "fake-smart", "fake-judge", "my-scripted-model"} <= set(ids)
    assert None not in ids
    assert client.get("/v1/models", headers={"Authorization": "Bearer bad-key"}).status_code == 401


# --- Azure --------------------------------------------------------------------------------


def test_azure_uses_the_deployment_as_model(client: httpx.Client) -> None:
    r = client.post(AZURE_PATH, json=chat(model="ignored"), headers=AZURE_KEY)
    assert r.status_code == 200
    body = r.json()
    assert body["model"] == "my-gpt"
    assert body["object"] == "chat.completion"
    assert body["choices"][0]["message"]["content"].startswith("my-gpt says: Tell me")
    # a bearer token is accepted too
    r = client.post(AZURE_PATH, json=chat(), headers=OPENAI_KEY)
    assert r.status_code == 200


def test_azure_without_api_version_is_400(client: httpx.Client) -> None:
    r = client.post("/openai/deployments/my-gpt/chat/completions", json=chat(), headers=AZURE_KEY)
    assert r.status_code == 400
    assert "api-version" in r.json()["error"]["message"]


# --- Anthropic ----------------------------------------------------------------------------


def test_anthropic_message_shape_and_usage(client: httpx.Client) -> None:
    payload = {**chat(model="fake-fast", max_tokens=100), "system": "Be brief please"}
    r = client.post("/v1/messages", json=payload, headers=ANTHROPIC_KEY)
    assert r.status_code == 200
    body = r.json()
    assert body["id"].startswith("msg_")
    assert body["type"] == "message"
    assert body["role"] == "assistant"
    assert body["model"] == "fake-fast"
    assert body["content"] == [
        {"type": "text", "text": "fake-fast says: Tell me about the weather in Lisbon"}
    ]
    assert body["stop_reason"] == "end_turn"
    # system (3 words + 4) + message (7 + 4)
    assert body["usage"] == {"input_tokens": 18, "output_tokens": 9}


def test_anthropic_content_blocks_and_max_tokens(client: httpx.Client) -> None:
    payload = {
        "model": "fake-fast",
        "max_tokens": 2,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "hi there"}]}],
    }
    body = client.post("/v1/messages", json=payload, headers=ANTHROPIC_KEY).json()
    assert body["content"][0]["text"] == "fake-fast says:"
    assert body["stop_reason"] == "max_tokens"
    assert body["usage"]["output_tokens"] == 2


def test_anthropic_stream_events_reassemble(client: httpx.Client) -> None:
    payload = chat(max_tokens=50)
    plain = client.post("/v1/messages", json=payload, headers=ANTHROPIC_KEY).json()
    r = client.post("/v1/messages", json={**payload, "stream": True}, headers=ANTHROPIC_KEY)
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/event-stream")
    events = [json.loads(d) for d in sse_data(r.text)]
    names = [line[7:] for line in r.text.splitlines() if line.startswith("event: ")]
    assert names == [e["type"] for e in events]
    types = [t for t in names if t != "ping"]
    assert types[:2] == ["message_start", "content_block_start"]
    assert types[-3:] == ["content_block_stop", "message_delta", "message_stop"]
    text = "".join(e["delta"]["text"] for e in events if e["type"] == "content_block_delta")
    assert text == plain["content"][0]["text"]
    delta = next(e for e in events if e["type"] == "message_delta")
    assert delta["delta"]["stop_reason"] == "end_turn"
    assert delta["usage"]["output_tokens"] == plain["usage"]["output_tokens"]


def test_anthropic_missing_max_tokens_is_400(client: httpx.Client) -> None:
    r = client.post("/v1/messages", json=chat(), headers=ANTHROPIC_KEY)
    assert r.status_code == 400
    body = r.json()
    assert body["type"] == "error"
    assert body["error"]["type"] == "invalid_request_error"
    assert "max_tokens" in body["error"]["message"]


# --- auth, validation, context length -----------------------------------------------------


@pytest.mark.parametrize("headers", [{"Authorization": "Bearer bad-key"}, {}])
def test_openai_bad_or_missing_key_is_401(client: httpx.Client, headers: dict[str, str]) -> None:
    for path in ("/v1/chat/completions", AZURE_PATH):
        r = client.post(path, json=chat(), headers=headers)
        assert r.status_code == 401
        error = r.json()["error"]
        assert error["type"] == "invalid_request_error"
        assert error["code"] == "invalid_api_key"
        assert error["message"]


@pytest.mark.parametrize("headers", [{"x-api-key": "bad-key"}, {"anthropic-version": "2023-06-01"}])
def test_anthropic_bad_or_missing_key_is_401(client: httpx.Client, headers: dict[str, str]) -> None:
    r = client.post("/v1/messages", json=chat(max_tokens=5), headers=headers)
    assert r.status_code == 401
    body = r.json()
    assert body["type"] == "error"
    assert body["error"]["type"] == "authentication_error"
    assert body["error"]["message"]


def test_invalid_bodies_are_400(client: httpx.Client) -> None:
    url = "/v1/chat/completions"
    assert client.post(url, content=b"{not json", headers=OPENAI_KEY).status_code == 400
    assert client.post(url, json={"model": "fake-fast"}, headers=OPENAI_KEY).status_code == 400
    assert client.post(url, json=chat(max_tokens=0), headers=OPENAI_KEY).status_code == 400
    r = client.post(url, json=chat(), headers={**OPENAI_KEY, "X-Fake-Fault": "explode"})
    assert r.status_code == 400


def test_context_length_exceeded(client: httpx.Client) -> None:
    long_text = "word " * 60  # 60 + 4 tokens > 50
    r = client.post(
        "/v1/chat/completions", json=chat(long_text, model="fake-tiny-context"), headers=OPENAI_KEY
    )
    assert r.status_code == 400
    assert r.json()["error"]["code"] == "context_length_exceeded"
    r = client.post(
        "/v1/messages",
        json=chat(long_text, model="fake-tiny-context", max_tokens=5),
        headers=ANTHROPIC_KEY,
    )
    assert r.status_code == 400
    assert r.json()["error"]["type"] == "invalid_request_error"
    assert "prompt is too long" in r.json()["error"]["message"]
    # a short prompt fits the tiny model, a huge one fits no model
    ok = client.post(
        "/v1/chat/completions", json=chat("short", model="fake-tiny-context"), headers=OPENAI_KEY
    )
    assert ok.status_code == 200
    huge = client.post("/v1/chat/completions", json=chat("w " * 100_000), headers=OPENAI_KEY)
    assert huge.status_code == 400
    assert huge.json()["error"]["code"] == "context_length_exceeded"


# --- faults -------------------------------------------------------------------------------


def test_forced_429_has_retry_after_in_each_shape(client: httpx.Client) -> None:
    fault = {"X-Fake-Fault": "429"}
    r = client.post("/v1/chat/completions", json=chat(), headers={**OPENAI_KEY, **fault})
    assert r.status_code == 429
    assert float(r.headers["Retry-After"]) == 1.0
    assert r.json()["error"]["code"] == "rate_limit_exceeded"
    r = client.post("/v1/messages", json=chat(max_tokens=5), headers={**ANTHROPIC_KEY, **fault})
    assert r.status_code == 429
    assert "Retry-After" in r.headers
    assert r.json()["error"]["type"] == "rate_limit_error"


def test_forced_500(client: httpx.Client) -> None:
    r = client.post(
        "/v1/chat/completions",
        json=chat(stream=True),
        headers={**OPENAI_KEY, "X-Fake-Fault": "500"},
    )
    assert r.status_code == 500
    assert r.json()["error"]["type"] == "server_error"
    r = client.post(
        "/v1/messages", json=chat(max_tokens=5), headers={**ANTHROPIC_KEY, "X-Fake-Fault": "500"}
    )
    assert r.status_code == 500
    assert r.json()["error"]["type"] == "api_error"


def test_forced_reset_is_a_transport_error(client: httpx.Client) -> None:
    with pytest.raises(httpx.TransportError):
        client.post(
            "/v1/chat/completions", json=chat(), headers={**OPENAI_KEY, "X-Fake-Fault": "reset"}
        )
    # the server is still fine afterwards
    assert client.post("/v1/chat/completions", json=chat(), headers=OPENAI_KEY).status_code == 200


def test_forced_malformed_is_unparsable_json(client: httpx.Client) -> None:
    r = client.post(
        "/v1/chat/completions", json=chat(), headers={**OPENAI_KEY, "X-Fake-Fault": "malformed"}
    )
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("application/json")
    with pytest.raises(json.JSONDecodeError):
        json.loads(r.content)


def test_forced_hang_exceeds_client_timeout(client: httpx.Client) -> None:
    started = time.monotonic()
    with pytest.raises(httpx.TimeoutException):
        client.post(
            "/v1/chat/completions",
            json=chat(),
            headers={**OPENAI_KEY, "X-Fake-Fault": "hang"},
            timeout=0.3,
        )
    assert time.monotonic() - started < 5
    # the hanging handler is cancelled when the client goes away
    deadline = time.monotonic() + 3
    while client.get("/_fake/stats").json()["in_flight"] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert client.get("/_fake/stats").json()["in_flight"] == 0


def test_hang_answers_after_hang_s() -> None:
    with FakeProviderThread(FakeConfig(latency_ms=0, hang_s=0.3)) as server:
        started = time.monotonic()
        r = httpx.post(
            f"{server.url}/v1/chat/completions",
            json=chat(),
            headers={**OPENAI_KEY, "X-Fake-Fault": "hang"},
        )
        assert r.status_code == 200
        assert time.monotonic() - started >= 0.3


def test_fault_rate_with_seed_is_roughly_the_rate_and_reproducible() -> None:
    config = FakeConfig(latency_ms=0, fault_rate=0.3, faults=("429", "500", "malformed"), seed=7)

    def outcomes(server: FakeProviderThread) -> list[int]:
        with httpx.Client(base_url=server.url, headers=OPENAI_KEY) as c:
            out = []
            for _ in range(200):
                r = c.post("/v1/chat/completions", json=chat())
                ok = r.status_code == 200 and r.content.endswith(b"}")
                out.append(0 if ok else r.status_code)
            return out

    with FakeProviderThread(config) as server:
        first = outcomes(server)
        stats = httpx.get(f"{server.url}/_fake/stats").json()
        httpx.post(f"{server.url}/_fake/config", json={"seed": 7})  # reseeds
        second = outcomes(server)
    failures = sum(1 for o in first if o)
    assert 40 <= failures <= 80  # 60 expected; binomial sd ~6.5
    assert set(first) == {0, 200, 429, 500}  # 200 here = malformed
    assert sum(stats["faults"].values()) == failures
    assert set(stats["faults"]) == {"429", "500", "malformed"}
    assert first == second


# --- scripts, latency, stats, config -------------------------------------------------------


def test_scripts_match_by_model_and_pattern(client: httpx.Client) -> None:
    r = client.post(
        "/_fake/config",
        json={
            "scripts": [
                {"model": "fake-judge", "pattern": r"score\s+this", "reply": '{"score": 4}'},
                {"model": None, "pattern": "(?i)capital of france", "reply": "Paris"},
                {"model": None, "pattern": "France", "reply": "never reached for capitals"},
            ]
        },
    )
    assert r.status_code == 200

    def reply(text: str, model: str) -> str:
        r = client.post("/v1/chat/completions", json=chat(text, model=model), headers=OPENAI_KEY)
        return str(r.json()["choices"][0]["message"]["content"])

    assert reply("please score   this answer", "fake-judge") == '{"score": 4}'
    assert reply("please score this answer", "fake-fast").startswith("fake-fast says:")
    assert reply("What is the CAPITAL of France?", "fake-smart") == "Paris"
    assert reply("France is big", "fake-fast") == "never reached for capitals"
    r = client.post(
        "/v1/messages", json=chat("capital of france?", max_tokens=5), headers=ANTHROPIC_KEY
    )
    assert r.json()["content"][0]["text"] == "Paris"


def test_scripts_only_look_at_the_last_user_message() -> None:
    config = FakeConfig(latency_ms=0, scripts=[Script(pattern="secret", reply="found")])
    payload = {
        "model": "fake-fast",
        "messages": [
            {"role": "user", "content": "the secret word"},
            {"role": "assistant", "content": "ok"},
            {"role": "user", "content": "anything else"},
        ],
    }
    with FakeProviderThread(config) as server:
        r = httpx.post(f"{server.url}/v1/chat/completions", json=payload, headers=OPENAI_KEY)
        assert r.json()["choices"][0]["message"]["content"] == "fake-fast says: anything else"
        payload["messages"][-1]["content"] = "tell the secret"
        r = httpx.post(f"{server.url}/v1/chat/completions", json=payload, headers=OPENAI_KEY)
        assert r.json()["choices"][0]["message"]["content"] == "found"


def test_latency_header_and_config_are_honoured(client: httpx.Client) -> None:
    started = time.monotonic()
    r = client.post(
        "/v1/chat/completions", json=chat(), headers={**OPENAI_KEY, "X-Fake-Latency-Ms": "200"}
    )
    assert r.status_code == 200
    assert time.monotonic() - started >= 0.2
    client.post("/_fake/config", json={"latency_ms": 200})
    started = time.monotonic()
    client.post("/v1/messages", json=chat(max_tokens=5), headers=ANTHROPIC_KEY)
    assert time.monotonic() - started >= 0.2
    started = time.monotonic()
    client.post(
        "/v1/chat/completions", json=chat(), headers={**OPENAI_KEY, "X-Fake-Latency-Ms": "0"}
    )
    assert time.monotonic() - started < 0.2


def test_stats_count_requests_and_peak_concurrency(
    client: httpx.Client, fake: FakeProviderThread
) -> None:
    client.post("/_fake/reset")

    async def burst() -> list[int]:
        async with httpx.AsyncClient(base_url=fake.url, headers=OPENAI_KEY) as ac:
            rs = await asyncio.gather(
                *(
                    ac.post(
                        "/v1/chat/completions",
                        json=chat(model="fake-smart" if i % 2 else "fake-fast"),
                        headers={"X-Fake-Latency-Ms": "300"},
                    )
                    for i in range(20)
                )
            )
            return [r.status_code for r in rs]

    assert asyncio.run(burst()) == [200] * 20
    client.post("/v1/chat/completions", json=chat(), headers={**OPENAI_KEY, "X-Fake-Fault": "500"})
    stats = client.get("/_fake/stats").json()
    assert stats["requests"] == {"fake-fast": 11, "fake-smart": 10}
    assert stats["total"] == 21
    assert stats["in_flight"] == 0
    assert stats["peak_concurrency"] == 20
    assert stats["faults"] == {"500": 1}
    reset = client.post("/_fake/reset").json()
    assert reset["total"] == 0 and reset["requests"] == {} and reset["peak_concurrency"] == 0


def test_config_endpoint_validates_and_round_trips(client: httpx.Client) -> None:
    assert client.get("/_fake/health").json() == {"ok": True}
    assert client.post("/_fake/config", json={"nope": 1}).status_code == 400
    assert client.post("/_fake/config", json={"fault_rate": 2}).status_code == 400
    assert client.post("/_fake/config", json={"faults": ["boom"]}).status_code == 400
    bad_script = {"scripts": [{"model": None, "pattern": "(", "reply": "x"}]}
    assert client.post("/_fake/config", json=bad_script).status_code == 400
    r = client.post("/_fake/config", json={"retry_after_s": 2.5, "faults": ["429"]})
    assert r.status_code == 200
    assert client.get("/_fake/config").json()["retry_after_s"] == 2.5
    r = client.post(
        "/v1/chat/completions", json=chat(), headers={**OPENAI_KEY, "X-Fake-Fault": "429"}
    )
    assert float(r.headers["Retry-After"]) == 2.5
    client.post("/_fake/config", json={"retry_after_s": 1.0, "faults": list(FakeConfig().faults)})


def test_config_from_env() -> None:
    config = FakeConfig.from_env(
        {
            "ASSAY_FAKE_LATENCY_MS": "5",
            "ASSAY_FAKE_JITTER_MS": "2.5",
            "ASSAY_FAKE_FAULT_RATE": "0.1",
            "ASSAY_FAKE_FAULTS": "429, reset",
            "ASSAY_FAKE_SEED": "42",
        }
    )
    assert (config.latency_ms, config.jitter_ms, config.fault_rate, config.seed) == (
        5,
        2.5,
        0.1,
        42,
    )
    assert config.faults == ("429", "reset")
    assert FakeConfig.from_env({}) == FakeConfig()
    with pytest.raises(ConfigError):
        FakeConfig.from_env({"ASSAY_FAKE_FAULTS": "429,teapot"})
    with pytest.raises(ConfigError):
        FakeConfig.from_env({"ASSAY_FAKE_FAULT_RATE": "lots"})
    with pytest.raises(ConfigError):
        FakeConfig(fault_rate=1.5)


def test_create_app_routes() -> None:
    routes = {
        (r.method, r.resource.canonical)
        for r in create_app(FakeConfig()).router.routes()
        if r.resource is not None
    }
    assert ("POST", "/v1/chat/completions") in routes
    assert ("POST", "/openai/deployments/{deployment}/chat/completions") in routes
    assert ("POST", "/v1/messages") in routes


@given(st.text())
def test_stream_pieces_rejoin_to_the_reply(text: str) -> None:
    parts = pieces(text)
    assert "".join(parts) == text
    assert len(parts) == max(1, len(text.split())) or not text


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_run_server_prints_its_address_and_stops_on_signals(sig: signal.Signals) -> None:
    backend = str(Path(__file__).resolve().parents[2] / "backend")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([backend, os.environ.get("PYTHONPATH", "")])}
    code = (
        "from assay.providers.fake import FakeConfig, run_server; "
        "run_server('127.0.0.1', 0, FakeConfig(latency_ms=0))"
    )
    with subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=env
    ) as proc:
        try:
            assert proc.stdout is not None
            line = proc.stdout.readline().strip()
            assert line.startswith("fake provider listening on http://127.0.0.1:")
            url = line.rsplit(" ", 1)[1]
            assert httpx.get(f"{url}/_fake/health").json() == {"ok": True}
            proc.send_signal(sig)
            assert proc.wait(timeout=10) == 0
            assert proc.stdout.read() == ""  # one line only
        finally:
            if proc.poll() is None:
                proc.kill()
