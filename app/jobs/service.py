"""The jobs service (the contract is in the package docstring, `app.jobs`)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func
from sqlmodel import Session, col, select

from app.geodata.catalogue import BATCH_FORMS, spec_for, validate_arguments
from app.jobs.pace import rows_per_s
from app.kit.clock import as_utc, utcnow
from app.kit.config import get_settings
from app.kit.errors import AppError, InvalidArgument, NotFound, RateLimited, error_from_body
from app.kit.ids import random_lower_alnum
from app.models import Job, JobChunk, User
from app.plans import plan_of
from app.queue import celery_app
from app.queue.celery import JOBS_QUEUE
from app.tool_calls.service import email_unverified

RUN_CHUNK_TASK = "jobs.run_chunk"

WORKING, COMPLETED, CANCELLED, FAILED = "working", "completed", "cancelled", "failed"
FINISHED = (COMPLETED, CANCELLED, FAILED)
CANCELLED_ERROR = {
    "code": "CANCELLED",
    "message": "The job was cancelled before this row ran; no credit was charged.",
}


@dataclass(frozen=True)
class JobProgress:
    status: str
    rows_total: int
    rows_done: int
    rows_with_data: int
    rows_with_errors: int
    credits: int
    seconds_left: float | None  # None: not known yet (nothing done) or finished
    message: str


@dataclass(frozen=True)
class JobRow:
    row: int
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None


def new_job_id() -> str:
    return "job_" + random_lower_alnum(20)


def submit_job(
    session: Session,
    *,
    user_id: str,
    key_id: str | None,
    tool: str,
    items: Sequence[Any],
    origin: str,
    max_rows: int | None = None,
) -> Job:
    settings = get_settings()
    user = session.get(User, user_id)
    if user is not None and user.email_verified_at is None and settings.verifies_email:
        raise email_unverified()  # as for a single call: no data before the link is followed
    rows = checked_rows(tool, items, max_rows)
    working = jobs_working(session, user_id)
    if working >= settings.jobs_per_account:
        raise RateLimited(
            f"This account has {working} jobs working, the most it may run at once; "
            "submit this one when one of them ends (or cancel one). Nothing was charged.",
            limit="jobs",
            retryable=True,
            retryAfterSeconds=10,
        )
    # A chunk is at most about 5 s of the plan's bulk pace, so a slow plan's job still
    # shows progress often (and a chunk never waits for more tokens than a bucket holds).
    pace_rows = int(rows_per_s(plan_of(session, user_id)) * 5)
    chunk_rows = max(1, min(settings.job_chunk_rows, pace_rows))
    chunks = [rows[i : i + chunk_rows] for i in range(0, len(rows), chunk_rows)]
    job = Job(
        id=new_job_id(),
        user_id=user_id,
        key_id=key_id,
        tool=tool,
        origin=origin,
        rows_total=len(rows),
        chunk_rows=chunk_rows,
        chunks_total=len(chunks),
    )
    session.add(job)
    session.flush()
    for index, chunk in enumerate(chunks):
        session.add(
            JobChunk(
                job_id=job.id,
                index=index,
                first_row=index * chunk_rows,
                items=json.dumps(chunk, separators=(",", ":")),
            )
        )
    session.flush()
    return job


def checked_rows(
    tool: str, items: Sequence[Any], max_rows: int | None = None
) -> list[dict[str, Any]]:
    """Each row's checked arguments, or {"error": ...} in its place; refuses the whole job
    for an unknown tool or one without a batch form, no rows or more than `max_rows`."""
    settings = get_settings()
    spec_for(tool)  # NOT_FOUND for an unknown tool
    batch = BATCH_FORMS.get(tool)
    if batch is None:
        raise InvalidArgument(
            f"{tool} does not run as a job; jobs run {', '.join(BATCH_FORMS)}",
        )
    limit = min(max_rows or settings.job_max_rows, settings.job_max_rows)
    if not items:
        raise InvalidArgument("A job needs at least one row")
    if len(items) > limit:
        raise InvalidArgument(f"A job takes at most {limit:,} rows; this one has {len(items):,}")
    lists = {b.argument for b in batch.lists}
    return [_checked_row(tool, item, lists) for item in items]


def jobs_working(session: Session, user_id: str) -> int:
    return int(
        session.exec(
            select(func.count()).where(Job.user_id == user_id, Job.status == WORKING)
        ).one()
    )


def _checked_row(tool: str, item: Any, lists: set[str]) -> dict[str, Any]:
    """The row's arguments, checked, or {"error": ...} (INVALID_ARGUMENT in its place)."""
    if isinstance(item, AppError):  # a row the edge could not read (a malformed CSV line)
        return item.to_body()
    try:
        if isinstance(item, dict) and lists & item.keys():
            raise InvalidArgument(
                f"A row is one call: {', '.join(sorted(lists & item.keys()))} is for batches"
            )
        return {"args": validate_arguments(tool, item)}
    except AppError as exc:
        return exc.to_body()


def start_job(job_id: str, chunks: int | None = None) -> None:
    """Send the job's first chunks (after the commit that stored it)."""
    count = chunks or get_settings().job_chunks_in_flight
    for index in range(count):
        send_chunk(job_id, index)


def send_chunk(job_id: str, index: int, countdown: float | None = None) -> None:
    celery_app.send_task(
        RUN_CHUNK_TASK,
        args=[job_id, index],
        queue=JOBS_QUEUE,
        routing_key=JOBS_QUEUE,
        ignore_result=True,
        countdown=countdown,
    )


def get_job(session: Session, user_id: str, job_id: str) -> Job:
    job = session.get(Job, job_id)
    if job is None or job.user_id != user_id:
        raise NotFound(f"No job {job_id!r} in this account (results are deleted after they expire)")
    return job


def progress(job: Job, now: datetime | None = None) -> JobProgress:
    seconds_left: float | None = None
    if job.status == WORKING and job.rows_done:
        elapsed = ((now or utcnow()) - as_utc(job.created_at)).total_seconds()
        rate = job.rows_done / max(elapsed, 0.001)
        seconds_left = round((job.rows_total - job.rows_done) / rate, 1)
    message = f"{job.rows_done:,} of {job.rows_total:,} rows"
    if job.status == WORKING and job.stop_error:
        message += "; credit limit reached: the rest are QUOTA_EXCEEDED"
    return JobProgress(
        status=job.status,
        rows_total=job.rows_total,
        rows_done=job.rows_done,
        rows_with_data=job.rows_with_data,
        rows_with_errors=job.rows_with_errors,
        credits=job.credits,
        seconds_left=seconds_left,
        message=message,
    )


def finish(job: Job, status: str, now: datetime | None = None) -> None:
    at = now or utcnow()
    job.status = status
    job.finished_at = at
    job.updated_at = at
    job.expires_at = at + timedelta(seconds=get_settings().job_results_ttl_s)


def cancel_job(session: Session, user_id: str, job_id: str) -> Job:
    job = get_job(session, user_id, job_id)
    if job.status == WORKING:
        finish(job, CANCELLED)
        session.add(job)
        session.flush()
    return job


def list_jobs(
    session: Session, user_id: str, *, origin: str | None = None, limit: int = 50
) -> list[Job]:
    statement = select(Job).where(Job.user_id == user_id)
    if origin is not None:
        statement = statement.where(Job.origin == origin)
    statement = statement.order_by(col(Job.created_at).desc()).limit(limit)
    return list(session.exec(statement))


def job_rows(
    session: Session, user_id: str, job_id: str, *, offset: int = 0, limit: int = 1000
) -> list[JobRow]:
    job = get_job(session, user_id, job_id)
    if offset >= job.rows_total or limit <= 0:
        return []
    first, last = offset // job.chunk_rows, (offset + limit - 1) // job.chunk_rows
    chunks = session.exec(
        select(JobChunk)
        .where(JobChunk.job_id == job.id, JobChunk.index >= first, JobChunk.index <= last)
        .order_by(col(JobChunk.index))
    )
    rows: list[JobRow] = []
    for chunk in chunks:
        answers = _chunk_answers(job, chunk)
        if answers is None:
            break  # not run yet: the rows stop here
        for place, answer in enumerate(answers):
            row = chunk.first_row + place
            if offset <= row < offset + limit:
                rows.append(JobRow(row, answer.get("result"), answer.get("error")))
    return rows


def _chunk_answers(job: Job, chunk: JobChunk) -> list[dict[str, Any]] | None:
    if chunk.results is not None:
        answers: list[dict[str, Any]] = json.loads(chunk.results)
        return answers
    if job.status == WORKING:
        return None
    # Never ran (the job was cancelled or failed first): each row says so, free.
    items = json.loads(chunk.items)
    return [{"error": item.get("error", CANCELLED_ERROR)} for item in items]


def batch_result(session: Session, user_id: str, job_id: str) -> dict[str, Any]:
    job = get_job(session, user_id, job_id)
    results: list[dict[str, Any]] = []
    for row in job_rows(session, user_id, job_id, offset=0, limit=job.rows_total):
        if row.error is None:
            results.append({"status": 200, "result": row.result})
        else:
            results.append({"status": row_status(row.error), "error": row.error})
    return {"results": results, "credits": job.credits}


def row_status(error: dict[str, Any]) -> int:
    """The HTTP status the row's call alone would have been answered with."""
    code = error.get("code")
    if code == CANCELLED_ERROR["code"]:
        return 409
    if code == "INVALID_ARGUMENT":  # as /v1 answers it (app.http.errors)
        return 400
    return error_from_body(error).status
