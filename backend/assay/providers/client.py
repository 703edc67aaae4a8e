"""The one wrapper every LLM call goes through: timeout, classified errors, retries.

Retries only transient errors, with exponential backoff and full jitter that never
undercuts a provider's Retry-After. Transport-level retries stay off: one retry layer.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from dataclasses import dataclass

import httpx
from httpx_aiohttp import AiohttpTransport

from assay.providers import openai
from assay.providers.base import ChatRequest, ChatResponse, ProviderError, classify_status


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 3
    base_s: float = 0.25
    cap_s: float = 8.0

    def delay(self, attempt: int, retry_after: float | None) -> float:
        jittered = random.uniform(0, min(self.cap_s, self.base_s * 2 ** attempt))
        return max(jittered, retry_after or 0.0)


@dataclass(frozen=True)
class CallResult:
    response: ChatResponse | None
    error: ProviderError | None
    latency_ms: int
    attempts: int


def _retry_after(headers: httpx.Headers) -> float | None:
    try:
        return float(headers["retry-after"])
    except (KeyError, ValueError):
        return None


class LLMClient:
    def __init__(self, timeout_s: float = 60.0, retry: RetryPolicy | None = None,
                 max_connections: int = 200):
        limits = httpx.Limits(max_connections=max_connections,
                              max_keepalive_connections=max_connections)
        # aiohttp underneath: httpx's own pool is CPU-bound well below 200 calls in flight
        self._http = httpx.AsyncClient(timeout=timeout_s, limits=limits,
                                       transport=AiohttpTransport(limits=limits))
        self.retry = retry or RetryPolicy()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def _once(self, base_url: str, request: ChatRequest, api_key: str) -> ChatResponse:
        try:
            reply = await self._http.post(base_url.rstrip("/") + openai.PATH,
                                          json=openai.build(request),
                                          headers={"Authorization": f"Bearer {api_key}"})
        except httpx.TimeoutException as exc:
            raise ProviderError("timeout", f"no answer in time ({type(exc).__name__})") from exc
        except httpx.TransportError as exc:
            raise ProviderError("network", f"{type(exc).__name__}: {exc}") from exc
        if reply.status_code >= 400:
            raise ProviderError(classify_status(reply.status_code, reply.text),
                                f"HTTP {reply.status_code}: {reply.text[:300]}",
                                _retry_after(reply.headers), reply.status_code)
        try:
            body = reply.json()
        except json.JSONDecodeError as exc:
            raise ProviderError("malformed_response", f"invalid JSON: {exc}") from exc
        return openai.parse(body)

    async def chat(self, base_url: str, request: ChatRequest, api_key: str = "assay") -> CallResult:
        started = time.perf_counter()
        attempt = 0
        while True:
            attempt += 1
            try:
                response = await self._once(base_url, request, api_key)
                return CallResult(response, None, _ms(started), attempt)
            except ProviderError as error:
                if not error.transient or attempt >= self.retry.attempts:
                    return CallResult(None, error, _ms(started), attempt)
                await asyncio.sleep(self.retry.delay(attempt, error.retry_after))


def _ms(started: float) -> int:
    return int((time.perf_counter() - started) * 1000)
