"""Observability: structured logs with request and job context (`logs`), Prometheus
metrics (`metrics`, every metric defined there), readiness (`ready`) and optional
OpenTelemetry traces (`tracing`, imported only when OTEL_EXPORTER_OTLP_ENDPOINT is set)."""
