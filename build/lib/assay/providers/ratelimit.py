"""Requests-per-minute and tokens-per-minute limits shared by every worker through Redis.

Two token buckets per (credential, model) key: requests and tokens. Each holds up to its
per-minute amount (so a quiet key may burst that much at once) and refills continuously at
amount / 60 per second. One Lua script per acquire refills both buckets by the time elapsed
on Redis's own clock (`TIME`: worker clocks never matter), then either takes the amounts
from both or takes nothing and answers how long to wait; the caller sleeps that long and
asks again. Within a process one caller per key asks at a time (the others queue behind it
in order), so a crowd of waiting calls does not poll Redis.

Redis being unreachable never fails a call: the limiter logs once, lets calls through
unlimited, and tries Redis again after RETRY_S. A restarted Redis has lost the script
cache: EVALSHA falls back to EVAL, which loads it again.

The LLM client knows none of this: it sees the `Limiter` protocol of client.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from assay.settings import Settings

# Redis is imported when a limited call first needs it: every shard builds a limiter, and
# `assay eval` runs without Redis
if TYPE_CHECKING:
    import redis.asyncio as aioredis

log = logging.getLogger(__name__)

WINDOW_S = 60  # the limits are per minute
TTL_MS = 2 * WINDOW_S * 1000  # an idle bucket is full after a minute: nothing left to keep
RETRY_S = 5.0  # after Redis failed, how long calls go unlimited before it is tried again
SOCKET_TIMEOUT_S = 2.0
MIN_WAIT_S = 0.005

# KEYS: the requests bucket, the tokens bucket.
# ARGV: requests capacity, requests wanted, tokens capacity, tokens wanted, TTL in ms.
# A capacity of 0 means that bucket is not limited. A bucket is a hash {l: level, t: µs},
# written with %.17g (Lua's tostring keeps 14 digits: too few for microseconds).
# Returns 0 when taken, else the microseconds to wait until both could be.
ACQUIRE_LUA = """
local now_t = redis.call('TIME')
local now = tonumber(now_t[1]) * 1000000 + tonumber(now_t[2])
local window = 60000000
local levels = {}
local wait = 0
for i = 1, 2 do
  local cap = tonumber(ARGV[2 * i - 1])
  local want = tonumber(ARGV[2 * i])
  if cap > 0 then
    if want > cap then want = cap end
    local state = redis.call('HMGET', KEYS[i], 'l', 't')
    local level = tonumber(state[1])
    local at = tonumber(state[2])
    if level == nil or at == nil then
      level = cap
    elseif now > at then
      level = math.min(cap, level + (now - at) * cap / window)
    end
    if level > cap then level = cap end
    levels[i] = level - want
    if level < want then
      local need = math.ceil((want - level) * window / cap)
      if need > wait then wait = need end
    end
  end
end
if wait > 0 then return wait end
for i = 1, 2 do
  if levels[i] ~= nil then
    redis.call('HSET', KEYS[i], 'l', string.format('%.17g', levels[i]),
               't', string.format('%.17g', now))
    redis.call('PEXPIRE', KEYS[i], ARGV[5])
  end
end
return 0
"""

# KEYS: the tokens bucket. ARGV: capacity, tokens given back, TTL in ms.
REFUND_LUA = """
local level = tonumber(redis.call('HGET', KEYS[1], 'l'))
if level == nil then return 0 end
local cap = tonumber(ARGV[1])
level = math.min(cap, level + tonumber(ARGV[2]))
redis.call('HSET', KEYS[1], 'l', string.format('%.17g', level))
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
"""


class _Script:
    """EVALSHA, falling back to EVAL (which caches the script again) after NOSCRIPT."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.sha = hashlib.sha1(source.encode()).hexdigest()

    async def __call__(self, conn: aioredis.Redis, keys: list[str], args: list[Any]) -> Any:
        from redis.exceptions import NoScriptError

        try:
            return await conn.evalsha(self.sha, len(keys), *keys, *args)
        except NoScriptError:
            return await conn.eval(self.source, len(keys), *keys, *args)


_ACQUIRE = _Script(ACQUIRE_LUA)
_REFUND = _Script(REFUND_LUA)


class RedisRateLimiter:
    """One per event loop (redis.asyncio connections belong to the loop that made them).

    `url` is a Redis URL or a callable returning one, resolved on first use, so building a
    limiter that is never consulted connects to nothing."""

    def __init__(self, url: str | Callable[[], str], prefix: str = "assay") -> None:
        self._url = url
        self.prefix = prefix
        self._conn: aioredis.Redis | None = None
        self._down_until = 0.0  # monotonic: before it, calls pass unlimited
        self._warned = False
        self._locks: dict[str, asyncio.Lock] = {}
        self.roundtrips = 0  # for tests and the bench

    # --- plumbing -----------------------------------------------------------------------

    def _redis(self) -> aioredis.Redis:
        if self._conn is None:
            import redis.asyncio as aioredis

            url = self._url() if callable(self._url) else self._url
            self._conn = aioredis.Redis.from_url(
                url, socket_timeout=SOCKET_TIMEOUT_S, socket_connect_timeout=SOCKET_TIMEOUT_S)
        return self._conn

    def keys(self, key: str) -> list[str]:
        base = f"{self.prefix}:ratelimit:{key}"
        return [f"{base}:requests", f"{base}:tokens"]

    def _available(self) -> bool:
        return time.monotonic() >= self._down_until

    def _failed(self, exc: BaseException) -> None:
        self._down_until = time.monotonic() + RETRY_S
        if not self._warned:
            self._warned = True
            log.warning("rate limits off: Redis unreachable (%s: %s); calls go unlimited "
                        "and Redis is tried again every %g s", type(exc).__name__, exc,
                        RETRY_S)

    def _recovered(self) -> None:
        if self._warned:
            self._warned = False
            log.warning("rate limits on again: Redis answers")

    async def _run(self, script: _Script, keys: list[str], args: list[Any]) -> Any:
        """The script's answer, or None when Redis failed (calls then pass unlimited)."""
        if not self._available():
            return None
        self.roundtrips += 1
        from redis.exceptions import RedisError

        try:
            answer = await script(self._redis(), keys, args)
        except (RedisError, OSError) as exc:
            self._failed(exc)
            return None
        self._recovered()
        return answer

    async def aclose(self) -> None:
        if self._conn is not None:
            from redis.exceptions import RedisError

            with contextlib.suppress(RedisError, OSError):
                await self._conn.aclose()  # type: ignore[attr-defined]  # stubs: redis 4
            self._conn = None

    # --- the protocol -------------------------------------------------------------------

    async def acquire(self, key: str, rpm: int | None, tpm: int | None, requests: int = 1,
                      tokens: int = 0) -> float:
        """Wait until `requests` and `tokens` fit under the per-minute limits of `key`,
        then take them. Returns the seconds waited. Never raises for Redis."""
        if not rpm and not tpm:
            return 0.0
        args = [int(rpm or 0), requests if rpm else 0, int(tpm or 0), tokens if tpm else 0,
                TTL_MS]
        lock = self._locks.get(key)
        if lock is None:
            lock = self._locks[key] = asyncio.Lock()
        started = time.monotonic()
        async with lock:
            while True:
                wait_us = await self._run(_ACQUIRE, self.keys(key), args)
                if not wait_us:  # taken, or Redis down
                    return time.monotonic() - started
                await asyncio.sleep(max(MIN_WAIT_S, int(wait_us) / 1e6))

    async def refund(self, key: str, tpm: int | None, tokens: int) -> None:
        """Give back tokens taken but not used (the reply was shorter than max_tokens)."""
        if tpm and tokens > 0:
            await self._run(_REFUND, self.keys(key)[1:], [int(tpm), int(tokens), TTL_MS])


def from_settings(settings: Settings) -> RedisRateLimiter:
    """The limiter of this deployment's Redis: REDIS_URL, else the embedded server (started
    or reached only when a limited call first needs it)."""
    from assay.redis_conn import embedded_url

    def url() -> str:
        return str(settings.redis_url or embedded_url(settings))

    return RedisRateLimiter(url, settings.redis_prefix)
