"""OpenTelemetry traces, on only when OTEL_EXPORTER_OTLP_ENDPOINT is set.

Off, this module imports nothing from OpenTelemetry and every function returns at once:
tracing costs nothing unless an operator asks for it. On (`pip install assay[otel]`), it
instruments Flask (a span per request), SQL (per statement, `_trace_sql`) and Redis (per
command), exports over OTLP/HTTP (the exporter reads the standard OTEL_* variables), and
carries the trace context into the jobs a request enqueues (in the job's meta, as W3C
traceparent), so a run's spans join its request's trace.

What it costs is kept per batch, not per call (measured in `make bench`): a run makes
thousands of calls a second, and a span per call, even a sampled-out one, cost a quarter
of its throughput. So:
- inside a trace that was sampled out nothing is made at all (no non-recording span per
  SQL statement or LLM call): one look at the current span;
- the run engine's work has a span per batch (`span`: a claim, a write of finished cells;
  their few statements are its children), not per cell;
- outbound LLM calls get a span from the LLM client itself (`llm_call`, made after the
  call from the times it took), not from an HTTP instrumentation hooked into every
  request: every failed call, and of the others at most ASSAY_TRACE_CALLS_PER_S (10) a
  second per process, so a run at 2,000 calls/s shows samples of its calls, not all.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

log = logging.getLogger(__name__)
_state: dict[str, Any] = {}
CALL_SPANS_PER_S = float(os.environ.get("ASSAY_TRACE_CALLS_PER_S") or 10)
_bucket = [CALL_SPANS_PER_S, 0.0]  # succeeded calls' spans still allowed, when last counted


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
    _state.update(provider=provider, trace=trace, tracer=trace.get_tracer("assay"))
    return True


def _wanted(trace: Any) -> bool:
    """False inside a trace that was sampled out: nothing under it would be recorded, so
    nothing is made. A span with no trace around it goes to the sampler, as a root."""
    current = trace.get_current_span()
    return bool(current.is_recording() or not current.get_span_context().is_valid)


@contextmanager
def span(name: str, **attributes: Any) -> Iterator[None]:
    """A span around one batch of work (the engine's claims and writes)."""
    trace = _state.get("trace")
    if trace is None or not _wanted(trace):
        yield
        return
    with _state["tracer"].start_as_current_span(name, attributes=attributes):
        yield


def llm_call(provider: str, model: str, url: str, started_ns: int, error_class: str | None,
             attempts: int, tokens_in: int | None = None,
             tokens_out: int | None = None) -> None:
    """A span for one LLM call (its retries included), made once it is over; see above for
    which calls get one."""
    trace = _state.get("trace")
    if trace is None or not _wanted(trace):
        return
    if error_class is None:  # a token bucket: CALL_SPANS_PER_S a second, in bursts of as many
        now = time.monotonic()
        allowed = min(max(CALL_SPANS_PER_S, 1.0),
                      _bucket[0] + (now - _bucket[1]) * CALL_SPANS_PER_S)
        _bucket[1] = now
        if allowed < 1:
            _bucket[0] = allowed
            return
        _bucket[0] = allowed - 1
    attributes: dict[str, Any] = {
        "gen_ai.system": provider, "gen_ai.request.model": model,
        "server.address": url.partition("://")[2].split("/", 1)[0], "assay.attempts": attempts}
    if tokens_in is not None:
        attributes["gen_ai.usage.input_tokens"] = tokens_in
    if tokens_out is not None:
        attributes["gen_ai.usage.output_tokens"] = tokens_out
    if error_class is not None:
        attributes["error.type"] = error_class
    call = _state["tracer"].start_span(f"chat {model}", kind=trace.SpanKind.CLIENT,
                                       start_time=started_ns, attributes=attributes)
    if error_class is not None:
        call.set_status(trace.Status(trace.StatusCode.ERROR, error_class))
    call.end()


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
        if not _wanted(trace):
            return
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
