"""A metered tool call: validate, admit (rate, concurrency, credit: one Redis call), run
on a worker queue chosen by plan and weight (`app.tool_calls.routing`) or answer from the
upstream answer cache right here (`app.tool_calls.cached`), charge or release.

Every data surface (the MCP server, the HTTP data API at /v1) calls `call_tool` (or
`app.tool_calls.batch.call_tool_batch` for a batch); the Celery task calls `run_tool`.
Only a call that returns data costs a credit: invalid arguments are refused before
anything is reserved, and every failure after the reservation (NOT_FOUND, an upstream
outage, the deadline, a crash, the client going away) releases it.
"""

from __future__ import annotations

import base64
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import anyio
from redis.asyncio.client import Pipeline as AsyncPipeline

from app.billing.entitlements import current_entitlements
from app.geodata import service as geodata
from app.kit.config import get_settings
from app.kit.errors import (
    AppError,
    DeadlineExceeded,
    Forbidden,
    Internal,
    error_from_body,
    unavailable_for,
)
from app.kit.principal import CallerPrincipal
from app.metering import service as metering
from app.metering.readings import MeterReading
from app.observability import logs, metrics
from app.plans import Plan
from app.queue import waiter
from app.queue.replies import forget_result
from app.request_log import service as request_log
from app.request_log.refusals import record_refusal
from app.tool_calls import images
from app.tool_calls.cached import cached_reply
from app.tool_calls.images import ImageLink
from app.tool_calls.routing import call_weight, queue_for

logger = logging.getLogger(__name__)

RUN_TOOL_TASK = "tools.run"


@dataclass(frozen=True)
class ToolAnswer:
    structured: dict[str, Any]
    # The image as the worker encoded it: MCP carries base64 too, so it is never decoded here.
    png_base64: str | None
    # The account's credits used in the period, this call included (after the commit).
    credits_used: int | None = None
    # What the answer says of the account's credits (`app.metering.readings`).
    reading: MeterReading | None = None
    # A big image, kept for a while and linked instead of carried (`app.tool_calls.images`).
    image_link: ImageLink | None = None
    # What the map app reads in the MCP result's `_meta` (a choropleth's outlines).
    app_meta: dict[str, Any] | None = None


@dataclass
class Admission:
    """A call let in: its checked arguments, weight and plan, and its reservation, which
    `call_tool` commits or releases (`settled`); whoever admitted it releases it if
    `call_tool` never ran."""

    name: str
    arguments: dict[str, Any]
    plan: Plan
    weight: int
    reservation: metering.Reservation
    settled: bool = False
    # When admission began (time.monotonic()): the call's deadline counts from here.
    started: float = 0.0
    # Set by an edge that reads the commit's reply itself once the answer is out
    # (`close_admission`); the answer then has no `credits_used`.
    answer_before_commit_reply: bool = False
    commit_reply: Callable[[], Awaitable[int]] | None = None
    # Set by an edge whose request the proxy may send twice (`app.metering.retries`).
    retry_key: str | None = None


async def admit(
    principal: CallerPrincipal, name: str, arguments: Mapping[str, Any] | None
) -> Admission:
    """Validate and admit one call (rate, concurrency and credits: one Redis call);
    raises InvalidArgument, Forbidden (e-mail not confirmed), RateLimited or
    QuotaExceeded, holding nothing."""
    started = time.monotonic()
    args = geodata.validate_arguments(name, arguments or {})
    account = await current_entitlements(principal.user_id)
    if not account.email_verified and get_settings().verifies_email:
        raise email_unverified()
    weight = call_weight(name, args)
    reservation = await metering.reserve(
        principal.user_id,
        account.plan,
        key_id=principal.key_id,
        cost=weight,
        credit_cap=account.credit_cap,
        granted=account.granted_now(),
        test=principal.is_test,  # a test key's call: its own counter, never billed
    )
    return Admission(name, args, account.plan, weight, reservation, started=started)


def email_unverified() -> Forbidden:
    return Forbidden(
        "This account's e-mail address is not confirmed yet, so its API keys make no data "
        "calls: follow the link in the e-mail we sent at sign-up (the dashboard can send "
        "it again). No credit was charged.",
        reason="email_unverified",
    )


@metrics.observed_tool_call(geodata.TOOL_SPECS)  # counted, timed and logged by outcome
async def call_tool(
    principal: CallerPrincipal,
    name: str,
    arguments: Mapping[str, Any] | None,
    admission: Admission | None = None,
    *,
    link_images: bool = False,
) -> ToolAnswer:
    """Run one metered call for `principal` (admitted here, or already by the edge:
    `admission`); raises an AppError for anything but data. Every call, whatever its
    outcome, leaves an entry in the account's request log (`app.request_log`). With
    `link_images`, an image too big to carry is kept and linked (`app.tool_calls.images`)."""
    started = time.monotonic()
    try:
        admitted = admission or await admit(principal, name, arguments)
    except BaseException as exc:
        record_refused(principal, name, exc, started)
        raise
    reservation, args = admitted.reservation, admitted.arguments
    call_id: str | None = None
    try:
        dispatcher = waiter()
        call_id = dispatcher.new_task_id("call")
        logs.bind_call_id(call_id)  # also the task id: the worker's lines carry it too
        reply = await cached_reply(name, args)
        if reply is None:  # not all in the answer cache: a worker runs it
            # The deadline covers admission too (a slow Redis or database before the
            # enqueue is time the caller already waited).
            remaining = get_settings().tool_deadline_s - (time.monotonic() - admitted.started)
            if remaining <= 0:
                raise DeadlineExceeded()
            reply = await dispatcher.run_task(
                call_id,
                RUN_TOOL_TASK,
                [name, args],
                deadline_s=remaining,
                queue=queue_for(admitted.plan, admitted.weight),
                forget=False,  # its DEL rides with the commit or the release below
            )
        if "error" in reply:
            raise error_from_body(reply["error"])
        answer = ToolAnswer(
            structured=reply["structured"],
            png_base64=reply.get("png"),
            app_meta=reply.get("appMeta"),
        )
    except BaseException as exc:
        if isinstance(exc, AppError) and exc.reading is None:
            exc.reading = reservation.reading(charged=0)
        entry = _log_entry(principal, name, exc, admitted.started, call_id=call_id)
        with anyio.CancelScope(shield=True):  # a cancelled call must still give its credit back
            admitted.settled = True
            also = request_log.writes_for(principal.user_id, entry)
            await metering.release(reservation, also=_and_forget(also, call_id))
        raise
    admitted.settled = True
    entry = _log_entry(
        principal, name, None, admitted.started, call_id=call_id, credits=metering.CREDITS_PER_CALL
    )
    also = _and_forget(request_log.writes_for(principal.user_id, entry), call_id)
    if link_images and images.needs_link(answer.png_base64):
        link, keep_image = images.keep(principal.user_id, answer.png_base64 or "")
        answer = replace(answer, png_base64=None, image_link=link)
        also = _both(also, keep_image)
    charged = metering.CREDITS_PER_CALL
    unsure = replace(answer, reading=reservation.reading(charged=charged))
    try:
        committed = await metering.send_commit(
            reservation,
            call_id=call_id,
            key_id=principal.key_id,
            tool=name,
            also=also,
            retry_key=admitted.retry_key,
        )
    except Exception as exc:  # some of it may have run (a cluster's nodes each apart)
        _commit_unsure(reservation, exc)
        return unsure
    if admitted.answer_before_commit_reply:
        admitted.commit_reply = committed
        return unsure
    try:
        used = await committed()
    except Exception as exc:
        _commit_unsure(reservation, exc)
        return unsure
    reading = reservation.reading(charged=charged, used=used)
    return replace(answer, credits_used=used, reading=reading)


def _commit_unsure(reservation: metering.Reservation, exc: BaseException) -> None:
    """A commit sent but not confirmed (Redis may or may not have run it, its usage event
    may or may not be in the outbox): the call still answers its data, so whatever was
    charged paid for an answer delivered; a commit not run leaves its reservation to
    expire unpaid, and reconciliation brings the counter to the ledger."""
    logger.error(
        "tool call answered, its commit unconfirmed (reservation %s: charged if Redis ran "
        "it, else it expires unpaid): %r",
        reservation.reservation_id,
        exc,
        exc_info=unavailable_for(exc) is None,  # not an outage's error: its trace too
    )


async def close_admission(admission: Admission) -> None:
    """For the edge that admitted a call, once its answer is out: read the reply of the
    commit `call_tool` sent before answering, or release a reservation `call_tool` never
    settled (the MCP layer refused the request, the client left first). Never raises."""
    with anyio.CancelScope(shield=True):
        if admission.commit_reply is not None:
            try:
                await admission.commit_reply()
            except Exception as exc:  # the commit was sent; Redis may or may not have run it
                logger.error(
                    "tool call answered, its commit's reply lost (reservation %s: charged if "
                    "Redis ran it, else it expires unpaid): %s",
                    admission.reservation.reservation_id,
                    exc,
                )
        elif not admission.settled:
            admission.settled = True
            await metering.release(admission.reservation)


def _and_forget(also: metering.AlsoWrite, call_id: str | None) -> metering.AlsoWrite:
    """`also`, and the DEL of the call's stored result (a worker's reply, if one came)."""
    return also if call_id is None else _both(also, forget_result(call_id))


def _both(first: metering.AlsoWrite, second: metering.AlsoWrite) -> metering.AlsoWrite:
    def add(pipe: AsyncPipeline) -> None:
        first(pipe)
        second(pipe)

    return add


def record_refused(
    principal: CallerPrincipal, name: str, refusal: BaseException, started: float
) -> None:
    """A call refused before its reservation (invalid, rate, concurrency, credits), into
    the request log after its answer (`app.request_log.refusals`). `started`:
    time.monotonic() when the edge took the call. For the edges that admit calls
    themselves (/mcp's, /v1's) and for `call_tool`."""
    entry = _log_entry(principal, name, refusal, started, call_id=None)
    record_refusal(principal.user_id, entry)


def _log_entry(
    principal: CallerPrincipal,
    name: str,
    failure: BaseException | None,
    started: float,
    *,
    call_id: str | None,
    credits: int = 0,
) -> request_log.CallEntry:
    return request_log.entry_for(
        principal_id=principal.key_id,
        principal_type=request_log.principal_type(principal.kind),
        surface=principal.surface,
        tool=name if name in geodata.TOOL_SPECS else "other",
        failure=failure,
        started=started,
        credits=credits,
        call_id=call_id,
    )


def run_tool(name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """The worker's side: run the tool, answer `{"structured", "png"}` or `{"error"}`.

    Expected failures are answers, not task failures, so they reach the caller intact.
    """
    try:
        result = geodata.execute(name, arguments)
    except AppError as exc:
        return {"error": exc.to_body()["error"]}
    except Exception:
        logger.exception("tool %s failed", name)
        return {
            "error": Internal("The tool failed unexpectedly; no credit was charged.").to_body()[
                "error"
            ]
        }
    png = base64.b64encode(result.png).decode("ascii") if result.png else None
    reply = {"structured": result.structured, "png": png}
    return reply | ({"appMeta": result.app_meta} if result.app_meta else {})
