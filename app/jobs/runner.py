"""The worker's side of jobs: run one chunk, resume stalled jobs, delete expired ones.

`run_chunk` (a task on the `jobs` queue) may run twice, or twice at once: its charge is
remembered per chunk in Redis (`app.metering.chunks`) and its answers and the job's
counters are written only by the run that moves the chunk from pending to done (one
conditional UPDATE, one transaction). Only that run sends the job's next chunk.
"""

from __future__ import annotations

import json
import logging
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import delete, func, update
from sqlmodel import col, select

from app.jobs import pace
from app.jobs.service import (
    COMPLETED,
    WORKING,
    finish,
    send_chunk,
)
from app.kit.clock import utcnow
from app.kit.config import get_settings
from app.kit.db import new_session
from app.metering.chunks import charge_chunk, forget_markers
from app.metering.outbox import DRAIN_TASK
from app.metering.refusals import refusal
from app.metering.scripts import OVER_CREDITS
from app.metering.usage import credit_cap_of
from app.models import Job, JobChunk
from app.plans import limits_for, plan_of
from app.queue import enqueue
from app.tool_calls.service import run_tool

logger = logging.getLogger(__name__)

PENDING, DONE = "pending", "done"
RESUME_STALLED_TASK = "jobs.resume_stalled"
PURGE_EXPIRED_TASK = "jobs.purge_expired"


def run_chunk(job_id: str, index: int) -> str:
    """Run chunk `index` of the job; returns what happened (for logs and tests)."""
    with new_session() as session:
        job = session.get(Job, job_id)
        if job is None or job.status != WORKING:
            return "job gone or finished"
        chunk = session.exec(
            select(JobChunk).where(JobChunk.job_id == job_id, JobChunk.index == index)
        ).first()
        if chunk is None or chunk.state != PENDING:
            return "chunk done before"
        plan = plan_of(session, job.user_id)
        cap = credit_cap_of(session, job.user_id)
        items: list[dict[str, Any]] = json.loads(chunk.items)
        stop = json.loads(job.stop_error) if job.stop_error else None
        user_id, key_id, tool = job.user_id, job.key_id, job.tool
        chunk_id, first_row, chunks_total = chunk.id, chunk.first_row, job.chunks_total
    valid = [place for place, item in enumerate(items) if "args" in item]
    if valid and stop is None:
        wait_s = pace.take(user_id, plan, len(valid))
        if wait_s > 0:  # over the account's bulk pace: this chunk again, later
            send_chunk(job_id, index, countdown=wait_s)
            return f"paced {wait_s:.3f} s"
    answers: list[dict[str, Any]] = [{"error": item.get("error")} for item in items]
    new_stop = None
    if stop is not None:  # the credit limit stopped the job: no more rows run, free
        for place in valid:
            answers[place] = {"error": stop}
    else:
        for place in valid:
            reply = run_tool(tool, items[place]["args"])
            if "error" in reply:
                answers[place] = {"error": reply["error"]}
            else:
                answers[place] = {"result": reply["structured"]}
        data = [place for place in valid if "result" in answers[place]]
        charge = charge_chunk(
            user_id=user_id,
            key_id=key_id,
            plan=plan,
            credit_cap=cap,
            job_id=job_id,
            chunk=index,
            tool=tool,
            data_rows=[first_row + place for place in data],
        )
        if charge.charged < len(data):
            error = refusal(
                OVER_CREDITS,
                plan,
                limits_for(plan),
                cap,
                charge.used,
                0,
                0,
                charge.period,
                cost=1,
                calls=len(data) - charge.charged,
            )
            new_stop = error.to_body()["error"]
            for place in data[charge.charged :]:
                answers[place] = {"error": new_stop}
    with_data = sum("result" in answer for answer in answers)
    wrote, job_status = _record(job_id, chunk_id, answers, with_data, new_stop)
    if not wrote:
        return "chunk done meanwhile"
    if with_data:
        enqueue(DRAIN_TASK)  # the usage events into the ledger soon (beat would anyway)
    following = index + get_settings().job_chunks_in_flight
    if job_status == WORKING and following < chunks_total:
        send_chunk(job_id, following)
    return f"done: {with_data} with data"


def _record(
    job_id: str,
    chunk_id: int | None,
    answers: list[dict[str, Any]],
    with_data: int,
    new_stop: dict[str, Any] | None,
) -> tuple[bool, str]:
    """The chunk's answers and the job's counters, once (pending -> done), and the job
    completed when this was its last row. Returns (written, the job's status)."""
    now = utcnow()
    with new_session() as session:
        moved = session.execute(
            update(JobChunk)
            .where(col(JobChunk.id) == chunk_id, col(JobChunk.state) == PENDING)
            .values(state=DONE, results=json.dumps(answers, separators=(",", ":")))
        )
        if moved.rowcount != 1:  # type: ignore[attr-defined]
            session.rollback()
            return False, ""
        values: dict[str, Any] = {
            "rows_done": col(Job.rows_done) + len(answers),
            "rows_with_data": col(Job.rows_with_data) + with_data,
            "rows_with_errors": col(Job.rows_with_errors) + len(answers) - with_data,
            "credits": col(Job.credits) + with_data,
            "updated_at": now,
        }
        if new_stop is not None:
            values["stop_error"] = func.coalesce(col(Job.stop_error), json.dumps(new_stop))
        session.execute(update(Job).where(col(Job.id) == job_id).values(**values))
        session.commit()
        job = session.get(Job, job_id)
        assert job is not None
        session.refresh(job)
        if job.status == WORKING and job.rows_done >= job.rows_total:
            finish(job, COMPLETED, now)
            session.add(job)
            session.commit()
        return True, job.status


def resume_stalled(now: datetime | None = None) -> int:
    """Jobs working with no progress for `job_stall_s` (a worker killed mid-chunk, a
    message lost): their first pending chunks are sent again, or, all done, the job is
    completed. Returns how many jobs were resumed."""
    settings = get_settings()
    at = now or utcnow()
    cutoff = at - timedelta(seconds=settings.job_stall_s)
    resumed = 0
    with new_session() as session:
        stalled = session.exec(
            select(Job).where(Job.status == WORKING, col(Job.updated_at) < cutoff)
        ).all()
        for job in stalled:
            pending = session.exec(
                select(JobChunk.index)
                .where(JobChunk.job_id == job.id, JobChunk.state == PENDING)
                .order_by(col(JobChunk.index))
                .limit(settings.job_chunks_in_flight)
            ).all()
            if not pending:
                finish(job, COMPLETED, at)
            else:
                job.updated_at = at
            session.add(job)
            session.commit()
            for index in pending:
                send_chunk(job.id, index)
            resumed += 1
    if resumed:
        logger.warning("resumed %d stalled jobs", resumed)
    return resumed


def purge_expired(now: datetime | None = None, batch: int = 100) -> int:
    """Delete finished jobs whose results have expired; returns how many."""
    at = now or utcnow()
    purged = 0
    with new_session() as session:
        while True:
            expired = session.exec(
                select(Job.id, Job.user_id, Job.chunks_total)
                .where(col(Job.expires_at) < at)
                .limit(batch)
            ).all()
            if not expired:
                break
            ids = [job_id for job_id, _, _ in expired]
            session.execute(delete(JobChunk).where(col(JobChunk.job_id).in_(ids)))
            session.execute(delete(Job).where(col(Job.id).in_(ids)))
            session.commit()
            for job_id, user_id, chunks in expired:  # no chunk of theirs runs again
                forget_markers(user_id, job_id, chunks)
            purged += len(ids)
    return purged
