"""The request log: each account's latest tool calls, failed ones included.

One entry per call that reached `app.tool_calls.service.call_tool` (every data surface
goes through it) or was refused at the MCP edge: when, which principal (an API key
today; the entry names its type so OAuth clients can join later), the tool, the outcome
(`OK` or the error code the caller got), the latency and the credits charged. Never the
arguments or the result: a log of what people asked is a liability we need not hold;
the outcome code says why a call failed, and the call id finds the server's log lines.

Storage: a capped Redis list per account (`LPUSH`, `LTRIM` to `request_log_max_calls`,
expiring `request_log_days` after the last call), hash-tagged with the account like its
counters. A call that reached its credit reservation writes its entry in the same
pipelined round trip as the commit or the release (`writes_for`); a call refused before
(invalid arguments, rate, concurrency, credits) is written after its answer, identical
refusals within a second as one entry with their count (`app.request_log.refusals`).
Reads drop entries older than the retention, so the log is the last N entries or D
days, whichever is smaller. The same script keeps each principal's
latest call time (`last_used`). Memory: docs/OPERATIONS.md, "The request log"; the
cost per call: bench/RESULTS.md.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, NamedTuple, cast

import redis
from redis.asyncio.client import Pipeline
from sqlmodel import Session

from app.kit.clock import iso_ms
from app.kit.config import get_settings
from app.kit.errors import AppError, unavailable_for
from app.kit.redis_client import LuaScript, async_redis, sync_redis
from app.metering.reports import principal_names
from app.request_log.pages import page_of
from app.request_log.schemas import CallLogResponse, CallLogRetention, CallPrincipal, CallRecord

logger = logging.getLogger(__name__)

OK = "OK"
CANCELLED = "CANCELLED"  # the client went away before the answer
FAILED = "ERROR"  # the filter that matches every outcome but OK
API_KEY = "api_key"
OAUTH_APP = "oauth_app"  # a connected app: its grant id (app_...) stands where a keyId would
MCP_SURFACE = "mcp"  # where a call came in: /mcp
V1_SURFACE = "v1"  # or the HTTP API at /v1
PLAYGROUND_SURFACE = "playground"  # or the dashboard's playground, for the signed-in account
SURFACES = (MCP_SURFACE, V1_SURFACE, PLAYGROUND_SURFACE)
# A principal's latest call time is kept this long after its last call (a few dozen
# fields per account); past it, the ledger's latest charged call is what is known.
LAST_USED_TTL_MS = 400 * 24 * 3600 * 1000

# KEYS: the log list, the last-used hash. ARGV: entry, max entries, list ttl ms,
# principal field, call time ms, hash ttl ms.
RECORD = """
redis.call('LPUSH', KEYS[1], ARGV[1])
redis.call('LTRIM', KEYS[1], 0, tonumber(ARGV[2]) - 1)
redis.call('PEXPIRE', KEYS[1], ARGV[3])
local last = tonumber(redis.call('HGET', KEYS[2], ARGV[4]) or '0')
if tonumber(ARGV[5]) > last then redis.call('HSET', KEYS[2], ARGV[4], ARGV[5]) end
redis.call('PEXPIRE', KEYS[2], ARGV[6])
return 1
"""
record_script = LuaScript(RECORD)


def log_key(user_id: str) -> str:
    """List of the account's call entries (JSON arrays), newest first."""
    return f"{get_settings().redis_key_prefix}calls:{{{user_id}}}"


def last_used_key(user_id: str) -> str:
    """Hash: `<principal type>:<id>` -> the start of its latest call (ms since the epoch)."""
    return log_key(user_id) + ":last"


class CallEntry(NamedTuple):
    """One call. A NamedTuple: a read builds up to a thousand of them per request."""

    at_ms: int  # when the call started (its admission), ms since the epoch
    principal_type: str  # "api_key"
    principal_id: str  # the keyId
    tool: str
    outcome: str  # "OK", an error code, or "CANCELLED"
    latency_ms: float
    credits: int
    call_id: str | None  # None when refused before it got one
    calls: int = 1  # identical refusals within a second share one entry (`refusals`)
    surface: str | None = (
        None  # "mcp", "v1" or "playground"; None in entries written before it was kept
    )

    def encode(self) -> str:
        return json.dumps(list(self), separators=(",", ":"))

    @classmethod
    def from_fields(cls, fields: Any) -> CallEntry | None:
        """The entry of a decoded JSON array, or None when it is not one of ours (nine
        fields: written before the surface was kept)."""
        if not isinstance(fields, list) or len(fields) not in (9, 10):
            return None
        at, kind, ident, tool, outcome, latency, credits, call_id, calls = fields[:9]
        surface = fields[9] if len(fields) == 10 else None
        if surface is not None and surface not in SURFACES:
            return None
        texts = (kind, ident, tool, outcome)
        if not all(isinstance(value, str) for value in texts) or not isinstance(at, int):
            return None
        if not isinstance(latency, int | float) or not isinstance(credits, int):
            return None
        if call_id is not None and not isinstance(call_id, str) or not isinstance(calls, int):
            return None
        return cls(at, kind, ident, tool, outcome, latency, credits, call_id, calls, surface)


def _decode_all(raw: list[str]) -> list[CallEntry]:
    """Every readable entry: one JSON parse of the whole list (a tenth of the time of a
    parse per entry), or entry by entry when one of them is not JSON."""
    try:
        parsed = json.loads("[" + ",".join(raw) + "]")
    except ValueError:
        parsed = []
        for item in raw:
            try:
                parsed.append(json.loads(item))
            except ValueError:
                continue
    return [entry for entry in map(CallEntry.from_fields, parsed) if entry is not None]


def principal_type(kind: str) -> str:
    """The log's name for a `CallerPrincipal.kind` ("api_key", or "oauth" for a token)."""
    return OAUTH_APP if kind == "oauth" else API_KEY


def outcome_of(failure: BaseException | None) -> str:
    """What the caller was told: OK, the error's code, UNAVAILABLE for an outage of a
    backing service, CANCELLED when the client left, else INTERNAL."""
    if failure is None:
        return OK
    if isinstance(failure, AppError):
        return failure.code
    if not isinstance(failure, Exception):
        return CANCELLED
    return "UNAVAILABLE" if unavailable_for(failure) is not None else "INTERNAL"


def entry_for(
    *,
    principal_id: str,
    tool: str,
    failure: BaseException | None,
    started: float,
    credits: int,
    call_id: str | None,
    principal_type: str = API_KEY,
    surface: str | None = None,
) -> CallEntry:
    """The entry of a call that began at `started` (time.monotonic()) and ends now."""
    latency_s = max(0.0, time.monotonic() - started)
    return CallEntry(
        at_ms=int((time.time() - latency_s) * 1000),
        principal_type=principal_type,
        principal_id=principal_id,
        tool=tool,
        outcome=outcome_of(failure),
        latency_ms=round(latency_s * 1000, 2),
        credits=credits,
        call_id=call_id,
        surface=surface,
    )


def _script_call(user_id: str, entry: CallEntry) -> tuple[list[str], list[Any]]:
    settings = get_settings()
    keys = [log_key(user_id), last_used_key(user_id)]
    args = [
        entry.encode(),
        settings.request_log_max_calls,
        settings.request_log_days * 24 * 3600 * 1000,
        f"{entry.principal_type}:{entry.principal_id}",
        entry.at_ms,
        LAST_USED_TTL_MS,
    ]
    return keys, args


def writes_for(user_id: str, entry: CallEntry) -> Callable[[Pipeline], None]:
    """The entry's write, to add to a pipeline the call sends anyway (commit, release)."""

    def add(pipe: Pipeline) -> None:
        record_script.queue(pipe, *_script_call(user_id, entry))

    return add


async def record(user_id: str, *entries: CallEntry) -> None:
    """Write entries in a round trip of their own; a Redis failure is logged, never raised
    (the call's answer does not depend on its log entry)."""
    try:
        if len(entries) == 1:
            await record_script.run_async(async_redis(), *_script_call(user_id, entries[0]))
            return
        async with async_redis().pipeline(transaction=False) as pipe:
            for entry in entries:
                record_script.queue(pipe, *_script_call(user_id, entry))
            await pipe.execute()
    except redis.RedisError as exc:
        logger.warning("request log: calls of %s were not recorded: %s", user_id, exc)


@dataclass(frozen=True)
class CallLog:
    entries: list[CallEntry]  # newest first, at most the limit asked for
    matched: int  # entries in the log that pass the filters
    offset: int = 0  # matched entries newer than the first shown
    newer: str | None = None  # cursor of the previous (newer) page
    older: str | None = None  # cursor of the next (older) page
    tools: tuple[str, ...] = ()  # every tool in the log, filters aside (for a choice)


def recent_calls(
    user_id: str,
    *,
    principal_id: str | None = None,
    outcome: str | None = None,
    tool: str | None = None,
    limit: int = 100,
    before: str | None = None,
    after: str | None = None,
    now_ms: int | None = None,
) -> CallLog:
    """The account's logged calls within the retention, newest first, filtered by
    principal id, tool and outcome (`OK`, `ERROR` for every failure, or one code); one
    page of `limit` from the start, or older than `before` / newer than `after`
    (cursors, `app.request_log.pages`)."""
    settings = get_settings()
    newest = sync_redis().lrange(log_key(user_id), 0, settings.request_log_max_calls - 1)
    raw = cast(list[str], newest)
    oldest = (now_ms or int(time.time() * 1000)) - settings.request_log_days * 24 * 3600 * 1000
    entries = [entry for entry in _decode_all(raw) if entry.at_ms >= oldest]
    tools = tuple(sorted({entry.tool for entry in entries}))
    if principal_id is not None:
        entries = [entry for entry in entries if entry.principal_id == principal_id]
    if tool is not None:
        entries = [entry for entry in entries if entry.tool == tool]
    if outcome == FAILED:
        entries = [entry for entry in entries if entry.outcome != OK]
    elif outcome is not None:
        entries = [entry for entry in entries if entry.outcome == outcome]
    # The list is in order of completion; a long call started before shorter ones: the
    # page sorts by start.
    page = page_of(entries, limit=limit, before=before, after=after)
    return CallLog(page.entries, len(entries), page.offset, page.newer, page.older, tools)


def last_used(user_id: str, principal_type: str = API_KEY) -> dict[str, int]:
    """Principal id -> the start of its latest logged call (ms since the epoch)."""
    raw = cast(dict[str, str], sync_redis().hgetall(last_used_key(user_id)))
    prefix = principal_type + ":"
    return {
        field[len(prefix) :]: int(value)
        for field, value in raw.items()
        if field.startswith(prefix) and value.isdigit()
    }


@dataclass(frozen=True)
class CallQuery:
    """What `GET /usage/calls` and the dashboard's page ask for (validated at the edge)."""

    principal: str | None = None
    outcome: str | None = None
    tool: str | None = None
    limit: int = 100
    before: str | None = None
    after: str | None = None

    def read(self, user_id: str) -> CallLog:
        return recent_calls(
            user_id,
            principal_id=self.principal,
            outcome=self.outcome.upper() if self.outcome else None,
            tool=self.tool,
            limit=self.limit,
            before=self.before,
            after=self.after,
        )


def call_log(session: Session, user_id: str, query: CallQuery) -> CallLogResponse:
    """`GET /usage/calls`: one page of the filtered log."""
    return as_response(session, user_id, query.read(user_id))


def as_response(session: Session, user_id: str, log: CallLog) -> CallLogResponse:
    """The page as the API answers it, each call's key named as it is now."""
    names = principal_names(session, user_id, sorted({e.principal_id for e in log.entries}))
    calls = []
    for entry in log.entries:
        known = names.get(entry.principal_id)
        kind = OAUTH_APP if entry.principal_type == OAUTH_APP else API_KEY
        who = CallPrincipal(
            type=kind,
            id=entry.principal_id,
            label=known.name if known else None,
            revoked=known is not None and known.revoked,
        )
        calls.append(
            CallRecord(
                at=iso_ms(datetime.fromtimestamp(entry.at_ms / 1000, UTC)),
                callId=entry.call_id,
                principal=who,
                tool=entry.tool,
                outcome=entry.outcome,
                latencyMs=entry.latency_ms,
                credits=entry.credits,
                calls=entry.calls,
                surface=entry.surface,
            )
        )
    settings = get_settings()
    retention = CallLogRetention(
        maxCalls=settings.request_log_max_calls, days=settings.request_log_days
    )
    return CallLogResponse(
        calls=calls,
        matched=log.matched,
        retention=retention,
        offset=log.offset,
        nextCursor=log.older,
        prevCursor=log.newer,
    )
