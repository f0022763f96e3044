"""Metrics, structured logs and tracing, for every process of the service.

- `metrics`: the Prometheus series and the one-line hooks features call on their hot
  paths (`metrics.tool_call(...)`, `metrics.reservation_opened()`, ...).
- `exposition`: the series read from Redis at scrape time (queue depths, outbox,
  breakers), the multiprocess directory, the worker's exporter.
- `endpoints`: the api's `/metrics` and `install_api` (middleware, logging, tracing);
  `setup`: the metrics directory around `geosvc api` / `geosvc worker`.
- `logs`: JSON lines with a request id and a call id (context variables), the request-id
  middleware.
- `tracing`: OpenTelemetry, only when `OTEL_EXPORTER_OTLP_ENDPOINT` is set (lazy imports).
- `celery_hooks`: the same for Celery processes (ids into task headers and back, task
  metrics, tracing after fork).
"""
