"""OpenTelemetry with OTEL_EXPORTER_OTLP_ENDPOINT set: spans of the api and of the
worker's pool process reach an OTLP/HTTP collector (a fake one on 127.0.0.1), one trace
from the MCP request through Celery into the worker, with FastAPI, Celery, Redis,
SQLAlchemy and httpx spans."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from app.kit.embedded_redis import free_port
from tests.fakes.upstream import FakeUpstream
from tests.mcp.conftest import connect
from tests.observability.conftest import observed_env, poll, start_observed_stack
from tests.observability.test_metrics import new_key
from tests.support.fixtures import Backend

trace_service = pytest.importorskip(
    "opentelemetry.proto.collector.trace.v1.trace_service_pb2",
    reason="the optional `otel` dependencies are not installed",
)


@dataclass
class Span:
    service: str
    scope: str
    name: str
    trace_id: bytes


@dataclass
class FakeCollector:
    """OTLP/HTTP protobuf: POST /v1/traces with an ExportTraceServiceRequest."""

    spans: list[Span] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def handler(self) -> type[BaseHTTPRequestHandler]:
        collector = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802  (http.server's name)
                body = self.rfile.read(int(self.headers["Content-Length"]))
                if self.path == "/v1/traces":
                    collector.add(body)
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *_args: object) -> None:
                pass

        return Handler

    def add(self, body: bytes) -> None:
        request = trace_service.ExportTraceServiceRequest()
        request.ParseFromString(body)
        with self.lock:
            for resource_spans in request.resource_spans:
                attributes = {
                    a.key: a.value.string_value for a in resource_spans.resource.attributes
                }
                for scope_spans in resource_spans.scope_spans:
                    for span in scope_spans.spans:
                        self.spans.append(
                            Span(
                                attributes.get("service.name", ""),
                                scope_spans.scope.name,
                                span.name,
                                span.trace_id,
                            )
                        )

    def snapshot(self) -> list[Span]:
        with self.lock:
            return list(self.spans)


@pytest.fixture
def collector() -> Iterator[tuple[FakeCollector, str]]:
    fake = FakeCollector()
    server = ThreadingHTTPServer(("127.0.0.1", free_port()), fake.handler())
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield fake, f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()


async def test_spans_of_one_call_reach_the_collector_from_api_and_worker(
    collector: tuple[FakeCollector, str],
    redis_url: str,
    geodata_dir: Path,
    fake_upstream: FakeUpstream,
    tmp_path: Path,
) -> None:
    fake, endpoint = collector
    backend = Backend("sqlite", f"sqlite:///{tmp_path / 'db.sqlite'}", redis_url, geodata_dir)
    env = {
        **observed_env(backend, fake_upstream, "otel"),
        "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint,
        "OTEL_BSP_SCHEDULE_DELAY": "100",
    }
    stack = start_observed_stack(env, tmp_path)
    try:
        _user_id, key = new_key(stack)
        async with connect(stack.mcp_url, key) as client:
            result = await client.call_tool("get_average_income", {"postal_code": "94103"})
            assert not result.is_error

        wanted = {
            ("geosvc-api", "opentelemetry.instrumentation.fastapi"),
            ("geosvc-api", "opentelemetry.instrumentation.celery"),
            ("geosvc-api", "opentelemetry.instrumentation.redis"),
            ("geosvc-api", "opentelemetry.instrumentation.sqlalchemy"),
            ("geosvc-worker", "opentelemetry.instrumentation.celery"),
            ("geosvc-worker", "opentelemetry.instrumentation.httpx"),
        }

        def seen() -> set[tuple[str, str]]:
            return {(span.service, span.scope) for span in fake.snapshot()}

        def named(service: str, suffix: str) -> list[Span]:
            return [s for s in fake.snapshot() if s.service == service and s.name.endswith(suffix)]

        def complete() -> bool:
            # A task's run span ends after its httpx child, so it may come in a later batch.
            return (
                wanted <= seen()
                and bool(named("geosvc-worker", "run/tools.run"))
                and bool(named("geosvc-api", "tools.run"))
            )

        try:
            poll(complete, deadline_s=30)
        except AssertionError:
            assert complete(), (seen(), stack.worker.log()[-3000:], stack.server.log()[-3000:])
        run = named("geosvc-worker", "run/tools.run")
        publish = named("geosvc-api", "tools.run")
        assert len(run) == 1
        assert len(publish) == 1
        assert run[0].trace_id == publish[0].trace_id  # one trace across the queue
    finally:
        stack.server.stop()
        stack.worker.stop(wait=False)
