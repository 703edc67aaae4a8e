"""The Redis-shared rate limits: one bucket honoured across processes, the tokens bucket,
waits computed on Redis's clock, fail-open when Redis is down or restarting, and the
client consulting the limiter before every attempt, and never for an unlimited endpoint."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import shutil
import socket
import subprocess
import sys
import textwrap
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis

from assay.providers import ratelimit
from assay.providers.base import ChatRequest, Endpoint
from assay.providers.client import LLMClient, RetryPolicy
from assay.providers.fake import FakeConfig, FakeProviderThread
from assay.providers.ratelimit import RedisRateLimiter, _Script

REDIS_URL = os.environ.get("ASSAY_TEST_REDIS_URL", "redis://127.0.0.1:6379/13")
REQUEST = ChatRequest("fake-fast", [{"role": "user", "content": "hi"}], {"max_tokens": 5})


@pytest.fixture
def prefix() -> Iterator[str]:
    name = f"assay-test-rl-{uuid.uuid4().hex[:8]}"
    yield name
    conn = redis.Redis.from_url(REDIS_URL)
    keys = list(conn.scan_iter(f"{name}:*"))
    if keys:
        conn.delete(*keys)


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeProviderThread]:
    with FakeProviderThread(FakeConfig(latency_ms=0, retry_after_s=0, seed=3)) as server:
        yield server


def acquire_times(limiter: RedisRateLimiter, key: str, n: int, **kw: Any) -> list[float]:
    async def go() -> list[float]:
        try:
            return [await limiter.acquire(key, **kw) for _ in range(n)]
        finally:
            await limiter.aclose()

    return asyncio.run(go())


WORKER = textwrap.dedent("""
    import asyncio, sys, time
    from assay.providers.ratelimit import RedisRateLimiter

    url, prefix, span = sys.argv[1], sys.argv[2], float(sys.argv[3])

    async def main():
        limiter = RedisRateLimiter(url, prefix)
        await limiter.acquire("warm-up", rpm=1000, tpm=None)  # connected, script loaded
        asked = limiter.roundtrips
        print("ready", flush=True)
        start = float(sys.stdin.readline())  # once every process is ready
        await asyncio.sleep(max(0.0, start - time.time()))
        taken = 0
        while True:
            await limiter.acquire("cred:model", rpm=120, tpm=None)
            if time.time() >= start + span:
                break
            taken += 1
        await limiter.aclose()
        print(taken, limiter.roundtrips - asked)

    asyncio.run(main())
""")


def test_two_processes_share_one_bucket(prefix: str) -> None:
    """rpm 120: a burst of 120, then 2 a second, whoever asks: over 3 s at most 126."""
    span = 3.0
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    procs = [subprocess.Popen([sys.executable, "-c", WORKER, REDIS_URL, prefix, str(span)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
             for _ in range(2)]
    # both start together once both are up (a loaded machine can take seconds to start one)
    assert all(p.stdout is not None and p.stdout.readline() == "ready\n" for p in procs)
    start = time.time() + 0.5
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write(f"{start}\n")
        proc.stdin.flush()
    answers = [p.communicate(timeout=30)[0].split() for p in procs]
    assert all(p.returncode == 0 for p in procs)
    counts, asked = [int(a[0]) for a in answers], [int(a[1]) for a in answers]
    total = sum(counts)
    assert total <= 120 + 2 * 3 + 1, counts  # the limit, whichever process asked
    assert total >= 110, counts  # and not much less (slack for a loaded machine)
    # both asked all along, so what one got the other did not: which of them wins a token
    # is a race (on a loaded machine one can miss the whole burst and every refill)
    assert min(asked) > 2, (counts, asked)


def test_tokens_bucket_waits_for_the_tokens(prefix: str) -> None:
    """tpm 6000 refills 100 tokens a second: after the whole minute's worth, 100 more
    tokens wait about a second; the request count is not limited."""
    limiter = RedisRateLimiter(REDIS_URL, prefix)
    waits = acquire_times(limiter, "c:m", 1, rpm=None, tpm=6000, tokens=6000)
    waits += acquire_times(limiter, "c:m", 1, rpm=None, tpm=6000, tokens=100)
    assert waits[0] < 0.2
    assert 0.85 <= waits[1] <= 1.5, waits
    assert limiter.roundtrips >= 3  # one refused (with its wait), one granted


def test_a_request_larger_than_the_limit_waits_for_a_full_bucket(prefix: str) -> None:
    """More tokens than a minute's worth is clamped to it: it goes on a full bucket,
    never waits forever, and leaves the bucket empty, not in debt."""
    limiter = RedisRateLimiter(REDIS_URL, prefix)
    waits = acquire_times(limiter, "c:m", 1, rpm=None, tpm=60_000, tokens=10**6)
    assert waits[0] < 0.2
    conn = redis.Redis.from_url(REDIS_URL)
    assert 0 <= float(conn.hget(limiter.keys("c:m")[1], "l") or -1) < 100

    async def again() -> Any:
        answer = await limiter._run(ratelimit._ACQUIRE, limiter.keys("c:m"),
                                    [0, 0, 60_000, 10**6, ratelimit.TTL_MS])
        await limiter.aclose()
        return answer

    assert 59e6 <= int(asyncio.run(again())) <= 60e6  # a full refill, then it goes


def test_both_buckets_or_neither(prefix: str) -> None:
    """A refused call takes nothing: the request bucket keeps its level when tokens lack."""
    limiter = RedisRateLimiter(REDIS_URL, prefix)
    conn = redis.Redis.from_url(REDIS_URL)
    acquire_times(limiter, "c:m", 1, rpm=60, tpm=600, tokens=600)
    requests_key, _ = limiter.keys("c:m")
    level_after_first = float(conn.hget(requests_key, "l") or 0)
    assert 58.9 <= level_after_first <= 59.1

    async def refused() -> Any:
        answer = await limiter._run(ratelimit._ACQUIRE, limiter.keys("c:m"),
                                    [60, 1, 600, 300, ratelimit.TTL_MS])
        await limiter.aclose()
        return answer

    wait_us = asyncio.run(refused())
    assert 25e6 <= int(wait_us) <= 30e6  # 300 tokens at 10 a second
    assert float(conn.hget(requests_key, "l") or 0) == level_after_first
    assert 0 < conn.pttl(requests_key) <= ratelimit.TTL_MS


def test_the_wait_is_computed_on_redis_time(prefix: str,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """The script reads TIME itself: the bucket's stamp against Redis's clock decides, the
    worker's clock (shifted by an hour here) plays no part."""
    conn = redis.Redis.from_url(REDIS_URL)
    limiter = RedisRateLimiter(REDIS_URL, prefix)
    key = limiter.keys("c:m")[0]
    real_time = time.time
    monkeypatch.setattr(time, "time", lambda: real_time() + 3600)

    def wait_when_emptied(ago_s: float) -> float:
        seconds, micros = conn.time()
        stamp = seconds * 1_000_000 + micros - int(ago_s * 1e6)
        conn.hset(key, mapping={"l": "0", "t": str(stamp)})

        async def ask() -> Any:
            answer = await limiter._run(ratelimit._ACQUIRE, limiter.keys("c:m"),
                                        [60, 1, 0, 0, ratelimit.TTL_MS])
            await limiter.aclose()
            return answer

        return int(asyncio.run(ask())) / 1e6

    assert 0.95 <= wait_when_emptied(0) <= 1.0  # 1 request a second, none left
    assert 0.45 <= wait_when_emptied(0.5) <= 0.5  # half of it refilled already
    assert wait_when_emptied(1.5) == 0  # refilled: taken


def test_evalsha_falls_back_to_eval(prefix: str) -> None:
    """A Redis that lost its script cache (a restart) gets the script again."""
    fresh = _Script(f"-- {uuid.uuid4().hex}\nreturn 7")
    conn = redis.asyncio.Redis.from_url(REDIS_URL)

    async def twice() -> list[Any]:
        try:
            return [await fresh(conn, [], []), await fresh(conn, [], [])]
        finally:
            await conn.aclose()

    assert asyncio.run(twice()) == [7, 7]


def test_redis_down_fails_open_and_warns_once(caplog: pytest.LogCaptureFixture) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed once the block ends
    limiter = RedisRateLimiter(f"redis://127.0.0.1:{port}/0", "x")
    caplog.set_level(logging.WARNING, "assay.providers.ratelimit")
    started = time.perf_counter()
    waits = acquire_times(limiter, "c:m", 50, rpm=1, tpm=None)
    assert time.perf_counter() - started < 1.0 and max(waits) < 0.5
    assert limiter.roundtrips == 1, "Redis is not asked again before RETRY_S"
    assert [r.message for r in caplog.records].count(caplog.records[0].message) == 1
    assert "rate limits off" in caplog.records[0].message


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start_redis(port: int, folder: Path) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen([shutil.which("redis-server") or "redis-server", "--port",
                             str(port), "--bind", "127.0.0.1", "--save", "",
                             "--appendonly", "no", "--dir", str(folder)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while True:
        try:
            redis.Redis(port=port).ping()
            return proc
        except redis.ConnectionError:
            assert time.monotonic() < deadline, "redis-server did not start"
            time.sleep(0.05)


@pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs redis-server")
def test_a_redis_restart_is_survived(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                     caplog: pytest.LogCaptureFixture) -> None:
    """Calls go through unlimited while Redis is away; limits resume when it is back."""
    monkeypatch.setattr(ratelimit, "RETRY_S", 0.2)
    caplog.set_level(logging.WARNING, "assay.providers.ratelimit")
    port = _free_port()
    server = _start_redis(port, tmp_path)
    limiter = RedisRateLimiter(f"redis://127.0.0.1:{port}/0", "x")

    async def scenario() -> tuple[float, float, float]:
        nonlocal server
        try:
            for _ in range(60):  # the whole burst
                await limiter.acquire("k", rpm=60, tpm=None)
            server.terminate()
            server.wait(10)
            t0 = time.perf_counter()
            for _ in range(20):  # down: unlimited
                await limiter.acquire("k", rpm=60, tpm=None)
            down = time.perf_counter() - t0
            server = _start_redis(port, tmp_path)  # empty: no script, no buckets
            await asyncio.sleep(0.25)
            t0 = time.perf_counter()
            for _ in range(60):
                await limiter.acquire("k", rpm=60, tpm=None)
            refilled = time.perf_counter() - t0
            t0 = time.perf_counter()
            await limiter.acquire("k", rpm=60, tpm=None)
            return down, refilled, time.perf_counter() - t0
        finally:
            await limiter.aclose()
            server.terminate()
            server.wait(10)

    down, refilled, limited = asyncio.run(scenario())
    assert down < 0.5
    assert refilled < 1.0
    assert 0.7 <= limited <= 1.5, "limits did not resume after the restart"
    messages = [r.message for r in caplog.records]
    assert any("rate limits off" in m for m in messages)
    assert any("rate limits on again" in m for m in messages)


# --- the client's hook ---------------------------------------------------------------------


class Recorder:
    def __init__(self) -> None:
        self.calls: list[tuple[str, Any, ...]] = []

    async def acquire(self, key: str, rpm: int | None, tpm: int | None, requests: int = 1,
                      tokens: int = 0) -> float:
        self.calls.append(("acquire", key, rpm, tpm, requests, tokens))
        return 0.0

    async def refund(self, key: str, tpm: int | None, tokens: int) -> None:
        self.calls.append(("refund", key, tpm, tokens))

    async def aclose(self) -> None:
        self.calls.append(("aclose",))


def _chat(endpoint: Endpoint, limiter: Any, n: int = 1) -> list[Any]:
    async def go() -> list[Any]:
        async with LLMClient(retry=RetryPolicy(attempts=3, base_s=0.001, cap_s=0.01),
                             limiter=limiter) as client:
            return [await client.chat(endpoint, REQUEST) for _ in range(n)]

    return asyncio.run(go())


def test_an_unlimited_endpoint_never_asks_the_limiter(fake: FakeProviderThread) -> None:
    recorder = Recorder()
    results = _chat(Endpoint("openai", fake.url, "k", {"max_concurrency": 4}, 1), recorder,
                    20)
    assert all(r.ok for r in results)
    assert recorder.calls == [("aclose",)]


def test_every_attempt_asks_the_limiter_and_unused_tokens_return(
        fake: FakeProviderThread) -> None:
    recorder = Recorder()
    endpoint = Endpoint("openai", fake.url, "k", {"rpm_limit": 60, "tpm_limit": 10_000,
                                                  "headers": {"X-Fake-Fault": "500"}}, 7)
    (failed,) = _chat(endpoint, recorder)
    assert not failed.ok and failed.attempts == 3
    acquires = [c for c in recorder.calls if c[0] == "acquire"]
    assert len(acquires) == 3, "a retry went out without asking the limiter"
    prompt = 8  # "hi" in OpenAI's chat framing (3 + 1 + 1 + 3)
    assert acquires[0] == ("acquire", "7:fake-fast", 60, 10_000, 1, prompt + 5)
    assert not [c for c in recorder.calls if c[0] == "refund"]  # failures keep their tokens

    recorder.calls.clear()
    ok_endpoint = Endpoint("openai", fake.url, "k", {"tpm_limit": 10_000}, 7)
    (ok,) = _chat(ok_endpoint, recorder)
    assert ok.ok and ok.response is not None
    used = (ok.response.tokens_in or 0) + (ok.response.tokens_out or 0)
    assert recorder.calls[0] == ("acquire", "7:fake-fast", None, 10_000, 1, prompt + 5)
    assert recorder.calls[1] == ("refund", "7:fake-fast", 10_000, prompt + 5 - used)


def test_the_client_with_a_real_limiter_spaces_its_calls(fake: FakeProviderThread,
                                                         prefix: str) -> None:
    """rpm 60: a burst of 60 goes at once, the next 2 calls a second apart."""
    limiter = RedisRateLimiter(REDIS_URL, prefix)
    endpoint = Endpoint("openai", fake.url, "k", {"rpm_limit": 60}, 99)
    httpx.post(f"{fake.url}/_fake/reset")
    started = time.perf_counter()
    results = _chat(endpoint, limiter, 62)
    elapsed = time.perf_counter() - started
    assert all(r.ok for r in results)
    assert 1.8 <= elapsed <= 4.0, elapsed
    assert json.loads(httpx.get(f"{fake.url}/_fake/stats").text)["total"] == 62
