"""How the MCP server is built (app/mcp/server.py)."""

from __future__ import annotations

import pytest

from app.kit.config import get_settings
from app.mcp.server import build_server
from app.observability.tracing import ENDPOINT_ENV


def middleware_names() -> list[str]:
    return [type(each).__name__ for each in build_server(get_settings()).middleware]


class TestSdkSpans:
    def test_no_span_per_request_while_tracing_is_off(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.delenv(ENDPOINT_ENV, raising=False)
        names = middleware_names()
        assert "OpenTelemetryMiddleware" not in names
        assert "TaskCalls" in names  # ours stays

    def test_the_span_stays_when_tracing_is_on(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv(ENDPOINT_ENV, "http://127.0.0.1:4318")
        assert middleware_names() == ["OpenTelemetryMiddleware", "TaskCalls"]
