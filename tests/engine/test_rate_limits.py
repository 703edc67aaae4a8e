"""A run on a credential with a requests-per-minute limit is paced by the Redis-shared
bucket: the burst goes at once, the rest at the refill rate."""

from __future__ import annotations

import time
from typing import Any

import pytest

from assay.providers import ratelimit
from assay.providers.fake import FakeProviderThread
from assay.providers.ratelimit import RedisRateLimiter
from assay.settings import Settings
from tests.engine.test_providers_engine import fake, outputs, run, setup, stats, the_run
from tests.factories import Factory

__all__ = ["fake"]  # the fixture, imported


def test_a_run_respects_the_credentials_rpm_limit(factory: Factory, settings: Settings,
                                                  fake: FakeProviderThread) -> None:
    # rpm 60: 60 calls at once, then one a second: 63 cells take at least ~3 s
    s = setup(factory, settings, fake, cases=63, config={"rpm_limit": 60})
    started = time.perf_counter()
    run_id = run(s, concurrency=20, cache=False)
    elapsed = time.perf_counter() - started
    rows = outputs(run_id)
    assert len(rows) == 63 and all(o.status == "succeeded" for o in rows)
    assert the_run(run_id).status == "completed"
    assert stats(fake)["total"] == 63
    assert elapsed >= 2.7, f"63 calls at rpm 60 took only {elapsed:.2f} s"
    assert elapsed < 20


def test_a_run_respects_the_credentials_tpm_limit(factory: Factory, settings: Settings,
                                                  fake: FakeProviderThread) -> None:
    # Each call takes its counted prompt + max_tokens and gets back what it did not use,
    # so the bucket supplies exactly the tokens used: 600 at once, then 10 a second.
    s = setup(factory, settings, fake, cases=39, config={"tpm_limit": 600},
              params={"temperature": 0, "max_tokens": 16})
    started = time.perf_counter()
    run_id = run(s, concurrency=5, cache=False)
    elapsed = time.perf_counter() - started
    rows = outputs(run_id)
    assert len(rows) == 39 and all(o.status == "succeeded" for o in rows)
    used = sum((o.tokens_in or 0) + (o.tokens_out or 0) for o in rows)
    assert used > 600, "the test needs more tokens than the burst"
    floor = (used - 600) / 10  # seconds the refill must have taken
    assert floor - 0.3 <= elapsed < floor + 15, (used, elapsed)


def test_an_unlimited_run_never_touches_the_limiter(factory: Factory, settings: Settings,
                                                    fake: FakeProviderThread,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[RedisRateLimiter] = []
    original = ratelimit.RedisRateLimiter.__init__

    def spy(self: RedisRateLimiter, *args: Any, **kw: Any) -> None:
        original(self, *args, **kw)
        built.append(self)

    monkeypatch.setattr(ratelimit.RedisRateLimiter, "__init__", spy)
    s = setup(factory, settings, fake, cases=30, config={"max_concurrency": 8})
    rows = outputs(run(s, concurrency=10, cache=False))
    assert len(rows) == 30 and all(o.status == "succeeded" for o in rows)
    assert built, "the shard built no limiter"
    assert all(lim.roundtrips == 0 and lim._conn is None for lim in built), \
        "an unlimited run asked Redis"
