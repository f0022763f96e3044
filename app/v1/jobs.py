"""Bulk jobs over /v1 (`app.jobs`): submit one tool over up to 100,000 rows (JSON items or
a CSV whose header names the tool's arguments), read its progress, its results (JSON
lines or CSV by `Accept`, in input order), cancel it, list the account's jobs.

Thin: authenticate as every /v1 call does, read the body, call the service, commit,
then send the job's first chunks. Errors are the envelope, with /v1's statuses.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse
from starlette.concurrency import run_in_threadpool

from app.geodata.catalogue import BATCH_FORMS
from app.jobs import service as jobs
from app.jobs.files import csv_items, result_lines
from app.kit.clock import iso_ms
from app.kit.db import new_session
from app.kit.errors import Forbidden, InvalidArgument
from app.models import Job
from app.v1.endpoints import Principal

JOBS_PATH = "/v1/jobs"
NDJSON = "application/x-ndjson"

router = APIRouter(include_in_schema=False)  # described by app.v1.openapi


def test_key_refused() -> Forbidden:
    """A test-mode key's job submission: refused before anything is stored or charged."""
    return Forbidden(
        "Test-mode keys (svc_test_ak_) cannot start bulk jobs: a job is charged to the "
        "account's live credits. Use a live key (svc_live_ak_), or call the tool or its "
        "batch endpoint with the test key. Nothing was charged.",
        reason="test_key",
    )


def job_body(job: Job) -> dict[str, Any]:
    progress = jobs.progress(job)
    return {
        "id": job.id,
        "tool": job.tool,
        "status": job.status,
        "origin": job.origin,
        "rowsTotal": progress.rows_total,
        "rowsDone": progress.rows_done,
        "rowsWithData": progress.rows_with_data,
        "rowsWithErrors": progress.rows_with_errors,
        "credits": progress.credits,
        "secondsLeft": progress.seconds_left,
        "statusMessage": progress.message,
        "createdAt": iso_ms(job.created_at),
        "finishedAt": iso_ms(job.finished_at) if job.finished_at else None,
        "expiresAt": iso_ms(job.expires_at) if job.expires_at else None,
        "results": f"{JOBS_PATH}/{job.id}/results",
    }


def _query_tool(request: Request) -> str | None:
    tool = request.query_params.get("tool")
    if tool is not None and tool not in BATCH_FORMS:
        raise InvalidArgument(f"tool: must be one of {', '.join(sorted(BATCH_FORMS))}")
    return tool


async def _submitted(request: Request) -> tuple[str, list[Any]]:
    content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    query_tool = _query_tool(request)
    raw = await request.body()
    if content_type == "text/csv":
        tool = query_tool
        if not tool:
            raise InvalidArgument("A CSV job names its tool: POST /v1/jobs?tool=geocode")
        return tool, csv_items(tool, raw)
    try:
        body = json.loads(raw)
    except ValueError:
        raise InvalidArgument(
            'The body must be JSON {"tool": ..., "items": [...]} or a CSV (text/csv)'
        ) from None
    if not isinstance(body, dict) or set(body) != {"tool", "items"}:
        raise InvalidArgument('The body must be a JSON object {"tool": ..., "items": [...]}')
    tool, items = body["tool"], body["items"]
    if not isinstance(tool, str) or not isinstance(items, list):
        raise InvalidArgument('"tool" must be a tool name and "items" a list of its arguments')
    if not all(isinstance(item, dict) for item in items):  # as a batch: no call to read
        raise InvalidArgument('"items" must be a list of objects, each a call\'s arguments')
    if query_tool is not None and query_tool != tool:
        raise InvalidArgument(f"tool: the query says {query_tool}, the body {tool}")
    return tool, items


@router.post(JOBS_PATH)
async def submit(request: Request, principal: Principal) -> Response:
    if principal.is_test:  # a job's chunks are charged to live credits (app.metering.chunks)
        raise test_key_refused()
    tool, items = await _submitted(request)

    def store() -> Job:
        with new_session() as session:
            job = jobs.submit_job(
                session,
                user_id=principal.user_id,
                key_id=principal.key_id,
                tool=tool,
                items=items,
                origin="v1",
            )
            session.commit()
            return job

    job = await run_in_threadpool(store)
    await run_in_threadpool(jobs.start_job, job.id)
    location = f"{JOBS_PATH}/{job.id}"
    return JSONResponse(job_body(job), status_code=202, headers={"Location": location})


@router.get(JOBS_PATH)
async def list_jobs(principal: Principal) -> Response:
    def read() -> list[dict[str, Any]]:
        with new_session() as session:
            return [job_body(job) for job in jobs.list_jobs(session, principal.user_id)]

    return JSONResponse({"jobs": await run_in_threadpool(read)})


@router.get(JOBS_PATH + "/{job_id}")
async def get_job(job_id: str, principal: Principal) -> Response:
    def read() -> dict[str, Any]:
        with new_session() as session:
            return job_body(jobs.get_job(session, principal.user_id, job_id))

    return JSONResponse(await run_in_threadpool(read))


@router.delete(JOBS_PATH + "/{job_id}")
async def cancel_job(job_id: str, principal: Principal) -> Response:
    def cancel() -> dict[str, Any]:
        with new_session() as session:
            job = jobs.cancel_job(session, principal.user_id, job_id)
            session.commit()
            return job_body(job)

    return JSONResponse(await run_in_threadpool(cancel))


def _page(request: Request, name: str, default: int) -> int:
    text = request.query_params.get(name)
    if text is None:
        return default
    if not text.isdigit():
        raise InvalidArgument(f"{name}: must be a whole number of 0 or more")
    return int(text)


@router.get(JOBS_PATH + "/{job_id}/results")
async def results(request: Request, job_id: str, principal: Principal) -> Response:
    """The rows from `offset` (default 0), at most `limit` (default all), in input order;
    rows not run yet end the list. CSV when `Accept` asks for text/csv, else JSON lines."""
    offset = _page(request, "offset", 0)

    def total() -> int:
        with new_session() as session:
            return jobs.get_job(session, principal.user_id, job_id).rows_total

    rows_total = await run_in_threadpool(total)  # NOT_FOUND before the stream starts
    limit = _page(request, "limit", rows_total)
    as_csv = "text/csv" in request.headers.get("accept", "")
    lines = result_lines(principal.user_id, job_id, offset, limit, as_csv=as_csv)
    media_type = "text/csv; charset=utf-8" if as_csv else NDJSON
    return StreamingResponse(lines, media_type=media_type, headers={"Cache-Control": "no-store"})
