"""A batch of calls of one tool (`app.geodata.catalogue.BATCH_FORMS`): every
item validated, admitted, answered and charged on its own terms, as if called alone, but
admitted in one Redis call, answered by one Celery task and charged in one round trip.

The items are validated first: one that is not a valid call is answered with the error
it alone would have got (INVALID_ARGUMENT; never admitted, never charged). The others
are admitted in order (`app.metering.batch.reserve_batch`: rate tokens and a credit per
item, one concurrency slot for the batch); the first refused one and all after it get
that refusal (QUOTA_EXCEEDED for what no longer fits under the cap, RATE_LIMITED past
the rate). Admitted items come from the upstream answer cache when it has them, the rest
from one `tools.run_batch` task; each item with data is charged, every other released.
A failure of the whole (the deadline, an outage, the client gone) releases every item
and is raised: nothing is charged.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import anyio

from app.billing.entitlements import current_entitlements
from app.geodata import service as geodata
from app.kit.config import get_settings
from app.kit.errors import AppError, DeadlineExceeded, Internal, error_from_body
from app.kit.principal import CallerPrincipal
from app.metering.batch import commit_batch, release_batch, reserve_batch
from app.metering.readings import MeterReading
from app.metering.service import Reservation
from app.observability import logs, metrics
from app.plans import Plan
from app.queue import waiter
from app.request_log.refusals import record_later
from app.request_log.service import CallEntry, entry_for, outcome_of, principal_type
from app.tool_calls.cached import cached_reply
from app.tool_calls.routing import queue_for
from app.tool_calls.service import run_tool

logger = logging.getLogger(__name__)

RUN_BATCH_TASK = "tools.run_batch"


@dataclass(frozen=True)
class ItemAnswer:
    """One item's outcome: its structured result, or the error it alone would have got."""

    structured: dict[str, Any] | None = None
    error: AppError | None = None


@dataclass(frozen=True)
class BatchAnswer:
    items: list[ItemAnswer]
    credits: int  # charged: the items with data
    # For the HTTP API's headers: the last admission (None: nothing was admitted), the
    # refusal of the items not admitted, the account's credits used after the batch.
    reservation: Reservation | None
    refused: AppError | None
    credits_used: int | None
    # The batch's task id (its items' ledger rows are `<call_id>-<i>`); None: none ran.
    call_id: str | None = None
    # What the answer says of the account's credits (`app.metering.readings`).
    reading: MeterReading | None = None


async def call_tool_batch(
    principal: CallerPrincipal, name: str, items: Sequence[Any]
) -> BatchAnswer:
    """Run `items` (each a call's arguments) as calls of `name` for `principal`; the
    request log gets one entry per outcome among the items, after the answer."""
    started = time.monotonic()
    try:
        answer = await _call_tool_batch(principal, name, items, started)
    except BaseException as exc:  # the whole batch failed: one entry for all its items
        entry = _entry(principal, name, exc, started, calls=max(1, len(items)))
        record_later(principal.user_id, [entry])
        raise
    record_later(principal.user_id, _entries(principal, name, answer, started))
    return answer


def _entry(
    principal: CallerPrincipal,
    name: str,
    failure: BaseException | None,
    started: float,
    *,
    calls: int,
    call_id: str | None = None,
) -> CallEntry:
    entry = entry_for(
        principal_id=principal.key_id,
        principal_type=principal_type(principal.kind),
        surface=principal.surface,
        tool=name,
        failure=failure,
        started=started,
        credits=calls if failure is None else 0,
        call_id=call_id,
    )
    return entry._replace(calls=calls)


def _entries(
    principal: CallerPrincipal, name: str, answer: BatchAnswer, started: float
) -> list[CallEntry]:
    """One entry per outcome among the items (OK first, then errors by first seen)."""
    by_outcome: dict[str, tuple[AppError | None, int]] = {}
    for item in answer.items:
        outcome = outcome_of(item.error)
        error, count = by_outcome.get(outcome, (item.error, 0))
        by_outcome[outcome] = (error, count + 1)
    return [
        _entry(principal, name, error, started, calls=count, call_id=answer.call_id)
        for error, count in sorted(by_outcome.values(), key=lambda pair: pair[0] is not None)
    ]


async def _call_tool_batch(
    principal: CallerPrincipal, name: str, items: Sequence[Any], started: float
) -> BatchAnswer:
    answers: list[ItemAnswer | None] = [None] * len(items)
    valid: list[tuple[int, dict[str, Any]]] = []
    for index, checked in enumerate(validated_items(name, items)):
        if isinstance(checked, AppError):  # answered in its place, never admitted
            answers[index] = ItemAnswer(error=checked)
        else:
            valid.append((index, checked))
    account = await current_entitlements(principal.user_id)
    batch = None
    if valid:
        batch = await reserve_batch(
            principal.user_id,
            account.plan,
            len(valid),
            key_id=principal.key_id,
            credit_cap=account.credit_cap,
            granted=account.granted_now(),
            test=principal.is_test,
        )
        for index, _ in valid[len(batch.admitted) :]:
            answers[index] = ItemAnswer(error=batch.refused)
    admitted = valid[: len(batch.admitted)] if batch else []
    reservations = batch.admitted if batch else []
    try:
        replies = await _replies(name, [args for _, args in admitted], account.plan, started)
    except BaseException:
        with anyio.CancelScope(shield=True):  # nothing is charged for a batch that failed
            await release_batch(reservations)
        raise
    charged: list[Reservation] = []
    failed: list[Reservation] = []
    call_ids: list[str] = []
    for (index, _), reservation, (call_id, reply) in zip(
        admitted, reservations, replies, strict=True
    ):
        if "error" in reply:
            answers[index] = ItemAnswer(error=error_from_body(reply["error"]))
            failed.append(reservation)
            continue
        answers[index] = ItemAnswer(structured=reply["structured"])
        charged.append(reservation)
        call_ids.append(call_id)
    with anyio.CancelScope(shield=True):  # the answers exist: settle every reservation
        await release_batch(failed)
        used = await _commit(charged, call_ids, principal.key_id, name)
    done = [answer or ItemAnswer(error=Internal()) for answer in answers]
    metrics.tool_batch(
        name, [metrics.outcome_of(a.error) for a in done], time.monotonic() - started
    )
    reading: MeterReading | None = None
    if reservations:
        reading = reservations[0].reading(charged=len(charged), used=used)
    elif batch is not None and batch.refused is not None:
        reading = batch.refused.reading
    return BatchAnswer(
        items=done,
        credits=len(charged),
        reservation=reservations[-1] if reservations else None,
        refused=batch.refused if batch else None,
        credits_used=used,
        call_id=replies[0][0].rsplit("-", 1)[0] if replies else None,
        reading=reading,
    )


def validated_items(
    name: str, items: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any] | AppError]:
    """Each item checked as a call of `name`: its arguments, or the error it alone would
    have got (INVALID_ARGUMENT, UNSUPPORTED)."""
    checked: list[dict[str, Any] | AppError] = []
    for item in items:
        try:
            checked.append(geodata.validate_arguments(name, item))
        except AppError as exc:
            checked.append(exc)
    return checked


async def _commit(
    charged: list[Reservation], call_ids: list[str], key_id: str | None, tool: str
) -> int | None:
    """Charge the items with data; a commit sent but not confirmed (Redis may or may not
    have run it) still answers them: a client is never charged for answers it did not get
    (see `app.tool_calls.service._commit_unsure`). None: the credits used are unknown."""
    try:
        return await commit_batch(charged, call_ids=call_ids, key_id=key_id, tool=tool)
    except Exception as exc:
        logger.error("batch answered, its commit unconfirmed (%d items): %r", len(charged), exc)
        return None


async def _replies(
    name: str, items: list[dict[str, Any]], plan: Plan, started: float
) -> list[tuple[str, dict[str, Any]]]:
    """(call id, worker-style reply) per item: from the answer cache, else one task."""
    if not items:
        return []
    dispatcher = waiter()
    call_id = dispatcher.new_task_id("call")
    logs.bind_call_id(call_id)
    replies: list[dict[str, Any] | None] = [await cached_reply(name, args) for args in items]
    missing = [i for i, reply in enumerate(replies) if reply is None]
    if missing:
        remaining = get_settings().tool_deadline_s - (time.monotonic() - started)
        if remaining <= 0:
            raise DeadlineExceeded()
        answered = await dispatcher.run_task(
            call_id,
            RUN_BATCH_TASK,
            [name, [items[i] for i in missing]],
            deadline_s=remaining,
            queue=queue_for(plan, 1),
        )
        for i, reply in zip(missing, answered["items"], strict=True):
            replies[i] = reply
    # One ledger row per item: the batch's call id and the item's place in the batch.
    return [(f"{call_id}-{i}", reply or {}) for i, reply in enumerate(replies)]


def batch_body(answer: BatchAnswer, status_of: Callable[[AppError], int]) -> dict[str, Any]:
    """The batch's answer as JSON (`app.geodata.batch.BatchResult`): one item per input,
    `status` as the edge's `status_of` would answer that item's error alone."""
    items: list[dict[str, Any]] = []
    for item in answer.items:
        if item.error is None:
            items.append({"status": 200, "result": item.structured})
        else:
            items.append({"status": status_of(item.error), **item.error.to_body()})
    return {"results": items, "credits": answer.credits}


def run_tool_batch(name: str, items: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The worker's side: `{"items": [run_tool(name, item), ...]}`, one reply per item."""
    return {"items": [run_tool(name, item) for item in items]}
