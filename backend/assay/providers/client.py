"""The one wrapper every LLM call goes through. It owns, and nothing else does:

* a wall-clock timeout per attempt (the whole attempt, streaming included);
* the classified error taxonomy of `base.ERROR_CLASSES`, from status codes, provider error
  bodies and transport failures;
* retries of transient classes only (rate_limited, timeout, network, server_error), with
  exponential backoff and full jitter that never retries sooner than `Retry-After`;
* per-model concurrency limits (a semaphore per (credential, model));
* requests- and tokens-per-minute limits (the credential's `config.rpm_limit` and
  `config.tpm_limit`), through an optional `Limiter` consulted before every attempt and
  only for endpoints that set one: an unlimited endpoint costs no limiter call at all;
* the SSRF guard before connecting (its verdict cached per host for a few seconds), the
  URL's host canonicalised as the guard judged it, the guard again on the addresses the
  connection resolves (providers/pinning.py: no DNS rebinding), and no redirects followed;
* stopping (`stop()`, for a cancel or a pause): the requests still waiting for their
  reply are closed and no call starts after it, each raising CancelledError in its
  caller; a reply already arriving is read to its end, since the provider bills it;
* recording of the raw request (URL and JSON body: never headers, so never a key) and the
  raw response; time to first token when streaming; token counts when the provider gives
  none.

It talks aiohttp directly. httpx over the httpx-aiohttp transport was measured at ~3x the
CPU per call of plain aiohttp against the fake provider (0.32 vs 0.11 ms at 200 in flight),
and httpx's own pool far slower still (DESIGN.md section 4, "Speed"); CPU per call is
what bounds a worker. SDK-level and transport-level retries stay off: one retry layer.
"""

from __future__ import annotations

import asyncio
import errno
import random
import socket
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from email.utils import parsedate_to_datetime
from typing import Any, Protocol

import aiohttp
from aiohttp.http_exceptions import HttpProcessingError

from assay import jsonio
from assay.core.errors import Invalid
from assay.observability import metrics, tracing
from assay.providers import tokens
from assay.providers.base import (
    Adapter,
    ChatRequest,
    ChatResponse,
    Endpoint,
    HttpCall,
    ProviderError,
    SSEDecoder,
    classify_status,
    error_text,
)
from assay.providers.pinning import GuardedResolver, refused
from assay.providers.registry import adapter_for
from assay.providers.ssrf import OPEN, UnresolvableHost, UrlPolicy, check_base_url

SSRF_TTL_S = 30.0
# A stop closes the requests still waiting after this: a reply already in the socket is
# read by then (the loop polls the sockets before it runs the timer), and is recorded.
STOP_GRACE_S = 0.05
_RAW_TEXT_LIMIT = 4000
_REASON_LIMIT = 200


class Limiter(Protocol):
    """Per-minute request and token limits per key (ratelimit.RedisRateLimiter)."""

    async def acquire(self, key: str, rpm: int | None, tpm: int | None, requests: int = 1,
                      tokens: int = 0) -> float:
        """Wait until the amounts fit under the limits of `key`, take them; never raises."""
        ...

    async def refund(self, key: str, tpm: int | None, tokens: int) -> None:
        """Give back tokens taken but not used."""
        ...

    async def aclose(self) -> None: ...


@dataclass(frozen=True)
class Limits:
    """What one limited call takes from its key's buckets, at every attempt."""

    key: str
    rpm: int | None
    tpm: int | None
    tokens: int  # counted prompt tokens + max output tokens; 0 without a tpm limit


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 3  # in all, the first one included
    base_s: float = 0.5
    cap_s: float = 20.0
    max_retry_after_s: float = 120.0  # a provider asking for a longer wait is not retried

    def delay(self, attempt: int, retry_after: float | None) -> float:
        """Full jitter: uniform in [0, min(cap, base * 2^(attempt-1))], and never less than
        what the provider asked for."""
        jittered = random.uniform(0, min(self.cap_s, self.base_s * 2 ** (attempt - 1)))
        return max(jittered, retry_after or 0.0)


@dataclass(frozen=True)
class CallResult:
    response: ChatResponse | None
    error: ProviderError | None
    latency_ms: int  # of the last attempt: the provider's time, not our backoff
    attempts: int
    ttft_ms: int | None = None  # streaming only: time to the first text
    raw_request: dict[str, Any] | None = None  # method, URL, JSON body; never headers
    raw_response: Any = None
    usage_counted: bool = False  # token counts came from tiktoken, not from the provider
    elapsed_ms: int = 0  # everything: queueing for a slot, retries and backoff

    @property
    def ok(self) -> bool:
        return self.error is None


def parse_retry_after(headers: Any) -> float | None:
    """Seconds to wait, from `retry-after-ms`, or `Retry-After` in seconds or as a date."""
    raw_ms = headers.get("retry-after-ms")
    if raw_ms:
        try:
            return max(0.0, float(raw_ms) / 1000)
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if not raw:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _transport_reason(exc: BaseException) -> str:
    """A transport failure in plain words, for someone checking a base URL."""
    cause = getattr(exc, "os_error", None) or exc
    text = str(exc) or type(exc).__name__
    if isinstance(exc, aiohttp.ClientConnectorDNSError) or isinstance(cause, socket.gaierror):
        return "could not resolve the host name"
    if isinstance(exc, aiohttp.ClientSSLError) or isinstance(cause, ssl.SSLError):
        return f"TLS error: {text[:_REASON_LIMIT]}"
    if isinstance(cause, ConnectionRefusedError) \
            or getattr(cause, "errno", None) == errno.ECONNREFUSED:
        return "connection refused"
    if isinstance(exc, aiohttp.ServerDisconnectedError | aiohttp.ClientPayloadError):
        return "the server closed the connection without a valid HTTP answer"
    return f"could not connect: {text[:_REASON_LIMIT]}"


def _transport_error(exc: BaseException, timeout_s: float) -> ProviderError:
    if isinstance(exc, TimeoutError | aiohttp.ServerTimeoutError):
        error = ProviderError("timeout", f"no answer in time ({type(exc).__name__})")
        error.reason = f"timed out after {timeout_s:g} s without an answer"
    else:
        error = ProviderError("network", f"{type(exc).__name__}: {exc}")
        error.reason = _transport_reason(exc)
    return error


async def _status_error(reply: aiohttp.ClientResponse,
                        adapter: Adapter | None = None) -> ProviderError:
    """An HTTP reply of 300 or more, classified; a redirect is never followed. An adapter
    with `classify_error` reads its provider's own error codes and retry hints."""
    body = _decode(await reply.read())
    if reply.status < 400:
        location = reply.headers.get("location")
        return ProviderError("bad_request", f"HTTP {reply.status}: redirect to {location!r} "
                             "not followed", status=reply.status,
                             raw={"status": reply.status, "location": location})
    error_class, retry_after = classify_status(reply.status, body), None
    own = getattr(adapter, "classify_error", None)
    verdict = own(reply.status, body, reply.headers) if own is not None else None
    if verdict is not None:
        error_class, retry_after = verdict
    if retry_after is None:
        retry_after = parse_retry_after(reply.headers)
    return ProviderError(error_class, f"HTTP {reply.status}: {error_text(body)[:500]}",
                         retry_after, reply.status, {"status": reply.status, "body": body})


def _payload(call: HttpCall) -> bytes | None:
    if call.body is not None:
        return call.body
    return jsonio.dumps_bytes(call.json) if call.method != "GET" else None


def _json_body(raw: bytes) -> Any:
    try:
        return jsonio.loads(raw)
    except ValueError as exc:
        raise ProviderError(
            "malformed_response", f"invalid JSON: {exc}",
            raw={"body": raw[:_RAW_TEXT_LIMIT].decode("utf-8", "replace")}) from exc


_FAILURES = (ProviderError, aiohttp.ClientError, OSError, TimeoutError, ValueError,
             HttpProcessingError)


def _decode(data: bytes) -> Any:
    try:
        return jsonio.loads(data)
    except ValueError:
        return data[:_RAW_TEXT_LIMIT].decode("utf-8", "replace")


def _ms(started: float) -> int:
    return int((time.perf_counter() - started) * 1000)


class LLMClient:
    """One per worker (or per event loop); `await aclose()` when done."""

    def __init__(self, timeout_s: float = 60.0, retry: RetryPolicy | None = None,
                 max_connections: int = 200, model_limit: int | None = None,
                 url_policy: UrlPolicy = OPEN,
                 adapters: Callable[[str], Adapter] = adapter_for,
                 limiter: Limiter | None = None) -> None:
        self.timeout_s = timeout_s
        self.retry = retry or RetryPolicy()
        self.max_connections = max_connections
        self.model_limit = model_limit  # default per (credential, model); None: no limit
        self.url_policy = url_policy  # settings.url_policy: ASSAY_BLOCK_PRIVATE_URLS & co
        self._adapters = adapters
        self.limiter = limiter  # consulted only for endpoints with rpm_limit / tpm_limit
        self._session: aiohttp.ClientSession | None = None
        self._slots: dict[tuple[Any, str], asyncio.Semaphore] = {}
        self._ssrf: dict[str, tuple[float, Invalid | None, str]] = {}
        self._ssrf_locks: dict[str, asyncio.Lock] = {}
        self.stopped = False
        self._waiting: set[asyncio.Task[Any]] = set()  # attempts with no reply arriving yet

    # --- plumbing -----------------------------------------------------------------------

    def _http(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            connector = aiohttp.TCPConnector(limit=self.max_connections, limit_per_host=0,
                                             ttl_dns_cache=10,
                                             resolver=GuardedResolver(self.url_policy))
            self._session = aiohttp.ClientSession(
                connector=connector, timeout=aiohttp.ClientTimeout(total=None),
                auto_decompress=True, trust_env=False, raise_for_status=False)
        return self._session

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None
        if self.limiter is not None:
            await self.limiter.aclose()

    async def __aenter__(self) -> LLMClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def stop(self) -> None:
        """Close the requests that have no reply arriving (after STOP_GRACE_S) and start no
        call from now on: their callers get CancelledError. Call it on the client's loop."""
        if self.stopped:
            return
        self.stopped = True
        asyncio.get_running_loop().call_later(STOP_GRACE_S, self._cut)

    def _cut(self) -> None:
        spared = False
        for task in list(self._waiting):
            waiter = getattr(task, "_fut_waiter", None)  # done: bytes came, not read yet
            if waiter is not None and waiter.done():
                spared = True
            else:
                task.cancel()
        if spared:  # looked at again once they have read what came
            asyncio.get_running_loop().call_later(STOP_GRACE_S, self._cut)

    def _stopping(self) -> None:
        if self.stopped:
            raise asyncio.CancelledError("the call was stopped before it was sent")

    def slot(self, endpoint: Endpoint, model: str) -> asyncio.Semaphore | None:
        """The semaphore of (credential, model): the credential's `config.max_concurrency`,
        else the client's `model_limit`; None when neither limits it."""
        limit = endpoint.config.get("max_concurrency") or self.model_limit
        if not limit:
            return None
        key = (endpoint.credential_id or endpoint.base_url, model)
        found = self._slots.get(key)
        if found is None:
            found = self._slots[key] = asyncio.Semaphore(int(limit))
        return found

    def limits(self, endpoint: Endpoint, request: ChatRequest) -> Limits | None:
        """What a call takes from the rate limits; None (no limiter call) when unlimited."""
        if self.limiter is None:
            return None
        rpm = endpoint.config.get("rpm_limit") or None
        tpm = endpoint.config.get("tpm_limit") or None
        if rpm is None and tpm is None:
            return None
        counted = 0
        if tpm is not None:
            counted = (tokens.count_messages(request.messages, request.model)
                       + tokens.max_output_tokens(request.params))
        key = f"{endpoint.credential_id or endpoint.base_url}:{request.model}"
        return Limits(key, rpm, tpm, counted)

    async def check_url(self, url: str) -> str:
        """The SSRF guard (it may resolve DNS, so it runs in a thread), cached per origin;
        the URL to call, its host written as the guard judged it (127.1 is 127.0.0.1)."""
        scheme, _, rest = url.partition("://")
        origin = f"{scheme}://{rest.split('/', 1)[0]}"
        cached = self._ssrf.get(origin)
        if cached is None or cached[0] < time.monotonic():
            cached = await self._guard(origin)
        verdict, canonical = cached[1], cached[2]
        if verdict is not None:
            error = refused(verdict)
            if isinstance(verdict, UnresolvableHost):
                error.reason = "could not resolve the host name"
            raise error
        return url if canonical == origin else canonical + url[len(origin):]

    async def _guard(self, origin: str) -> tuple[float, Invalid | None, str]:
        """The origin's verdict, checked once however many calls ask at the same time: a
        run's first window (200 calls started together) waits for one check instead of
        sending 200 to the threads, which held its first replies back by tens of ms."""
        lock = self._ssrf_locks.get(origin)
        if lock is None:
            lock = self._ssrf_locks[origin] = asyncio.Lock()
        async with lock:
            now = time.monotonic()
            cached = self._ssrf.get(origin)
            if cached is not None and cached[0] >= now:
                return cached  # checked while this call waited
            verdict: Invalid | None = None
            canonical = origin
            try:
                canonical = await asyncio.to_thread(check_base_url, origin, self.url_policy)
            except Invalid as refusal:
                verdict = refusal
            cached = self._ssrf[origin] = (now + SSRF_TTL_S, verdict, canonical)
            return cached

    # --- one attempt --------------------------------------------------------------------

    async def _send(self, adapter: Adapter, call: HttpCall, stream: bool,
                    started: float) -> tuple[ChatResponse, int | None]:
        data = _payload(call)
        task = asyncio.current_task()
        self._stopping()
        if task is not None:
            self._waiting.add(task)
        try:
            reply = await self._http().request(call.method, call.url, data=data,
                                               headers=call.headers, allow_redirects=False)
        finally:
            if task is not None:
                self._waiting.discard(task)
        async with reply:  # its headers are in: read to its end, whatever stop comes
            if reply.status >= 300:
                raise await _status_error(reply, adapter)
            is_sse = reply.content_type == "text/event-stream"
            if not stream or not is_sse:
                return adapter.parse(_json_body(await reply.read())), None
            parser = adapter.stream_parser()
            decoder = SSEDecoder()
            ttft: int | None = None
            async for line in reply.content:
                event = decoder.line(line.decode("utf-8", "replace"))
                if event is not None:
                    if parser.feed(*event) and ttft is None:
                        ttft = _ms(started)
                    if parser.done:
                        break
            last = decoder.end()
            if last is not None and not parser.done:
                parser.feed(*last)
            return parser.finish(), ttft

    async def _attempt(self, adapter: Adapter, endpoint: Endpoint, call: HttpCall,
                       model: str, stream: bool,
                       limits: Limits | None = None) -> tuple[ChatResponse, int | None, int]:
        slot = self.slot(endpoint, model)
        if slot is not None:
            await slot.acquire()
            if self.stopped:
                slot.release()
                self._stopping()
        try:
            if limits is not None and self.limiter is not None:
                # inside the slot: what is taken is spent at once, by this attempt
                await self.limiter.acquire(limits.key, limits.rpm, limits.tpm, 1,
                                           limits.tokens)
        except BaseException:
            if slot is not None:
                slot.release()
            raise
        started = time.perf_counter()
        try:
            async with asyncio.timeout(self.timeout_s):
                response, ttft = await self._send(adapter, call, stream, started)
        except _FAILURES as exc:
            failure = self._failure(exc, started)
            if failure is exc:
                raise
            raise failure from exc
        finally:
            if slot is not None:
                slot.release()
        return response, ttft, _ms(started)

    def _failure(self, exc: BaseException, started: float) -> ProviderError:
        """What went wrong in an attempt, classified, with the attempt's latency."""
        if isinstance(exc, ProviderError):
            failure = exc
        elif isinstance(exc, aiohttp.ClientError | OSError | TimeoutError):
            failure = _transport_error(exc, self.timeout_s)
        else:  # ValueError, HttpProcessingError: a line too long to read...
            failure = ProviderError("malformed_response", f"unreadable reply: {exc}")
        failure.latency_ms = _ms(started)
        return failure

    # --- the calls ----------------------------------------------------------------------

    async def chat(self, endpoint: Endpoint, request: ChatRequest,
                   stream: bool = False) -> CallResult:
        """One chat completion, retried while transient; never raises a provider error."""
        started = time.perf_counter()
        started_ns = time.time_ns()  # the call's span, if it gets one, starts here
        try:
            adapter = self._adapters(endpoint.kind)
        except KeyError as exc:
            return CallResult(None, ProviderError("bad_request", str(exc.args[0])), 0, 0)
        prepare = getattr(adapter, "prepare", None)
        try:
            if prepare is not None:
                await prepare(endpoint)
            call = adapter.build(endpoint, request, stream)
        except ProviderError as error:  # no credentials to sign or authorise it with
            metrics.record_call(endpoint.kind, error.error_class)
            return CallResult(None, error, 0, 1, elapsed_ms=_ms(started))
        recorded = call.recorded()
        limits = self.limits(endpoint, request)
        attempt = 0
        while True:
            attempt += 1
            latency = 0
            try:
                url = await self.check_url(call.url)
                if url != call.url:
                    call = replace(call, url=url)
                response, ttft, latency = await self._attempt(adapter, endpoint, call,
                                                              request.model, stream, limits)
                metrics.record_attempt(endpoint.kind, latency / 1000, None)
                if response.finish_reason == "content_filter":
                    raise ProviderError("content_filter", "the provider's content filter "
                                        "stopped the reply", raw=response.raw)
                response, counted = _with_usage(request, response)
                if limits is not None and limits.tpm and self.limiter is not None:
                    used = (response.tokens_in or 0) + (response.tokens_out or 0)
                    await self.limiter.refund(limits.key, limits.tpm, limits.tokens - used)
                metrics.record_call(endpoint.kind, None)
                tracing.llm_call(endpoint.kind, request.model, call.url, started_ns, None,
                                 attempt, response.tokens_in, response.tokens_out)
                return CallResult(response, None, latency, attempt, ttft, recorded,
                                  response.raw, counted, _ms(started))
            except ProviderError as error:
                # no latency: refused before sending, or the reply was timed above already
                seconds = None if error.latency_ms is None else error.latency_ms / 1000
                latency = error.latency_ms if error.latency_ms is not None else latency
                metrics.record_attempt(endpoint.kind, seconds, error.error_class)
                wait = error.retry_after
                if (not error.transient or attempt >= self.retry.attempts
                        or (wait is not None and wait > self.retry.max_retry_after_s)):
                    metrics.record_call(endpoint.kind, error.error_class)
                    tracing.llm_call(endpoint.kind, request.model, call.url, started_ns,
                                     error.error_class, attempt)
                    return CallResult(None, error, latency, attempt, None, recorded, error.raw,
                                      False, _ms(started))
                metrics.record_retry(endpoint.kind, error.error_class)
                await self._pause(self.retry.delay(attempt, wait))

    async def _pause(self, seconds: float) -> None:
        """The wait before a retry, which a stop cuts short."""
        self._stopping()
        task = asyncio.current_task()
        if task is not None:
            self._waiting.add(task)
        try:
            await asyncio.sleep(seconds)
        finally:
            if task is not None:
                self._waiting.discard(task)

    async def fetch(self, call: HttpCall, adapter: Adapter | None = None) -> Any:
        """One plain JSON call an adapter built (`models_call`, `check_call`): the SSRF
        guard, the timeout, no redirect, failures classified as for a chat; not retried and
        no per-model slot. Returns the decoded body; raises ProviderError."""
        url = await self.check_url(call.url)
        started = time.perf_counter()
        data = _payload(call)
        try:
            async with asyncio.timeout(self.timeout_s):
                async with self._http().request(call.method, url, data=data,
                                                headers=call.headers,
                                                allow_redirects=False) as reply:
                    if reply.status >= 300:
                        raise await _status_error(reply, adapter)
                    return _json_body(await reply.read())
        except _FAILURES as exc:
            failure = self._failure(exc, started)
            if failure is exc:
                raise
            raise failure from exc

    async def list_models(self, endpoint: Endpoint) -> list[str] | None:
        """The provider's model ids, or None where it has no endpoint for that; raises
        ProviderError (classified) when the call fails. Not retried."""
        adapter = self._adapters(endpoint.kind)
        call = adapter.models_call(endpoint)
        if call is None:
            return None
        return adapter.parse_models(await self.fetch(call, adapter))


def _with_usage(request: ChatRequest, response: ChatResponse) -> tuple[ChatResponse, bool]:
    """Provider-reported usage when present; else counted with the bundled tokenizer."""
    if response.tokens_in is not None and response.tokens_out is not None:
        return response, False
    tokens_in = response.tokens_in
    if tokens_in is None:
        tokens_in = tokens.count_messages(request.messages, request.model)
    tokens_out = response.tokens_out
    if tokens_out is None:
        tokens_out = tokens.count_text(response.text, request.model)
    return ChatResponse(response.text, tokens_in, tokens_out, response.finish_reason,
                        response.raw), True

