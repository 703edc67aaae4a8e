"""The per-process cache behind credentials, memberships and kept reads."""

from __future__ import annotations

import time

from assay.core.ttl_cache import TTLCache


def test_an_entry_expires_after_its_ttl() -> None:
    cache = TTLCache[str](0.05)
    cache.put("a", "1")
    assert cache.get("a") == "1"
    time.sleep(0.06)
    assert cache.get("a") is None


def test_the_least_recently_read_goes_first_by_count_and_by_size() -> None:
    by_count = TTLCache[str](60, max_entries=2)
    by_count.put("a", "1")
    by_count.put("b", "2")
    assert by_count.get("a") == "1"  # read: b is now the oldest
    by_count.put("c", "3")
    assert (by_count.get("a"), by_count.get("b"), by_count.get("c")) == ("1", None, "3")
    by_size = TTLCache[bytes](60, max_size=10)
    by_size.put("a", b"x" * 6, 6)
    by_size.put("b", b"y" * 6, 6)
    assert by_size.get("a") is None and by_size.get("b") == b"y" * 6
    by_size.put("b", b"z" * 4, 4)  # replaced: its old size no longer counts
    by_size.put("c", b"w" * 6, 6)
    assert by_size.get("b") == b"z" * 4 and by_size.get("c") == b"w" * 6


def test_nothing_is_kept_with_no_ttl_or_past_the_size() -> None:
    off = TTLCache[str](0)
    off.put("a", "1")
    assert off.get("a") is None
    small = TTLCache[bytes](60, max_size=4)
    small.put("big", b"12345", 5)
    assert small.get("big") is None
    small.clear()
    assert small.get("big") is None


def test_no_ttl_keeps_until_evicted() -> None:
    forever = TTLCache[str](None, max_entries=1)
    forever.put("a", "1")
    time.sleep(0.01)
    assert forever.get("a") == "1"
    forever.put("b", "2")
    assert (forever.get("a"), forever.get("b")) == (None, "2")


def test_a_value_read_before_a_clear_is_not_kept_after_it() -> None:
    cache = TTLCache[str](60)
    since = cache.generation
    cache.put("a", "read in time", since=since)
    assert cache.get("a") == "read in time"
    since = cache.generation  # a read starts ...
    cache.clear()  # ... a write elsewhere clears ...
    cache.put("a", "read before the write", since=since)  # ... the read ends
    assert cache.get("a") is None
    cache.put("a", "read after the write", since=cache.generation)
    assert cache.get("a") == "read after the write"
