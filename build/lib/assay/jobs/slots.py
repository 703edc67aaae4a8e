"""Call slots shared through Redis: a run's `concurrency` and a credential's ceiling hold
across every shard and worker, not per shard.

A pool (a run, or a credential with a ceiling) is a counting semaphore of `limit` slots kept
in three Redis keys: each holder's slots (a hash), what each holder would like to hold (a
hash), and each holder's lease expiry (a sorted set, scored by Redis's own clock in ms). A
holder is a shard. One Lua script per round trip, atomic, for every pool the shard uses at
once: it drops holders whose lease ran out (a SIGKILLed worker's slots come back after its
lease), renews the caller's lease, and sets the caller's holding to what it asks, within
the limit. Slots are asked for and given back in batches: a shard keeps the slot of a call
that ended for its next cell, so a busy shard makes a round trip now and then, not per call.

Fair shares: several shards of one run on several workers must all get slots, or one
worker's CPU carries the run alone. Each pool's share is limit / holders that want slots;
while some holder has less than min(its want, the share) it is "starved", and the others
grow no further than the share and give back what they hold above it as their calls end.

Redis being unreachable does not stop a run (RQ lives there too, so it is rare): the shard
then runs up to the limits on its own, as if it were alone, and logs it.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import redis

log = logging.getLogger(__name__)

# KEYS: per pool, its held hash, want hash and lease sorted set.
# ARGV: owner, lease in ms, then per pool its want and its limit.
# Returns per pool: slots now held by the owner, the fair share, 1 if another holder starves.
SYNC_LUA = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local owner, lease = ARGV[1], tonumber(ARGV[2])
local out = {}
for p = 0, #KEYS / 3 - 1 do
  local kheld, kwant, klease = KEYS[3 * p + 1], KEYS[3 * p + 2], KEYS[3 * p + 3]
  local want, limit = tonumber(ARGV[3 + 2 * p]), tonumber(ARGV[4 + 2 * p])
  local dead = redis.call('ZRANGEBYSCORE', klease, '-inf', now)
  for _, gone in ipairs(dead) do
    redis.call('HDEL', kheld, gone)
    redis.call('HDEL', kwant, gone)
  end
  redis.call('ZREMRANGEBYSCORE', klease, '-inf', now)
  local helds, wants = {}, {}
  local h = redis.call('HGETALL', kheld)
  for i = 1, #h, 2 do helds[h[i]] = tonumber(h[i + 1]) end
  local w = redis.call('HGETALL', kwant)
  for i = 1, #w, 2 do wants[w[i]] = tonumber(w[i + 1]) end
  local held = helds[owner] or 0
  local others, wanting = 0, 0
  for o, n in pairs(helds) do
    if o ~= owner then others = others + n end
  end
  for o, n in pairs(wants) do
    if o ~= owner and n > 0 then wanting = wanting + 1 end
  end
  if want > 0 then wanting = wanting + 1 end
  local share = math.max(1, math.ceil(limit / math.max(wanting, 1)))
  local starved = 0
  for o, n in pairs(wants) do
    if o ~= owner and (helds[o] or 0) < math.min(n, share) then starved = 1 end
  end
  local new = want
  if want > held then
    local grow = math.min(want - held, limit - others - held)
    if starved == 1 then grow = math.min(grow, share - held) end
    new = held + math.max(grow, 0)
  end
  if new <= 0 and want <= 0 then
    redis.call('HDEL', kheld, owner)
    redis.call('HDEL', kwant, owner)
    redis.call('ZREM', klease, owner)
    new = 0
  else
    redis.call('HSET', kheld, owner, new)
    redis.call('HSET', kwant, owner, want)
    redis.call('ZADD', klease, now + lease, owner)
    for _, k in ipairs({kheld, kwant, klease}) do redis.call('PEXPIRE', k, 2 * lease) end
  end
  table.insert(out, new)
  table.insert(out, share)
  table.insert(out, starved)
end
return out
"""

POLL_S = 0.05  # a pool that gave less than asked is asked again after this
RELEASE_S = 0.1  # spare slots nobody waits for are given back after this (batched)


def run_pool(run_id: int) -> str:
    return f"run:{run_id}"


def credential_pool(credential_id: int) -> str:
    return f"credential:{credential_id}"


@dataclass
class Pool:
    """One pool as this shard sees it. `used`: cells holding a slot (in flight, or their
    result not yet journaled); `waiting`: claimed cells that need a slot of it."""

    name: str
    limit: int
    held: int = 0
    used: int = 0
    waiting: int = 0
    share: int = 0
    starved: bool = False  # another holder has less than its share: give back above it
    short: bool = False  # the last round trip gave less than asked

    def cap(self) -> int:
        return min(self.held, self.share) if self.starved else self.held

    def free(self) -> int:
        return self.cap() - self.used

    def want(self) -> int:
        demand = min(self.limit, self.used + self.waiting)
        if self.starved:
            demand = min(demand, self.share)
        return max(self.used, demand)


class Slots:
    """The pools of one shard (`owner`), synchronised with Redis in one round trip."""

    def __init__(self, conn: redis.Redis, prefix: str, owner: str, lease_s: float) -> None:
        self.conn, self.prefix, self.owner = conn, prefix, owner
        self.lease_ms = max(1, int(lease_s * 1000))
        self.script = conn.register_script(SYNC_LUA)
        self.roundtrips = 0  # for tests and the bench
        self.degraded = False

    def keys(self, name: str) -> list[str]:
        base = f"{self.prefix}:slots:{name}"
        return [f"{base}:held", f"{base}:want", f"{base}:lease"]

    def sync(self, pools: Sequence[Pool], wants: Sequence[int]) -> list[tuple[int, int, bool]]:
        """Ask Redis for `wants` (one per pool); (held, share, starved) per pool. Redis
        unreachable: each pool is granted what was asked, up to its limit (the shard runs
        as if alone)."""
        if not pools:
            return []
        keys = [k for pool in pools for k in self.keys(pool.name)]
        args: list[int | str] = [self.owner, self.lease_ms]
        for pool, want in zip(pools, wants, strict=True):
            args += [max(0, want), pool.limit]
        self.roundtrips += 1
        import redis  # here, not at import: a shard alone (LocalSlots) runs without Redis

        try:
            raw = self.script(keys=keys, args=args)
        except redis.RedisError as exc:
            if not self.degraded:
                log.warning("call slots not shared (Redis: %s): this shard keeps to the "
                            "limits on its own", exc)
            self.degraded = True
            return [(min(max(0, w), p.limit), p.limit, False) for p, w in zip(pools, wants,
                                                                              strict=True)]
        self.degraded = False
        return [(int(raw[i]), int(raw[i + 1]), bool(int(raw[i + 2])))
                for i in range(0, len(raw), 3)]


class LocalSlots(Slots):
    """The pools of a shard alone in its process (`assay eval` locally): no other holder can
    want a slot, so each pool grants what is asked up to its limit, with no Redis."""

    def __init__(self) -> None:
        self.owner, self.prefix = "", ""
        self.lease_ms = 60_000  # nothing expires: a renewal is only a round trip less often
        self.roundtrips = 0
        self.degraded = False

    def sync(self, pools: Sequence[Pool], wants: Sequence[int]) -> list[tuple[int, int, bool]]:
        self.roundtrips += 1
        return [(min(max(0, w), p.limit), p.limit, False)
                for p, w in zip(pools, wants, strict=True)]


class Holder:
    """What a shard holds across its pools, and when to talk to Redis about it."""

    def __init__(self, slots: Slots, run_pool_name: str, limit: int) -> None:
        self.slots = slots
        self.run = Pool(run_pool_name, limit, share=limit)
        self.pools: dict[str, Pool] = {run_pool_name: self.run}
        self.asked_at = -math.inf  # monotonic time of the last round trip
        self.renew_s = slots.lease_ms / 3000

    def pool(self, name: str, limit: int) -> Pool:
        found = self.pools.get(name)
        if found is None:
            found = self.pools[name] = Pool(name, limit, share=limit)
        else:
            found.limit = limit  # a ceiling edited while the run goes: the latest claim's
        return found

    def due(self, now: float) -> float:
        """Seconds until a round trip is worth making (0: now). Wanting more asks at once
        (again after POLL_S when refused); spare slots go back at once to a starved holder,
        else after RELEASE_S; a holder looks every RELEASE_S whether another one starves;
        and the lease is renewed every third of it."""
        waited = now - self.asked_at
        later = self.renew_s - waited
        for pool in self.pools.values():
            want = pool.want()
            if want > pool.held:
                later = min(later, POLL_S - waited if pool.short else 0.0)
            elif want < pool.held and pool.starved:
                later = 0.0
            elif pool.held:
                later = min(later, RELEASE_S - waited)
        return max(0.0, later)

    def request(self) -> tuple[list[Pool], list[int]]:
        """What to ask Redis for. Slots given back stop counting here and now: while the
        answer is on its way, no cell may start on a slot Redis may already have given to
        another holder."""
        pools = list(self.pools.values())
        wants = [p.want() for p in pools]
        for pool, want in zip(pools, wants, strict=True):
            pool.held = min(pool.held, want)
        return pools, wants

    def apply(self, pools: Sequence[Pool], wants: Sequence[int],
              answers: Sequence[tuple[int, int, bool]], now: float) -> None:
        self.asked_at = now
        for pool, want, (held, share, starved) in zip(pools, wants, answers, strict=True):
            pool.held, pool.share, pool.starved = held, share, starved
            pool.short = held < want

    def release_all(self) -> None:
        """Give every slot back and stop asking (the shard ends); if this fails, the lease
        expires anyway."""
        pools = list(self.pools.values())
        self.slots.sync(pools, [0] * len(pools))
        for pool in pools:
            pool.held = 0
