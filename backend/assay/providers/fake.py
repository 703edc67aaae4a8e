"""A fake LLM provider: an aiohttp server that speaks the OpenAI, Azure OpenAI and Anthropic
chat APIs, with configurable latency, seeded random faults and scripted replies.

Tests and the demo call it through Assay's real adapters; the run engine is benchmarked
through it, so the request path is kept cheap (no logging, no validation library).

    with FakeProviderThread(FakeConfig(latency_ms=0)) as fake:
        httpx.post(f"{fake.url}/v1/chat/completions", ...)

Endpoints: ``POST /v1/chat/completions`` (OpenAI), ``POST /openai/deployments/{name}/chat/
completions?api-version=...`` (Azure), ``POST /v1/messages`` (Anthropic), ``GET /v1/models``.
Per-request headers: ``X-Fake-Fault: 429|500|hang|reset|malformed`` forces a fault,
``X-Fake-Latency-Ms: N`` overrides the latency. Keys: any non-empty key but ``bad-key``.
Control: ``GET /_fake/stats``, ``GET /_fake/requests`` (the last bodies received),
``POST /_fake/reset``, ``GET|POST /_fake/config``,
``GET /_fake/health``. Run it with ``python -m assay.providers.fake --port 8900``.

The app is in ``fake_app.py``, reply and body shapes in ``fake_shapes.py``, the config in
``fake_config.py``; this module is the public API and the ways to run it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import threading

from aiohttp import web

from assay import aio
from assay.collections_policy import fewer_collections
from assay.providers.fake_app import create_app
from assay.providers.fake_config import FAULT_KINDS, ConfigError, FakeConfig, Script

__all__ = [
    "FAULT_KINDS",
    "ConfigError",
    "FakeConfig",
    "FakeProviderThread",
    "FakeServer",
    "Script",
    "create_app",
    "run_server",
    "start_in_background",
]


class FakeServer:
    """A fake provider running on the current event loop (see start_in_background)."""

    def __init__(self, app: web.Application, runner: web.AppRunner, host: str, port: int) -> None:
        self.app, self.runner, self.host, self.port = app, runner, host, port
        self.url = f"http://{host}:{port}"

    async def close(self) -> None:
        await self.runner.cleanup()


async def start_in_background(
    config: FakeConfig | None = None, host: str = "127.0.0.1", port: int = 0
) -> FakeServer:
    """Start serving on the running loop and return once listening (port 0 = any free port)."""
    app = create_app(config)
    runner = web.AppRunner(app, access_log=None, handler_cancellation=True, shutdown_timeout=1.0)
    await runner.setup()
    site = web.TCPSite(runner, host, port, backlog=2048)
    try:
        await site.start()
    except BaseException:
        await runner.cleanup()
        raise
    bound_port = int(runner.addresses[0][1])
    return FakeServer(app, runner, host, bound_port)


def run_server(host: str, port: int, config: FakeConfig | None = None) -> None:
    """Serve until SIGINT or SIGTERM (blocking)."""

    async def main() -> None:
        server = await start_in_background(config, host, port)
        print(f"fake provider listening on {server.url}", flush=True)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        try:
            await stop.wait()
        finally:
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(sig)
            await server.close()

    with fewer_collections():  # a bench's 2,000 calls/s, without the collector's pauses
        aio.run(main())


class FakeProviderThread:
    """The fake provider on its own event loop in a daemon thread, for synchronous code:

    with FakeProviderThread(FakeConfig(latency_ms=0)) as fake: ... fake.url ...
    """

    def __init__(
        self, config: FakeConfig | None = None, host: str = "127.0.0.1", port: int = 0
    ) -> None:
        self.config = config if config is not None else FakeConfig()
        self.host, self.port = host, port
        self._server: FakeServer | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("the fake provider is not started")
        return self._server.url

    @property
    def app(self) -> web.Application:
        if self._server is None:
            raise RuntimeError("the fake provider is not started")
        return self._server.app

    def start(self, timeout: float = 10.0) -> FakeProviderThread:
        """Start the thread and return once the server is listening."""
        if self._thread is not None:
            raise RuntimeError("already started")
        self._thread = threading.Thread(target=self._run, name="assay-fake-provider", daemon=True)
        self._thread.start()
        if not self._ready.wait(timeout):
            raise RuntimeError("the fake provider did not start in time")
        if self._error is not None:
            raise RuntimeError(f"the fake provider failed to start: {self._error}") from self._error
        return self

    def stop(self, timeout: float = 5.0) -> None:
        if self._loop is not None and self._stop is not None and not self._loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop has already closed
                self._loop.call_soon_threadsafe(self._stop.set)
        if self._thread is not None:
            self._thread.join(timeout)

    def __enter__(self) -> FakeProviderThread:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def _run(self) -> None:
        asyncio.run(self._main())

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        try:
            self._server = await start_in_background(self.config, self.host, self.port)
        except BaseException as exc:
            self._error = exc
            self._ready.set()
            return
        self.port = self._server.port
        self._ready.set()
        try:
            await self._stop.wait()
        finally:
            await self._server.close()


def main(argv: list[str] | None = None) -> None:
    """``python -m assay.providers.fake [--host H] [--port P]``; behaviour from ASSAY_FAKE_*."""
    parser = argparse.ArgumentParser(description="Run Assay's fake LLM provider.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8900)
    args = parser.parse_args(argv)
    run_server(args.host, args.port, FakeConfig.from_env())


if __name__ == "__main__":
    main()
