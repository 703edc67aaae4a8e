"""The event loop Assay's async work runs on: uvloop, libuv's loop in C.

The run engine keeps hundreds of calls in flight on one loop, and on a small machine that
loop is what limits a run: uvloop's sockets, timers and callbacks cost a fraction of the
standard loop's (`make bench`, README "Run throughput")."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

import uvloop

T = TypeVar("T")


def run(main: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(main)` on a new uvloop loop."""
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(main)
