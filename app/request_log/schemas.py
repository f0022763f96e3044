from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

# Query limits: a keyId (lowercase alphanumeric) or a connected app's id (app_...); an
# outcome is OK, ERROR or an error code.
PRINCIPAL_ID_PATTERN = r"^[a-z0-9_]{1,32}$"
OUTCOME_PATTERN = r"^[A-Za-z_]{2,32}$"
TOOL_PATTERN = r"^[a-z0-9_]{1,64}$"
MAX_LIMIT = 1000


class CallPrincipal(BaseModel):
    """Who made the call: an API key, or a connected app (OAuth) acting for the account."""

    type: Literal["api_key", "oauth_app"]
    id: str = Field(description="The keyId, or the connected app's id (app_...)")
    label: str | None = Field(
        description="The key's name or the app's client name, as now; null when it is gone"
    )
    revoked: bool = Field(description="The key has been revoked, or the app disconnected, since")


class CallRecord(BaseModel):
    at: str = Field(description="When the call started, ISO 8601 UTC with milliseconds")
    callId: str | None = Field(
        description="The call's id in the service's logs; null for a call refused before "
        "it got one (rate, concurrency, credits, invalid arguments)"
    )
    principal: CallPrincipal
    tool: str
    outcome: str = Field(description="OK, or the error code the caller received")
    latencyMs: float = Field(description="From admission to the answer, in milliseconds")
    credits: int = Field(description="Credits charged (0 for every failure)")
    calls: int = Field(
        description="Calls this entry stands for: identical refusals (same key, tool and "
        "outcome) within a second are logged once, with their number and the first's time"
    )
    surface: Literal["mcp", "v1", "playground"] | None = Field(
        description="Where the call came in: `mcp` (the MCP server at /mcp), `v1` (the "
        "HTTP API) or `playground` (the dashboard's playground); null for calls logged "
        "before the service kept it"
    )


class CallLogRetention(BaseModel):
    maxCalls: int = Field(description="The log keeps at most this many of the latest calls")
    days: int = Field(description="and none older than this many days")


class CallLogResponse(BaseModel):
    calls: list[CallRecord] = Field(description="Newest first, at most `limit`")
    matched: int = Field(description="Calls in the log that pass the filters")
    retention: CallLogRetention
    offset: int = Field(
        description="Calls that pass the filters and are newer than this page's first"
    )
    nextCursor: str | None = Field(
        description="Pass as `before` for the next page (older calls); null on the last"
    )
    prevCursor: str | None = Field(
        description="Pass as `after` for the previous page (newer calls); null on the first"
    )
