"""The aiohttp application of the fake LLM provider: routes, handlers, faults and stats.

The public API, endpoint list and ways to run it are in ``fake.py``. The request path is
kept cheap (no logging, no validation library): the run engine is benchmarked through it.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import itertools
import json
import random
import socket
import struct
import time
from typing import Any

from aiohttp import web

from assay.providers import fake_cloud as cloud
from assay.providers import fake_shapes as shapes
from assay.providers.fake_cloud import BEDROCK, CLOUD, GEMINI, GOOGLE, VERTEX
from assay.providers.fake_config import FAULT_KINDS, FORCED_FAULTS, FakeConfig

OPENAI, AZURE, ANTHROPIC = "openai", "azure", "anthropic"
_JSON = "application/json"
_SSE_HEADERS = {"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
_MALFORMED = b'{"id": "fake-malformed", "object": "chat.completion", "choices": [{"message": {"con'
_LINGER_RESET = struct.pack("ii", 1, 0)
_FORCEABLE = (*FAULT_KINDS, *FORCED_FAULTS)
_STATUS_KINDS = {"400": "invalid", "401": "auth", "403": "auth", "404": "invalid"}
RECEIVED_MAX = 2000  # request bodies kept for `GET /_fake/requests` (bounded: benches)


class _Reject(Exception):
    """A request the provider refuses (bad key, bad body, prompt too long)."""

    def __init__(self, status: int, kind: str, message: str, reason: str | None = None) -> None:
        super().__init__(message)
        self.status, self.kind, self.message, self.reason = status, kind, message, reason

    @classmethod
    def of(cls, refused: cloud.Refused) -> _Reject:
        kind = "auth" if refused.status in (401, 403) or refused.reason else "invalid"
        return cls(refused.status, kind, refused.message, refused.reason)


class _Call:
    __slots__ = ("cut", "include_usage", "model", "prompt_tokens", "reply_tokens", "stream", "text")

    def __init__(
        self,
        model: str,
        text: str,
        cut: bool,
        prompt_tokens: int,
        reply_tokens: int,
        stream: bool,
        include_usage: bool,
    ) -> None:
        self.model, self.text, self.cut, self.stream = model, text, cut, stream
        self.prompt_tokens, self.reply_tokens, self.include_usage = (
            prompt_tokens,
            reply_tokens,
            include_usage,
        )


_OPENAI_ERRORS = {  # kind -> (type, code)
    "auth": ("invalid_request_error", "invalid_api_key"),
    "invalid": ("invalid_request_error", None),
    "context": ("invalid_request_error", "context_length_exceeded"),
    "429": ("requests", "rate_limit_exceeded"),
    "500": ("server_error", None),
}
_ANTHROPIC_ERRORS = {
    "auth": "authentication_error",
    "invalid": "invalid_request_error",
    "context": "invalid_request_error",
    "429": "rate_limit_error",
    "500": "api_error",
}


def _error(flavor: str, status: int, kind: str, message: str, reason: str | None = None,
           retry_after_s: float | None = None) -> web.Response:
    if flavor in CLOUD:
        body, headers = cloud.error(flavor, status, message, reason, retry_after_s)
        return web.Response(status=status, body=body, content_type=_JSON, headers=headers)
    if flavor == ANTHROPIC:
        body = shapes.anthropic_error(_ANTHROPIC_ERRORS[kind], message)
    else:
        type_, code = _OPENAI_ERRORS[kind]
        param = "messages" if kind == "context" else None
        body = shapes.openai_error(message, type_, code, param)
    return web.Response(status=status, body=body, content_type=_JSON)


def _api_key(headers: Any, flavor: str) -> str:
    if flavor == ANTHROPIC:
        key = headers.get("x-api-key")
    elif flavor == AZURE:
        key = headers.get("api-key")
    else:
        key = None
    if not key:
        auth = headers.get("Authorization", "")
        key = auth[7:].strip() if auth[:7].lower() == "bearer " else ""
    return str(key or "")


def _max_tokens(value: Any, name: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise _Reject(400, "invalid", f"{name}: must be an integer >= 1")
    return value


class _Fake:
    """The state of one fake provider: config, seeded RNG, stats and the handlers."""

    def __init__(self, config: FakeConfig) -> None:
        self.config = config
        self.rng = random.Random(config.seed)
        self.ids = itertools.count(1)
        self.issuer = cloud.TokenIssuer()  # Vertex's token_uri: its tokens outlive a reset
        self.reset_stats()

    def reset_stats(self) -> None:
        self.total = 0
        self.in_flight = getattr(self, "in_flight", 0)
        self.peak = self.in_flight
        self.by_model: dict[str, int] = {}
        # what a real provider would bill, per model: replies sent [calls, tokens in, out]
        self.billed: dict[str, list[int]] = {}
        self.faults: dict[str, int] = {}
        # what a provider would bill: replies it answered, and their tokens; and requests
        # the client closed before their reply (a cancel), which it would not bill
        self.answered = self.tokens_in = self.tokens_out = 0
        self.disconnected = 0
        # the bodies received, newest last: tests prove what a setting changed in a request
        self.received: collections.deque[dict[str, Any]] = collections.deque(maxlen=RECEIVED_MAX)
        self.listed = 0  # model-list requests (connection tests, discovery): free ones
        self.minted_before = self.issuer.minted  # tokens minted since the reset count

    # --- API endpoints --------------------------------------------------------------------

    async def openai(self, request: web.Request) -> web.StreamResponse:
        return await self._serve(request, OPENAI, None)

    async def azure(self, request: web.Request) -> web.StreamResponse:
        return await self._serve(request, AZURE, request.match_info["deployment"])

    async def anthropic(self, request: web.Request) -> web.StreamResponse:
        return await self._serve(request, ANTHROPIC, None)

    async def gemini(self, request: web.Request) -> web.StreamResponse:
        return await self._serve(request, GEMINI, request.match_info["target"])

    async def vertex(self, request: web.Request) -> web.StreamResponse:
        return await self._serve(request, VERTEX, request.match_info["target"])

    async def bedrock(self, request: web.Request) -> web.StreamResponse:
        return await self._serve(request, BEDROCK, request.match_info["model"])

    async def token(self, request: web.Request) -> web.Response:
        """A service account's token_uri: a signed JWT assertion for an access token."""
        try:
            minted = self.issuer.mint(await request.post(), str(request.url),
                                      self.config.google_accounts, self.config.google_token_ttl_s)
        except cloud.Refused as refused:
            return web.json_response({"error": "invalid_grant",
                                      "error_description": refused.message}, status=400)
        return web.json_response(minted)

    async def cloud_models(self, request: web.Request) -> web.Response:
        """The model lists of Gemini (`/v1beta/models`), Vertex (publisher models, and a
        project's own: none) and Bedrock (`/foundation-models`), each behind its auth."""
        self.listed += 1
        path = request.path
        flavor = GEMINI if path.startswith("/v1beta/") else BEDROCK \
            if path == "/foundation-models" else VERTEX
        try:
            await self._authorise(request, flavor, await request.read())
        except _Reject as reject:
            return _error(flavor, reject.status, reject.kind, reject.message, reject.reason)
        if path.endswith("/locations/" + request.match_info.get("location", "") + "/models"):
            return web.json_response({"models": []})
        seen = dict.fromkeys(shapes.BASE_MODELS)
        seen.update((s.model, None) for s in self.config.scripts if s.model)
        return web.Response(body=cloud.models(flavor, list(seen)), content_type=_JSON)

    async def _authorise(self, request: web.Request, flavor: str, raw: bytes) -> None:
        try:
            if flavor == GEMINI:
                cloud.gemini_key(request.headers, request.query)
            elif flavor == VERTEX:
                self.issuer.check(request.headers)
            else:
                cloud.verify_sigv4(request.method, request.host, request.raw_path,
                                   request.headers, raw, self.config.aws_keys)
        except cloud.Refused as refused:
            raise _Reject.of(refused) from None

    async def models(self, request: web.Request) -> web.Response:
        self.listed += 1
        anthropic_style = "x-api-key" in request.headers or "anthropic-version" in request.headers
        flavor = ANTHROPIC if anthropic_style else OPENAI
        key = _api_key(request.headers, flavor)
        if not key or key == "bad-key":
            return _error(flavor, 401, "auth", "Incorrect API key provided.")
        seen = dict.fromkeys(shapes.BASE_MODELS)
        seen.update((s.model, None) for s in self.config.scripts if s.model)
        return web.Response(body=shapes.models_list(list(seen)), content_type=_JSON)

    async def _serve(
        self, request: web.Request, flavor: str, deployment: str | None
    ) -> web.StreamResponse:
        self.total += 1
        self.in_flight += 1
        if self.in_flight > self.peak:
            self.peak = self.in_flight
        try:
            return await self._answer(request, flavor, deployment)
        except asyncio.CancelledError:  # handler_cancellation: the client went away
            self.disconnected += 1
            raise
        finally:
            self.in_flight -= 1

    async def _answer(
        self, request: web.Request, flavor: str, deployment: str | None
    ) -> web.StreamResponse:
        config, rng = self.config, self.rng
        # the latency counts from here: reading the request is part of it, as at a provider
        arrived = asyncio.get_running_loop().time()
        latency_ms = config.latency_ms
        fault: str | None = None
        try:
            forced = request.headers.get("X-Fake-Fault")
            if forced is not None and forced not in _FORCEABLE:
                raise _Reject(400, "invalid", f"X-Fake-Fault must be one of {list(_FORCEABLE)}")
            raw_latency = request.headers.get("X-Fake-Latency-Ms")
            if raw_latency is not None:
                try:
                    latency_ms = float(raw_latency)
                except ValueError:
                    latency_ms = -1.0
                if not latency_ms >= 0:
                    raise _Reject(400, "invalid", "X-Fake-Latency-Ms must be a number >= 0")
            call: _Call | _Reject = await self._parse(request, flavor, deployment)
            fault = forced
            if fault is None and config.fault_rate > 0 and rng.random() < config.fault_rate:
                fault = rng.choice(config.faults)
            if fault is not None:
                self.faults[fault] = self.faults.get(fault, 0) + 1
        except _Reject as reject:
            call = reject
        if fault == "hang":
            delay = config.hang_s
        else:
            if config.jitter_ms > 0:
                latency_ms = max(0.0, latency_ms + rng.uniform(-config.jitter_ms, config.jitter_ms))
            delay = latency_ms / 1000.0
        delay -= asyncio.get_running_loop().time() - arrived
        if delay > 0:
            await asyncio.sleep(delay)

        if isinstance(call, _Reject):
            return _error(flavor, call.status, call.kind, call.message, call.reason)
        if fault == "429":
            if flavor in GOOGLE:  # Google's hint is in the body (RetryInfo), not a header
                return _error(flavor, 429, "429", "Resource has been exhausted (e.g. check "
                              "quota) (fake).", None, config.retry_after_s)
            response = _error(flavor, 429, "429", "Rate limit reached (fake). Please retry.")
            if flavor != BEDROCK:  # Bedrock's ThrottlingException gives no hint
                response.headers["Retry-After"] = f"{config.retry_after_s:g}"
            return response
        if fault in _STATUS_KINDS:
            assert fault is not None
            return _error(flavor, int(fault), _STATUS_KINDS[fault],
                          f"Forced {fault} (fake provider).")
        if fault == "safety":
            return self._safety(flavor, call)
        if fault == "500":
            return _error(flavor, 500, "500", "The server had an error (fake).")
        if fault == "reset":
            _reset(request)
            return web.Response(status=500)  # never sent: aiohttp sees the closed transport
        if fault == "malformed":
            return web.Response(body=_MALFORMED, content_type=_JSON)
        return await self._reply(request, flavor, call)

    def _safety(self, flavor: str, call: _Call) -> web.Response:
        """A reply the safety filter stopped, as Google and Bedrock send it."""
        n = next(self.ids)
        if flavor in GOOGLE:
            body = cloud.google_safety(f"fake{n:016x}", call.model, call.prompt_tokens)
        elif flavor == BEDROCK:
            body = cloud.bedrock_reply(call.model, "", "guardrail_intervened",
                                       call.prompt_tokens, 0, 1)
        else:
            return _error(flavor, 400, "invalid", "The safety fault is Google's and Bedrock's.")
        return web.Response(body=shapes.dumps(body), content_type=_JSON)

    async def _cloud_body(self, request: web.Request, flavor: str,
                          target: str) -> dict[str, Any]:
        """A Google or Bedrock request, authenticated, read into the OpenAI shape."""
        raw = await request.read()
        await self._authorise(request, flavor, raw)
        try:
            body = cloud.parse_json(raw)
            self.received.append(body)
            if flavor == BEDROCK:
                return cloud.bedrock_body(target, body)
            model, _, method = target.partition(":")
            if method not in ("generateContent", "streamGenerateContent"):
                raise cloud.Refused(404, f"Method {method!r} not found.")
            return cloud.google_body(model, body, method == "streamGenerateContent")
        except cloud.Refused as refused:
            raise _Reject(refused.status, "invalid", refused.message) from None

    async def _parse(self, request: web.Request, flavor: str, deployment: str | None) -> _Call:
        if flavor in CLOUD:
            assert deployment is not None
            return self._read(flavor, await self._cloud_body(request, flavor, deployment),
                              None)
        if flavor == AZURE and not request.query.get("api-version"):
            raise _Reject(
                400,
                "invalid",
                "The api-version query parameter (?api-version=) is required for all requests.",
            )
        key = _api_key(request.headers, flavor)
        if not key:
            raise _Reject(401, "auth", "You didn't provide an API key (fake provider).")
        if key == "bad-key":
            raise _Reject(401, "auth", "Incorrect API key provided: bad-key (fake provider).")
        try:
            body = json.loads(await request.read())
        except ValueError:
            raise _Reject(400, "invalid", "The request body is not valid JSON.") from None
        if not isinstance(body, dict):
            raise _Reject(400, "invalid", "The request body must be a JSON object.")
        self.received.append({**body, "model": deployment} if deployment is not None else body)
        return self._read(flavor, body, deployment)

    def _read(self, flavor: str, body: dict[str, Any], deployment: str | None) -> _Call:
        model = deployment if deployment is not None else body.get("model")
        if not isinstance(model, str) or not model:
            raise _Reject(400, "invalid", "model: Field required")
        self.by_model[model] = self.by_model.get(model, 0) + 1
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            raise _Reject(400, "invalid", "messages: must be a non-empty list")
        if flavor == ANTHROPIC:
            if body.get("max_tokens") is None:
                raise _Reject(400, "invalid", "max_tokens: Field required")
            max_tokens = _max_tokens(body["max_tokens"], "max_tokens")
            prompt_tokens, last_user = shapes.read_prompt(messages, body.get("system"))
        else:
            max_tokens = _max_tokens(body.get("max_completion_tokens"), "max_completion_tokens")
            if max_tokens is None:
                max_tokens = _max_tokens(body.get("max_tokens"), "max_tokens")
            prompt_tokens, last_user = shapes.read_prompt(messages)
        limit = shapes.context_limit(model)
        if prompt_tokens > limit:
            if flavor in CLOUD:
                msg = cloud.context_message(flavor, prompt_tokens, limit)
            elif flavor == ANTHROPIC:
                msg = f"prompt is too long: {prompt_tokens} tokens > {limit} maximum"
            else:
                msg = (
                    f"This model's maximum context length is {limit} tokens. However, your "
                    f"messages resulted in {prompt_tokens} tokens. Please reduce the length "
                    "of the messages."
                )
            raise _Reject(400, "context", msg)
        system = shapes.system_text(messages, body.get("system") if flavor == ANTHROPIC else None)
        reply = shapes.make_reply(
            model, last_user, self.config.scripts, messages, system, body, self.config.seed or 0
        )
        text, reply_tokens, cut = shapes.truncate(reply, max_tokens)
        options = body.get("stream_options")
        include_usage = isinstance(options, dict) and bool(options.get("include_usage"))
        return _Call(
            model, text, cut, prompt_tokens, reply_tokens, body.get("stream") is True, include_usage
        )

    async def _reply(self, request: web.Request, flavor: str, call: _Call) -> web.StreamResponse:
        n = next(self.ids)
        if not call.stream:  # a stream counts once it is all written
            self._answered(call)
        if flavor == BEDROCK:
            converse = cloud.bedrock_reply(call.model, call.text, "max_tokens" if call.cut
                                           else "end_turn", call.prompt_tokens,
                                           call.reply_tokens, int(self.config.latency_ms))
            return web.Response(body=shapes.dumps(converse), content_type=_JSON)
        if flavor in GOOGLE:
            id_, finish = f"fake{n:016x}", "MAX_TOKENS" if call.cut else "STOP"
            if not call.stream:
                generated = cloud.google_reply(id_, call.model, call.text, finish,
                                               call.prompt_tokens, call.reply_tokens)
                return web.Response(body=shapes.dumps(generated), content_type=_JSON)
            events = cloud.google_stream(id_, call.model, call.text, finish,
                                         call.prompt_tokens, call.reply_tokens)
        elif flavor == ANTHROPIC:
            id_ = f"msg_fake{n:016x}"
            if not call.stream:
                body = shapes.anthropic_message(
                    id_, call.model, call.text, call.cut, call.prompt_tokens, call.reply_tokens
                )
                return web.Response(body=body, content_type=_JSON)
            events = shapes.anthropic_stream(
                id_, call.model, call.text, call.cut, call.prompt_tokens, call.reply_tokens
            )
        else:
            id_ = f"chatcmpl-fake{n:016x}"
            created = int(time.time())
            if not call.stream:
                body = shapes.openai_completion(
                    id_,
                    created,
                    call.model,
                    call.text,
                    call.cut,
                    call.prompt_tokens,
                    call.reply_tokens,
                )
                return web.Response(body=body, content_type=_JSON)
            events = shapes.openai_stream(
                id_,
                created,
                call.model,
                call.text,
                call.cut,
                call.prompt_tokens,
                call.reply_tokens,
                call.include_usage,
            )
        response = web.StreamResponse(headers=_SSE_HEADERS)
        await response.prepare(request)
        for event in events:
            await response.write(event)
        await response.write_eof()
        self._answered(call)
        return response

    def _answered(self, call: _Call) -> None:
        billed = self.billed.get(call.model)
        if billed is None:
            billed = self.billed[call.model] = [0, 0, 0]
        billed[0] += 1
        billed[1] += call.prompt_tokens
        billed[2] += call.reply_tokens
        self.answered += 1
        self.tokens_in += call.prompt_tokens
        self.tokens_out += call.reply_tokens

    # --- control endpoints ----------------------------------------------------------------

    def stats(self) -> dict[str, Any]:
        return {
            "requests": dict(self.by_model),
            "billed": {m: {"calls": c, "tokens_in": i, "tokens_out": o}
                       for m, (c, i, o) in self.billed.items()},
            "total": self.total,
            "in_flight": self.in_flight,
            "peak_concurrency": self.peak,
            "faults": dict(self.faults),
            "answered": self.answered,
            "tokens_in": self.tokens_in,
            "tokens_out": self.tokens_out,
            "disconnected": self.disconnected,
            "listed": self.listed,
            "tokens_minted": self.issuer.minted - self.minted_before,
        }

    async def get_stats(self, request: web.Request) -> web.Response:
        return web.json_response(self.stats())

    async def get_requests(self, request: web.Request) -> web.Response:
        return web.json_response({"requests": list(self.received)})

    async def post_reset(self, request: web.Request) -> web.Response:
        self.reset_stats()
        return web.json_response(self.stats())

    async def get_config(self, request: web.Request) -> web.Response:
        return web.json_response(self.config.to_dict())

    async def post_config(self, request: web.Request) -> web.Response:
        try:
            data = json.loads(await request.read() or b"{}")
            self.config = self.config.updated(data)
        except (ValueError, TypeError) as exc:  # ConfigError is a ValueError
            return web.json_response({"error": str(exc)}, status=400)
        if "seed" in data:
            self.rng.seed(self.config.seed)
        return web.json_response(self.config.to_dict())

    async def health(self, request: web.Request) -> web.Response:
        return web.json_response({"ok": True})


def _reset(request: web.Request) -> None:
    """Abort the connection with a TCP RST (SO_LINGER 0), without sending a response."""
    transport = request.transport
    if transport is None:
        return
    sock = transport.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, _LINGER_RESET)
    transport.abort()


FAKE_KEY = web.AppKey("assay_fake", _Fake)


def create_app(config: FakeConfig | None = None) -> web.Application:
    """The aiohttp application of the fake provider."""
    fake = _Fake(config if config is not None else FakeConfig())
    app = web.Application(client_max_size=64 * 1024 * 1024)
    app[FAKE_KEY] = fake
    app.router.add_post("/v1/chat/completions", fake.openai)
    app.router.add_post("/openai/deployments/{deployment}/chat/completions", fake.azure)
    app.router.add_post("/v1/messages", fake.anthropic)
    app.router.add_get("/v1/models", fake.models)
    app.router.add_post("/v1beta/models/{target}", fake.gemini)
    app.router.add_get("/v1beta/models", fake.cloud_models)
    google = "/v1/projects/{project}/locations/{location}"
    app.router.add_post(google + "/publishers/google/models/{target}", fake.vertex)
    app.router.add_get(google + "/models", fake.cloud_models)
    app.router.add_get("/v1beta1/publishers/google/models", fake.cloud_models)
    app.router.add_post("/token", fake.token)
    app.router.add_post("/model/{model}/converse", fake.bedrock)
    app.router.add_get("/foundation-models", fake.cloud_models)
    app.router.add_get("/_fake/stats", fake.get_stats)
    app.router.add_get("/_fake/requests", fake.get_requests)
    app.router.add_post("/_fake/reset", fake.post_reset)
    app.router.add_get("/_fake/config", fake.get_config)
    app.router.add_post("/_fake/config", fake.post_config)
    app.router.add_get("/_fake/health", fake.health)
    return app
