"""Charging a chunk of a bulk job's rows (`app.jobs`) in one Lua call, exactly once.

A chunk is charged for its rows with data, up to the account's credit limit (the free
cap, the account's own cap; none on standard without a cap): the first `charged` rows
with data keep it, the others are refused (QUOTA_EXCEEDED, free). The script records
what it charged, and in which month, in a marker beside the counter (same hash tag),
keyed by the job and the chunk alone: a chunk run again (its worker killed after the
charge, a message redelivered), even in a later month, reads the same figure back and
counts nothing; its events keep the month they were charged in. The marker lives as
long as its job: deleted with it (`forget_markers`, when beat deletes the job), with a
TTL only against a leak. Its usage events (call id
`<job id>-<row>`) are pushed again each time: the ledger keeps one per call id. So the
counter, the ledger and the rows with data agree whatever dies when.

No rate token and no concurrency slot: bulk work is paced by its own limit
(`app.jobs.pace`), not the interactive buckets.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.kit.clock import period_of, utcnow
from app.kit.config import get_settings
from app.kit.db import new_session
from app.kit.redis_client import LuaScript, sync_redis
from app.metering import alerts, outbox
from app.metering.keys import counter_key, outbox_bucket, outbox_key, reservations_key
from app.metering.ledger import ledger_total
from app.metering.refusals import credit_limit
from app.metering.schemas import UsageEventIn
from app.metering.scripts import lua_source, seed_script
from app.metering.service import CREDITS_PER_CALL, counter_ttl_s
from app.plans import Plan

# A leak guard only: a chunk's marker is deleted with its job (results are kept days).
MARKER_TTL_S = 400 * 86_400

CHARGE_CHUNK = lua_source("prune", "claim_alert", "charge_chunk")  # lua/charge_chunk.lua
charge_chunk_script = LuaScript(CHARGE_CHUNK)


@dataclass(frozen=True)
class ChunkCharge:
    charged: int  # credits charged: the first `charged` rows with data
    used: int  # the account's credits used in the period after it
    period: str
    limit: int | None  # the credit limit in force (None: none)
    repeated: bool  # charged by an earlier run of the chunk, nothing counted now


def marker_key(user_id: str, job_id: str, chunk: int) -> str:
    """No month in it: a chunk is the job's, whenever it runs."""
    return f"{get_settings().redis_key_prefix}usage:{{{user_id}}}:job:{job_id}:{chunk}"


def forget_markers(user_id: str, job_id: str, chunks: int) -> None:
    """The job's markers, once the job is deleted (no chunk of it runs again)."""
    keys = [marker_key(user_id, job_id, chunk) for chunk in range(chunks)]
    store = sync_redis()
    for start in range(0, len(keys), 500):
        store.delete(*keys[start : start + 500])


def charge_chunk(
    *,
    user_id: str,
    key_id: str | None,
    plan: Plan,
    credit_cap: int | None,
    job_id: str,
    chunk: int,
    tool: str,
    data_rows: list[int],
) -> ChunkCharge:
    """Charge the chunk's rows with data (`data_rows`, their row numbers in the job) once,
    and put the charged rows' usage events in the outbox (one round trip)."""
    period = period_of(utcnow())
    limit = credit_limit(plan, credit_cap)
    counter = counter_key(user_id, period)
    keys = [counter, reservations_key(user_id, period), marker_key(user_id, job_id, chunk)]
    warning, quota = alerts.thresholds(plan)
    args = [
        len(data_rows),
        0 if limit is None else 1,
        limit or 0,
        counter_ttl_s(period),
        MARKER_TTL_S,
        warning,
        quota,
        period,
    ]
    store = sync_redis()
    reply = charge_chunk_script.run(store, keys, args)
    if int(reply[0]) == -1:  # no counter yet this period: rebuilt from the ledger first
        with new_session() as session:
            total = ledger_total(session, user_id, period)
        seed_script.run(store, [counter], [total, counter_ttl_s(period)])
        reply = charge_chunk_script.run(store, keys, args)
    charged, used, alert, repeated = (int(value) for value in reply[:4])
    charged_in = str(reply[4])  # a run again keeps the month the first run charged in
    if charged:
        now = utcnow()
        events = [
            outbox.encode(
                UsageEventIn(
                    call_id=f"{job_id}-{row}",
                    user_id=user_id,
                    key_id=key_id,
                    tool=tool,
                    credits=CREDITS_PER_CALL,
                    period=charged_in,
                    created_at=now,
                )
            )
            for row in data_rows[:charged]
        ]
        store.rpush(outbox_key(outbox_bucket(user_id)), *events)
    if alert:
        alerts.announce_now(user_id, period, plan, alert)
    return ChunkCharge(charged, used, period, limit, bool(repeated))
