"""One job's page (an upload, an API job or an MCP task): its progress bar (the page's
script polls `/progress` with the session cookie), Cancel, and its results as CSV or JSON
lines, downloaded through the session (no API key in the page). Another account's job
is not found, as an unknown one is."""

from __future__ import annotations

from dataclasses import asdict

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse, StreamingResponse
from sqlmodel import Session

from app.dashboard.jobs_page import JOBS_PAGE, job_row
from app.dashboard.rendering import redirect, render
from app.deps.database import SessionDep
from app.deps.users import SignedInUser
from app.jobs import service as jobs
from app.jobs.files import result_lines
from app.kit.errors import NotFound
from app.models import Job, User

router = APIRouter(include_in_schema=False)

DOWNLOADS = {
    "csv": ("text/csv; charset=utf-8", True),
    "jsonl": ("application/x-ndjson", False),
}


def _own_job(session: Session, user: User, job_id: str) -> Job | None:
    try:
        return jobs.get_job(session, user.id, job_id)
    except NotFound:
        return None


def _not_found(request: Request, user: User) -> Response:
    return render(request, "not_found.html", status=404, user=user)


@router.get(JOBS_PAGE + "/{job_id}")
def job_page(job_id: str, request: Request, session: SessionDep, user: SignedInUser) -> Response:
    job = _own_job(session, user, job_id)
    if job is None:
        return _not_found(request, user)
    return render(request, "job.html", user=user, job=job_row(job), expires_at=job.expires_at)


@router.get(JOBS_PAGE + "/{job_id}/progress")
def job_progress(job_id: str, session: SessionDep, user: SignedInUser) -> Response:
    """The page's polling: the job's progress as JSON (404 in the error envelope)."""
    job = jobs.get_job(session, user.id, job_id)
    body = asdict(jobs.progress(job))
    return JSONResponse(body, headers={"Cache-Control": "no-store"})


@router.post(JOBS_PAGE + "/{job_id}/cancel")
def cancel_job(job_id: str, request: Request, session: SessionDep, user: SignedInUser) -> Response:
    """Rows already done are kept (and charged when they had data); nothing runs after."""
    if _own_job(session, user, job_id) is None:
        return _not_found(request, user)
    jobs.cancel_job(session, user.id, job_id)
    session.commit()
    return redirect(f"{JOBS_PAGE}/{job_id}?notice=job_cancelled")


@router.get(JOBS_PAGE + "/{job_id}/results.{extension}")
def download_results(
    job_id: str, extension: str, request: Request, session: SessionDep, user: SignedInUser
) -> Response:
    """The rows done so far, in input order (every row once the job has ended)."""
    job = _own_job(session, user, job_id)
    if job is None or extension not in DOWNLOADS:
        return _not_found(request, user)
    media_type, as_csv = DOWNLOADS[extension]
    lines = result_lines(user.id, job.id, 0, job.rows_total, as_csv=as_csv)
    headers = {
        "Cache-Control": "no-store",
        "Content-Disposition": f'attachment; filename="{job.id}-results.{extension}"',
    }
    return StreamingResponse(lines, media_type=media_type, headers=headers)
