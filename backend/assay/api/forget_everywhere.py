"""Every API process drops what it keeps (credentials, memberships, a stopped run's reads,
the project's lists: kept_reads.py) as soon as any one of them has served a write: the
writer publishes one message on Redis, and each serving process hears it on a thread of
its own.

A process that stops hearing (Redis unreachable, its connection cut) clears what it keeps
when it hears again, for it may have missed a message; until then its entries' own
lifetimes bound what it shows (ASSAY_AUTH_CACHE_S, ASSAY_READ_CACHE_S,
ASSAY_LIST_CACHE_S), as they do for writes made outside the API (the CLI)."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable

from redis import Redis, RedisError

from assay.redis_conn import connect
from assay.runtime import current
from assay.settings import Settings

log = logging.getLogger(__name__)
RETRY_S = 1.0  # between attempts to hear again
POLL_S = 1.0  # how often the thread looks up from the socket to see whether it should stop


def channel(settings: Settings) -> str:
    return f"{settings.redis_prefix}:forget"


def announce() -> None:
    """Tell every process that a write went through (the message names this one, for
    whoever watches the channel). A write that succeeded stays a success when Redis
    cannot be reached."""
    runtime = current()
    try:
        runtime.redis.publish(channel(runtime.settings), str(os.getpid()))
    except RedisError as exc:
        log.warning("could not tell the other API processes to forget what they keep: %s "
                    "(they follow within their ASSAY_*_CACHE_S)", exc)


class Listener(threading.Thread):
    """Calls `forget` on every write a process announces (its own too: a second clear
    costs a few reads), and whenever it starts or starts again to hear (what it missed
    meanwhile is unknown)."""

    def __init__(self, redis: Redis, name: str, forget: Callable[[], None]):
        super().__init__(name="assay-forget", daemon=True)
        self.redis = redis
        self.channel = name
        self.forget = forget
        self._stopping = threading.Event()
        self.hearing = threading.Event()  # subscribed (tests wait for it)

    def run(self) -> None:
        while not self._stopping.is_set():
            try:
                self._listen()
            except (RedisError, OSError) as exc:
                log.warning("not hearing other API processes' writes (%s); retrying", exc)
            self.hearing.clear()
            self._stopping.wait(RETRY_S)

    def _listen(self) -> None:
        pubsub = self.redis.pubsub()
        try:
            pubsub.subscribe(self.channel)
            while not self._stopping.is_set():
                message = pubsub.get_message(timeout=POLL_S)
                if message is None:
                    continue
                if message["type"] == "subscribe":
                    self.forget()
                    self.hearing.set()
                elif message["type"] == "message":
                    self.forget()
        finally:
            pubsub.close()

    def stop(self) -> None:
        self._stopping.set()
        self.join(POLL_S + 5)


def listen(forget: Callable[[], None]) -> Listener:
    """Start hearing other processes' writes (a serving process, once its app is made)."""
    settings = current().settings
    client = connect(settings, name=f"assay-forget-{os.getpid()}")
    listener = Listener(client, channel(settings), forget)
    listener.start()
    return listener
