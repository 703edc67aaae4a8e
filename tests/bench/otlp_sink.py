"""A stand-in OpenTelemetry collector for the bench: accepts OTLP/HTTP trace exports (so the
exporter does its full work: encode, POST, read the reply) and counts the spans it got.

    python -m tests.bench.otlp_sink PORT      # GET /spans -> {"spans": n, "exports": n}
"""

from __future__ import annotations

import sys

from aiohttp import web
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

COUNTS = {"spans": 0, "exports": 0}


async def traces(request: web.Request) -> web.Response:
    message = ExportTraceServiceRequest()
    message.ParseFromString(await request.read())
    COUNTS["exports"] += 1
    COUNTS["spans"] += sum(len(scope.spans) for resource in message.resource_spans
                           for scope in resource.scope_spans)
    return web.Response(body=ExportTraceServiceResponse().SerializeToString(),
                        content_type="application/x-protobuf")


async def spans(_request: web.Request) -> web.Response:
    return web.json_response(COUNTS)


async def reset(_request: web.Request) -> web.Response:
    COUNTS.update(spans=0, exports=0)
    return web.json_response(COUNTS)


def main(port: int) -> None:
    app = web.Application(client_max_size=64 * 1024 * 1024)
    app.router.add_post("/v1/traces", traces)
    app.router.add_get("/spans", spans)
    app.router.add_post("/reset", reset)
    web.run_app(app, host="127.0.0.1", port=port, print=None)


if __name__ == "__main__":
    main(int(sys.argv[1]))
