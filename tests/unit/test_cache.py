"""The response cache: content-addressed keys, the determinism rule, and the store (upserts
that concurrent workers cannot break, hit counts) on the test database."""

from __future__ import annotations

import threading

from flask import Flask
from sqlalchemy import select

from assay.core.llm.models import CachedResponse
from assay.extensions import db
from assay.providers import cache

MESSAGES = [{"role": "user", "content": "hi"}]


def key(**changes: object) -> str:
    args: dict[str, object] = {"kind": "openai", "base_url": "https://api.openai.com",
                               "model": "gpt-4o", "params": {"temperature": 0},
                               "messages": MESSAGES, "repeat": 0, "scope": 1}
    args.update(changes)
    return cache.cache_key(**args)  # type: ignore[arg-type]


def test_key_is_content_addressed() -> None:
    assert key() == key() and len(key()) == 64
    # canonical: key order and the URL's path, case and trailing slash do not matter
    assert key(params={"temperature": 0, "seed": 1}) == key(params={"seed": 1, "temperature": 0})
    assert key(base_url="https://API.openai.com/v1/") == key()
    for change in ({"kind": "azure_openai"}, {"base_url": "https://openrouter.ai"},
                   {"model": "gpt-4o-mini"}, {"params": {"temperature": 0, "max_tokens": 5}},
                   {"messages": [{"role": "user", "content": "hi!"}]}, {"repeat": 1},
                   {"base_url": "https://api.openai.com:8443"}, {"scope": 2}):
        assert key(**change) != key(), change


def test_only_deterministic_calls_are_cacheable() -> None:
    assert cache.is_deterministic({"temperature": 0})
    assert cache.is_deterministic({"temperature": 0.0, "top_p": 1})
    assert cache.is_deterministic({"temperature": 0.7, "seed": 42})
    assert not cache.is_deterministic({"temperature": 0.7})
    assert not cache.is_deterministic({})  # providers default to sampling
    assert not cache.is_deterministic({"temperature": False})
    assert not cache.is_deterministic({"seed": None, "temperature": 1})


def entry(k: str, text: str = "hello") -> cache.Entry:
    return cache.Entry(k, "openai", "gpt-4o", text, 5, 2, {"id": "x"})


def test_store_lookup_and_hits(app: Flask) -> None:
    first, second = key(), key(repeat=1)
    with db.factory() as session:
        cache.store(session, [entry(first), entry(second, "other")])
        session.commit()
    with db.factory() as session:
        cache.store(session, [entry(first, "replaced?")])  # already there: left as is
        found = cache.lookup(session, [first, second, key(repeat=2)])
        assert set(found) == {first, second}
        assert found[first] == cache.Hit(first, "hello", 5, 2, {"id": "x"})
        cache.count_hits(session, [first, first, second])
        session.commit()
    with db.factory() as session:
        hits = dict(session.execute(select(CachedResponse.key, CachedResponse.hits)).all())
        assert hits == {first: 2, second: 1}
        assert cache.lookup(session, []) == {}


def test_concurrent_workers_store_the_same_reply(app: Flask) -> None:
    shared = [key(repeat=i) for i in range(20)]
    errors: list[BaseException] = []
    barrier = threading.Barrier(4, timeout=10)

    def worker(n: int) -> None:
        try:
            with db.factory() as session:
                barrier.wait()
                cache.store(session, [entry(k, f"from worker {n}") for k in reversed(shared)])
                cache.count_hits(session, shared)
                session.commit()
        except BaseException as exc:  # the assertion below reports it
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert errors == []
    with db.factory() as session:
        rows = session.execute(select(CachedResponse.key, CachedResponse.hits)).all()
        assert sorted(k for k, _ in rows) == sorted(shared)
        assert {hits for _, hits in rows} == {4}  # every worker's hit counted, none lost
