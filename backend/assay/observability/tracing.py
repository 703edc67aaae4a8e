"""OpenTelemetry traces, on only when OTEL_EXPORTER_OTLP_ENDPOINT is set.

Off, this module imports nothing from OpenTelemetry and every function returns at once:
tracing costs nothing unless an operator asks for it. On (`pip install assay[otel]`), it
instruments Flask (a span per request), SQL (per statement, `_trace_sql`), Redis (per command)
and aiohttp (every outbound LLM call), exports over OTLP/HTTP (the exporter reads the
standard OTEL_* variables), and carries the trace context into the jobs a request
enqueues (in the job's meta, as W3C traceparent), so a run's spans join its request's trace.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

log = logging.getLogger(__name__)
_state: dict[str, Any] = {}


def enabled() -> bool:
    return bool(os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"))


def setup(service: str) -> bool:
    """Install the tracer provider and the instrumentations (once per process); before
    any engine or Redis client exists, so that SQLAlchemy's and Redis's get patched."""
    if not enabled() or "provider" in _state:
        return "provider" in _state
    try:
        from opentelemetry import trace
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.instrumentation.aiohttp_client import AioHttpClientInstrumentor
        from opentelemetry.instrumentation.redis import RedisInstrumentor
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError:
        log.warning("OTEL_EXPORTER_OTLP_ENDPOINT is set but OpenTelemetry is not installed "
                    "(pip install 'assay[otel]'): no traces")
        return False
    name = os.environ.get("OTEL_SERVICE_NAME") or service
    provider = TracerProvider(resource=Resource.create({"service.name": name}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    _trace_sql(trace)
    RedisInstrumentor().instrument()
    AioHttpClientInstrumentor().instrument()
    _state["provider"] = provider
    return True


def _trace_sql(trace: Any) -> None:
    """A span per SQL statement (its text: parameters are bound, so no values). Not
    opentelemetry-instrumentation-sqlalchemy: it refuses SQLAlchemy 2.1 and, told to skip
    that check, imports the asyncio extension, which needs greenlet."""
    from sqlalchemy import event
    from sqlalchemy.engine import Engine

    tracer = trace.get_tracer("assay.sql")

    @event.listens_for(Engine, "before_cursor_execute")
    def _before(conn: Any, _cursor: Any, statement: str, _params: Any, context: Any,
                _many: bool) -> None:
        verb = (statement.split(None, 1) or ["SQL"])[0].upper()
        context._assay_span = tracer.start_span(
            verb, kind=trace.SpanKind.CLIENT,
            attributes={"db.system": conn.dialect.name, "db.statement": statement[:2000]})

    @event.listens_for(Engine, "after_cursor_execute")
    def _after(_conn: Any, _cursor: Any, _statement: str, _params: Any, context: Any,
               _many: bool) -> None:
        span = getattr(context, "_assay_span", None)
        if span is not None:
            span.end()

    @event.listens_for(Engine, "handle_error")
    def _error(ctx: Any) -> None:
        span = getattr(ctx.execution_context, "_assay_span", None)
        if span is not None:
            span.record_exception(ctx.original_exception)
            span.set_status(trace.Status(trace.StatusCode.ERROR))
            span.end()


def instrument_app(app: Any) -> None:
    """A span per Flask request (after `setup`; a no-op when tracing is off)."""
    if "provider" not in _state and not setup("assay-api"):
        return
    from opentelemetry.instrumentation.flask import FlaskInstrumentor

    FlaskInstrumentor().instrument_app(app, excluded_urls="metrics")


def inject() -> dict[str, str]:
    """The current trace context as W3C headers ({} when tracing is off)."""
    if "provider" not in _state:
        return {}
    from opentelemetry.propagate import inject as otel_inject

    carrier: dict[str, str] = {}
    otel_inject(carrier)
    return carrier


@contextmanager
def job_span(name: str, carrier: Mapping[str, str] | None) -> Iterator[None]:
    """A span around one job, child of the enqueueing request's; flushed at the end (RQ's
    work horse leaves with os._exit, which would drop the batch)."""
    if "provider" not in _state:
        yield
        return
    from opentelemetry import trace
    from opentelemetry.propagate import extract

    tracer = trace.get_tracer("assay.jobs")
    try:
        with tracer.start_as_current_span(f"job {name}", context=extract(dict(carrier or {})),
                                          kind=trace.SpanKind.CONSUMER):
            yield
    finally:
        _state["provider"].force_flush(5000)


def flush() -> None:
    if "provider" in _state:
        _state["provider"].force_flush(5000)
