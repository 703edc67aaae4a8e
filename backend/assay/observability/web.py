"""The API's side: a request id on every request (X-Request-ID, echoed back), HTTP latency
by route, an optional access log line, and `/metrics` for Prometheus.

`/metrics` is outside `/api` and outside the OpenAPI document: it is for the scraper, not
for clients. It answers only with ASSAY_METRICS_TOKEN set and sent as a bearer token
(401 otherwise); unset, it does not exist (404). Bind it to an internal network or keep
the token secret: the figures tell what the instance is doing, not what anyone asked.
"""

from __future__ import annotations

import hmac
import logging
import os
import time

from flask import Flask, Response, abort, g, request

from assay.admission import ARRIVED
from assay.observability import logs, metrics, tracing
from assay.runtime import current

log = logging.getLogger("assay.access")


def _access_log_on() -> bool:
    default = "1" if (os.environ.get("ASSAY_LOG_FORMAT") or "").lower() == "json" else "0"
    return (os.environ.get("ASSAY_ACCESS_LOG") or default) == "1"


def observe_request(method: str, route: str, status: int, seconds: float) -> None:
    """A request answered: its latency by route, and its access log line when on."""
    if metrics.ENABLED:
        metrics.HTTP_LATENCY.labels(method, route, str(status)).observe(seconds)
    if _access_log_on():
        log.info("%s %s %s", method, route, status,
                 extra={"duration_ms": round(seconds * 1000, 1)})


def init_app(app: Flask) -> None:
    tracing.instrument_app(app)  # nothing when OTEL_EXPORTER_OTLP_ENDPOINT is unset
    @app.before_request
    def _start() -> None:
        g.request_id = logs.request_id_from(request.headers.get(logs.REQUEST_ID_HEADER))
        # from when it came to the door, its wait for a place included (admission.py)
        g.request_started = request.environ.get(ARRIVED) or time.perf_counter()

    @app.after_request
    def _finish(response: Response) -> Response:
        response.headers[logs.REQUEST_ID_HEADER] = g.get("request_id", "")
        started = g.get("request_started")
        if started is not None:
            route = request.url_rule.rule if request.url_rule is not None else "unmatched"
            observe_request(request.method, route, response.status_code,
                            time.perf_counter() - started)
        return response

    @app.get("/metrics")
    def prometheus_metrics() -> Response:
        rt = current()
        metrics_token = rt.settings.metrics_token
        if not metrics_token:
            abort(404)
        scheme, _, sent = request.headers.get("Authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(
                sent.strip().encode(), metrics_token.encode()):
            return Response("metrics need the bearer token ASSAY_METRICS_TOKEN\n", 401,
                            {"WWW-Authenticate": 'Bearer realm="metrics"'},
                            mimetype="text/plain")
        return Response(metrics.render(rt.redis, rt.settings.runs_queue),
                        content_type=metrics.CONTENT_TYPE)
