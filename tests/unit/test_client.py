"""The client: retries (only transient, never sooner than Retry-After), per-model limits,
no redirects, the SSRF guard, wall-clock timeouts and classified errors."""

from __future__ import annotations

import asyncio
import http.server
import socket
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

import httpx
import pytest
from aiohttp import web

from assay.providers import client as client_module
from assay.providers.base import ChatRequest, Endpoint, HttpCall, ProviderError
from assay.providers.client import CallResult, LLMClient, RetryPolicy, parse_retry_after
from assay.providers.fake import FakeConfig, FakeProviderThread
from assay.providers.ssrf import OPEN, UrlPolicy

BLOCKED = UrlPolicy(allow_private=False)

REQUEST = ChatRequest("fake-fast", [{"role": "user", "content": "hi"}], {"max_tokens": 5})
FAST = RetryPolicy(attempts=3, base_s=0.001, cap_s=0.01)


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeProviderThread]:
    with FakeProviderThread(FakeConfig(latency_ms=0, retry_after_s=0, seed=3)) as server:
        yield server


def configure(fake: FakeProviderThread, **changes: Any) -> dict[str, Any]:
    httpx.post(f"{fake.url}/_fake/config", json=changes).raise_for_status()
    return dict(httpx.post(f"{fake.url}/_fake/reset").json())


def stats(fake: FakeProviderThread) -> dict[str, Any]:
    return dict(httpx.get(f"{fake.url}/_fake/stats").json())


def chat(endpoint: Endpoint, request: ChatRequest = REQUEST, **client_kw: Any) -> CallResult:
    async def run() -> CallResult:
        async with LLMClient(**{"retry": FAST, **client_kw}) as client:
            return await client.chat(endpoint, request)

    return asyncio.run(run())


def forced(fake: FakeProviderThread, fault: str, **config: Any) -> Endpoint:
    return Endpoint("openai", fake.url, "k", {"headers": {"X-Fake-Fault": fault}, **config})


def test_retry_after_is_honoured(fake: FakeProviderThread) -> None:
    configure(fake, retry_after_s=2, latency_ms=0)
    try:
        started = time.perf_counter()
        result = chat(forced(fake, "429"), retry=RetryPolicy(attempts=2, base_s=0.001))
        elapsed = time.perf_counter() - started
        sent = stats(fake)["total"]
    finally:
        configure(fake, retry_after_s=0)
    assert result.error is not None and result.error.error_class == "rate_limited"
    assert result.error.retry_after == 2.0 and result.attempts == 2 == sent
    assert elapsed >= 2.0, f"retried after {elapsed:.3f} s, sooner than Retry-After: 2"
    assert result.elapsed_ms >= 2000


def test_retry_after_longer_than_the_cap_is_not_waited_for(fake: FakeProviderThread) -> None:
    configure(fake, retry_after_s=600)
    try:
        started = time.perf_counter()
        result = chat(forced(fake, "429"))
    finally:
        configure(fake, retry_after_s=0)
    assert result.error is not None and result.error.error_class == "rate_limited"
    assert result.attempts == 1 and time.perf_counter() - started < 1


def test_a_400_is_never_retried(fake: FakeProviderThread) -> None:
    configure(fake)
    bad = ChatRequest("fake-fast", [{"role": "user", "content": "hi"}], {"max_tokens": 0})
    result = chat(Endpoint("openai", fake.url, "k"), bad)
    assert result.error is not None and result.error.error_class == "bad_request"
    assert result.error.status == 400 and result.attempts == 1
    assert stats(fake)["total"] == 1


def test_transient_errors_retry_then_succeed(fake: FakeProviderThread) -> None:
    configure(fake, fault_rate=0.5, faults=["500", "429", "reset"], seed=11)
    try:
        results = [chat(Endpoint("openai", fake.url, "k"),
                        retry=RetryPolicy(attempts=8, base_s=0.001, cap_s=0.002))
                   for _ in range(12)]
    finally:
        configure(fake, fault_rate=0.0)
    assert all(r.ok for r in results)
    assert sum(r.attempts for r in results) > len(results), "no call needed a retry"


def test_wall_clock_timeout_covers_the_whole_attempt(fake: FakeProviderThread) -> None:
    configure(fake, latency_ms=0)
    slow = Endpoint("openai", fake.url, "k", {"headers": {"X-Fake-Latency-Ms": "3000"}})
    started = time.perf_counter()
    result = chat(slow, timeout_s=0.3, retry=RetryPolicy(attempts=1))
    assert result.error is not None and result.error.error_class == "timeout"
    assert time.perf_counter() - started < 1.5


@pytest.mark.parametrize("limit", [1, 3])
def test_per_model_concurrency_limit(fake: FakeProviderThread, limit: int) -> None:
    configure(fake, latency_ms=40)
    endpoint = Endpoint("openai", fake.url, "k", {"max_concurrency": limit}, credential_id=1)
    other = ChatRequest("fake-smart", REQUEST.messages, REQUEST.params)

    async def run() -> list[CallResult]:
        async with LLMClient() as client:
            calls = [client.chat(endpoint, REQUEST) for _ in range(12)]
            return await asyncio.gather(*calls)

    results = asyncio.run(run())
    assert all(r.ok for r in results)
    assert stats(fake)["peak_concurrency"] == limit

    async def two_models() -> list[CallResult]:
        async with LLMClient() as client:  # each (credential, model) has a slot set of its own
            calls = [client.chat(endpoint, r) for r in [REQUEST, other] * 8]
            return await asyncio.gather(*calls)

    configure(fake, latency_ms=40)
    assert all(r.ok for r in asyncio.run(two_models()))
    assert stats(fake)["peak_concurrency"] == 2 * limit
    configure(fake, latency_ms=0)


def test_client_default_model_limit(fake: FakeProviderThread) -> None:
    configure(fake, latency_ms=30)

    async def run() -> list[CallResult]:
        async with LLMClient(model_limit=2) as client:
            return await asyncio.gather(*[client.chat(Endpoint("openai", fake.url, "k"),
                                                      REQUEST) for _ in range(8)])

    assert all(r.ok for r in asyncio.run(run()))
    assert stats(fake)["peak_concurrency"] == 2
    configure(fake, latency_ms=0)


# --- a scripted server for what the fake does not do --------------------------------------

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def scripted(handlers: dict[str, Handler], check: Callable[[str], Any]) -> Any:
    """Run `check(url)` (a coroutine function) against an aiohttp app with these routes."""

    async def run() -> Any:
        app = web.Application()
        for path, handler in handlers.items():
            app.router.add_post(path, handler)
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = runner.addresses[0][1]
        try:
            return await check(f"http://127.0.0.1:{port}")
        finally:
            await runner.cleanup()

    return asyncio.run(run())


def _json(status: int, body: Any, headers: dict[str, str] | None = None) -> Handler:
    async def handler(request: web.Request) -> web.StreamResponse:
        handler.calls += 1  # type: ignore[attr-defined]
        return web.json_response(body, status=status, headers=headers)

    handler.calls = 0  # type: ignore[attr-defined]
    return handler


def _one_call(base_url: str) -> Awaitable[CallResult]:
    async def run() -> CallResult:
        async with LLMClient(retry=FAST) as client:
            return await client.chat(Endpoint("openai", base_url, "k"), REQUEST)

    return run()


@pytest.mark.parametrize(("status", "body", "expected", "calls"), [
    (400, {"error": {"code": "content_filter", "message": "filtered"}}, "content_filter", 1),
    (200, {"choices": [{"message": {"content": ""}, "finish_reason": "content_filter"}]},
     "content_filter", 1),
    (429, {"error": {"code": "insufficient_quota", "message": "no credit"}}, "auth", 1),
    (503, {"error": {"message": "overloaded"}}, "server_error", 3),
    (200, {"id": "x"}, "malformed_response", 1),
])
def test_error_bodies_are_classified(status: int, body: Any, expected: str,
                                     calls: int) -> None:
    handler = _json(status, body)
    result = scripted({"/v1/chat/completions": handler}, _one_call)
    assert result.error is not None and result.error.error_class == expected
    assert handler.calls == calls == result.attempts  # type: ignore[attr-defined]


def test_redirects_are_not_followed() -> None:
    target = _json(200, {"choices": [{"message": {"content": "leaked"}}]})

    async def redirect(request: web.Request) -> web.StreamResponse:
        raise web.HTTPTemporaryRedirect("/elsewhere")

    result = scripted({"/v1/chat/completions": redirect, "/elsewhere": target}, _one_call)
    assert result.error is not None and result.error.error_class == "bad_request"
    assert "redirect" in result.error.message and result.attempts == 1
    assert target.calls == 0  # type: ignore[attr-defined]


def test_usage_missing_is_counted() -> None:
    handler = _json(200, {"choices": [{"message": {"content": "hello world"}}]})
    result = scripted({"/v1/chat/completions": handler}, _one_call)
    assert result.response is not None and result.usage_counted
    assert result.response.tokens_out == 2


# --- SSRF ---------------------------------------------------------------------------------


@pytest.mark.parametrize("url", ["http://169.254.169.254", "http://2852039166",
                                 "http://[::ffff:169.254.169.254]", "http://0xa9fea9fe"])
def test_ssrf_refused_before_connecting(url: str) -> None:
    result = chat(Endpoint("openai", url, "k"))
    assert result.error is not None and result.error.error_class == "bad_request"
    assert "refused" in result.error.message and result.attempts == 1


def test_private_addresses_blockable(fake: FakeProviderThread) -> None:
    configure(fake)
    blocked = chat(Endpoint("openai", fake.url, "k"), url_policy=BLOCKED)
    assert blocked.error is not None and "private" in blocked.error.message
    assert stats(fake)["total"] == 0
    assert chat(Endpoint("openai", fake.url, "k")).ok


def test_ssrf_verdict_cached_per_host(fake: FakeProviderThread,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []
    real = client_module.check_base_url

    def counting(url: str, policy: UrlPolicy = OPEN) -> str:
        seen.append(url)
        return real(url, policy)

    monkeypatch.setattr(client_module, "check_base_url", counting)

    async def run() -> list[CallResult]:
        async with LLMClient() as client:
            endpoint = Endpoint("openai", fake.url, "k")
            return [await client.chat(endpoint, REQUEST) for _ in range(5)]

    assert all(r.ok for r in asyncio.run(run()))
    assert seen == [fake.url]


def test_ssrf_checked_once_for_calls_started_together(fake: FakeProviderThread,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A run's first window starts all its calls at once: they wait for one check of the
    origin instead of each sending the guard to a thread."""
    configure(fake)
    seen: list[str] = []
    real = client_module.check_base_url

    def counting(url: str, policy: UrlPolicy = OPEN) -> str:
        seen.append(url)
        time.sleep(0.01)  # a DNS lookup's worth: the other calls arrive meanwhile
        return real(url, policy)

    monkeypatch.setattr(client_module, "check_base_url", counting)

    async def run() -> list[CallResult]:
        async with LLMClient() as client:
            endpoint = Endpoint("openai", fake.url, "k")
            return await asyncio.gather(*(client.chat(endpoint, REQUEST) for _ in range(20)))

    assert all(r.ok for r in asyncio.run(run()))
    assert seen == [fake.url]


# --- pieces -------------------------------------------------------------------------------


def test_parse_retry_after_forms() -> None:
    assert parse_retry_after({"retry-after": "2"}) == 2.0
    assert parse_retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert parse_retry_after({}) is None and parse_retry_after({"retry-after": "soon"}) is None
    later = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    waited = parse_retry_after({"retry-after": later})
    assert waited is not None and 28 <= waited <= 30


def test_backoff_has_full_jitter_and_respects_retry_after() -> None:
    policy = RetryPolicy(base_s=1.0, cap_s=4.0)
    delays = [policy.delay(3, None) for _ in range(2000)]
    assert 0 <= min(delays) < 0.1 and 3.9 < max(delays) <= 4.0  # uniform in [0, min(cap, 4)]
    assert all(policy.delay(1, 2.5) >= 2.5 for _ in range(200))
    assert max(policy.delay(10, None) for _ in range(200)) <= 4.0


def test_unknown_kind_is_a_bad_request() -> None:
    result = chat(Endpoint("gemini", "http://127.0.0.1:9", "k"))
    assert result.error is not None and result.error.error_class == "bad_request"
    assert result.attempts == 0


def test_list_models(fake: FakeProviderThread) -> None:
    async def run() -> tuple[list[str] | None, list[str] | None]:
        async with LLMClient() as client:
            listed = await client.list_models(Endpoint("openai", fake.url, "k"))
            azure = await client.list_models(Endpoint("azure_openai", fake.url, "k"))
            return listed, azure

    listed, azure = asyncio.run(run())
    assert listed is not None and "fake-fast" in listed and azure is None


def test_fetch_makes_an_adapters_plain_call_like_a_chat(fake: FakeProviderThread) -> None:
    """`fetch` (model lists, connection tests): JSON back, or the same classified errors,
    with a plain-words reason for a transport failure or a refused URL."""
    async def run(call: HttpCall, **client_kw: Any) -> Any:
        async with LLMClient(**client_kw) as client:
            try:
                return await client.fetch(call)
            except ProviderError as error:
                return error

    body = asyncio.run(run(HttpCall(f"{fake.url}/v1/models", {}, {"Authorization": "Bearer k"},
                                    "GET")))
    assert "fake-fast" in [m["id"] for m in body["data"]]
    denied = asyncio.run(run(HttpCall(f"{fake.url}/v1/models", {}, {}, "GET")))
    assert isinstance(denied, ProviderError) and denied.error_class == "auth"
    assert denied.status == 401 and denied.reason is None
    refused = asyncio.run(run(HttpCall("http://127.0.0.1:1/v1/models", {}, {}, "GET")))
    assert isinstance(refused, ProviderError) and refused.error_class == "network"
    assert refused.reason == "connection refused"
    nowhere = asyncio.run(run(HttpCall("http://nowhere.invalid/v1/models", {}, {}, "GET")))
    assert isinstance(nowhere, ProviderError) and nowhere.error_class == "bad_request"
    assert nowhere.reason == "could not resolve the host name"
    private = asyncio.run(run(HttpCall(f"{fake.url}/v1/models", {}, {}, "GET"),
                              url_policy=BLOCKED))
    assert isinstance(private, ProviderError) and private.reason
    assert "private" in private.reason


class _Recorder(http.server.BaseHTTPRequestHandler):
    """A provider on loopback that lists one model and remembers every request's Host."""

    heard: list[str] = []

    def do_GET(self) -> None:
        self.heard.append(self.headers.get("Host", ""))
        body = b'{"data": [{"id": "local-model"}]}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def local() -> Iterator[tuple[int, list[str]]]:
    """(port, Host headers heard) of a provider on 127.0.0.1."""
    heard: list[str] = []
    handler = type("Handler", (_Recorder,), {"heard": heard})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1], heard
    server.shutdown()
    server.server_close()


def _models(url: str, **client_kw: Any) -> Any:
    async def run() -> Any:
        async with LLMClient(**client_kw) as client:
            try:
                return await client.fetch(HttpCall(url, {}, {}, "GET"))
            except ProviderError as error:
                return error

    return asyncio.run(run())


@pytest.mark.parametrize("host", ["2130706433", "0177.0.0.1", "0x7f000001", "127.1",
                                  "0x7f.1"])
def test_every_ipv4_spelling_reaches_the_address_the_guard_judged(
        local: tuple[int, list[str]], host: str) -> None:
    """aiohttp refused the decimal, octal and short forms the guard let through; the client
    now calls the canonical address, and the block and the allow-list judge it too."""
    port, heard = local
    url = f"http://{host}:{port}/v1/models"
    body = _models(url)
    assert body == {"data": [{"id": "local-model"}]}, getattr(body, "reason", body)
    assert heard == [f"127.0.0.1:{port}"]
    blocked = _models(url, url_policy=BLOCKED)
    assert isinstance(blocked, ProviderError) and "private" in (blocked.reason or "")
    listed = UrlPolicy.of(False, [f"127.0.0.1:{port}"])
    assert _models(url, url_policy=listed) == body
    assert len(heard) == 2


def _rebinding_dns(monkeypatch: pytest.MonkeyPatch, *answers: str) -> list[str]:
    """`rebind.test` resolves to each answer in turn (the last one from then on), for the
    guard and for aiohttp alike: both ask socket.getaddrinfo."""
    real = socket.getaddrinfo
    asked: list[str] = []

    def fake(host: Any, port: Any, *args: Any, **kwargs: Any) -> list[Any]:
        if host != "rebind.test":
            return real(host, port, *args, **kwargs)
        address = answers[min(len(asked), len(answers) - 1)]
        asked.append(address)
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, int(port or 80)))]

    monkeypatch.setattr(socket, "getaddrinfo", fake)
    return asked


def test_dns_rebinding_never_connects_to_the_private_answer(
        local: tuple[int, list[str]], monkeypatch: pytest.MonkeyPatch) -> None:
    """Public for the guard's look, loopback for the connection's: the connection's own
    resolution is checked, so the provider on loopback never hears the call."""
    port, heard = local
    asked = _rebinding_dns(monkeypatch, "93.184.216.34", "127.0.0.1")
    refused = _models(f"http://rebind.test:{port}/v1/models", url_policy=BLOCKED)
    assert asked == ["93.184.216.34", "127.0.0.1"]  # the guard's look, then the connection's
    assert isinstance(refused, ProviderError) and refused.error_class == "bad_request"
    assert "rebind.test resolves to 127.0.0.1" in (refused.reason or "")
    assert heard == []


def test_an_allowed_private_name_is_reached_with_its_host_header(
        local: tuple[int, list[str]], monkeypatch: pytest.MonkeyPatch) -> None:
    port, heard = local
    _rebinding_dns(monkeypatch, "127.0.0.1")
    allowed = UrlPolicy.of(False, [f"rebind.test:{port}"])
    body = _models(f"http://rebind.test:{port}/v1/models", url_policy=allowed)
    assert body == {"data": [{"id": "local-model"}]}, getattr(body, "reason", body)
    assert heard == [f"rebind.test:{port}"]  # connected to the checked IP, named as written


def test_fetch_records_where_a_redirect_went() -> None:
    async def moved(request: web.Request) -> web.StreamResponse:
        raise web.HTTPFound("https://elsewhere.test/v1/models")

    async def check(base_url: str) -> Any:
        async with LLMClient() as client:
            try:  # a POST: a 1-token chat can be a connection test too
                return await client.fetch(HttpCall(f"{base_url}/v1/models", {}, {}))
            except ProviderError as error:
                return error

    error = scripted({"/v1/models": moved}, check)
    assert error.status == 302 and error.error_class == "bad_request"
    assert error.raw["location"] == "https://elsewhere.test/v1/models"


def test_an_unreadable_stream_is_malformed_not_a_crash() -> None:
    async def huge_line(request: web.Request) -> web.StreamResponse:
        reply = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await reply.prepare(request)
        await reply.write(b"data: " + b"x" * 4_000_000 + b"\n\n")
        await reply.write_eof()
        return reply

    async def check(base_url: str) -> CallResult:
        async with LLMClient(retry=FAST) as client:
            return await client.chat(Endpoint("openai", base_url, "k"), REQUEST, stream=True)

    result = scripted({"/v1/chat/completions": huge_line}, check)
    assert result.error is not None and result.error.error_class == "malformed_response"
    assert result.attempts == 1


def test_a_bug_fails_its_cell_not_the_shard() -> None:
    from assay.core.runs.engine import execute_cell
    from assay.core.runs.service import Cell

    class Broken:
        async def chat(self, *args: Any, **kwargs: Any) -> CallResult:
            raise RuntimeError("boom")

    cell = Cell(output_id=7, repeat=0, model="m", kind="openai", base_url="http://x",
                config={}, credential_id=1, params={}, messages=[], price_in=None,
                price_out=None, api_key="sk-never-shown")
    result = asyncio.run(execute_cell(Broken(), cell))  # type: ignore[arg-type]
    assert not result.ok and result.error_class == "internal"
    assert result.error_message == "internal error: RuntimeError: boom"
    assert "sk-never-shown" not in repr(cell)
