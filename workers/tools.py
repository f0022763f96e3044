"""Tool tasks (queue `tools`). Placeholder: the MCP/geodata side defines the tool task here."""

from __future__ import annotations
