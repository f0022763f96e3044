"""The jobs page: upload a CSV for one tool, see what it would cost, start it; the
account's jobs and MCP tasks in one table (`app.jobs`). The upload waits on the server
between its preview and Start (`app.jobs.uploads`): the page holds only a token. A job's
own page, its progress, Cancel and the downloads: `job_page`."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, File, Form, Request, Response, UploadFile
from sqlmodel import Session

from app.dashboard.rendering import redirect, render
from app.deps.database import SessionDep
from app.deps.users import SignedInUser
from app.geodata.catalogue import BATCH_FORMS, spec_for
from app.jobs import service as jobs
from app.jobs.estimate import estimate_job
from app.jobs.files import csv_items
from app.jobs.uploads import UPLOAD_TTL_S, stage_upload, take_upload
from app.kit.config import get_settings
from app.kit.errors import AppError, Forbidden, InvalidArgument
from app.models import Job, User

router = APIRouter(include_in_schema=False)

JOBS_PAGE = "/dashboard/jobs"
LISTED_JOBS = 50
# Where a job came from, as the table names it ("mcp-call": a task of one call).
KINDS = {"v1": "API job", "dashboard": "Upload", "mcp": "MCP task", "mcp-call": "MCP task"}


def tool_columns() -> dict[str, list[str]]:
    """Each job tool's CSV columns: the arguments of one call (not the batch's lists)."""
    columns: dict[str, list[str]] = {}
    for tool, batch in BATCH_FORMS.items():
        lists = {b.argument for b in batch.lists}
        fields = spec_for(tool).args_model.model_fields
        columns[tool] = [name for name in fields if name not in lists]
    return columns


def job_row(job: Job) -> dict[str, Any]:
    progress = jobs.progress(job)
    return {
        "id": job.id,
        "kind": KINDS.get(job.origin, job.origin),
        "tool": job.tool,
        "created_at": job.created_at,
        "progress": progress,
    }


def _jobs_page(
    request: Request, session: Session, user: User, *, status: int = 200, **context: Any
) -> Response:
    settings = get_settings()
    listed = jobs.list_jobs(session, user.id, limit=LISTED_JOBS)
    context.setdefault("chosen_tool", next(iter(BATCH_FORMS)))
    return render(
        request,
        "jobs.html",
        status=status,
        user=user,
        jobs=[job_row(job) for job in listed],
        tools=tool_columns(),
        max_rows=settings.job_max_rows,
        max_bytes=settings.job_body_max_bytes,
        results_days=settings.job_results_ttl_s // 86_400,
        **context,
    )


@router.get(JOBS_PAGE)
def jobs_page(request: Request, session: SessionDep, user: SignedInUser) -> Response:
    return _jobs_page(request, session, user)


def email_unconfirmed(user: User) -> Forbidden | None:
    """Jobs make data calls: refused, as a key's calls are, until the e-mail is confirmed."""
    if user.email_verified_at is None and get_settings().verifies_email:
        return Forbidden(
            "Confirm your e-mail address first (follow the link we sent at sign-up): until "
            "then this account makes no data calls, jobs included. Nothing was charged."
        )
    return None


def _read_upload(file: UploadFile | None) -> tuple[bytes, str]:
    """The file's bytes and name; InvalidArgument for no file or one over the limit (read
    no further than the limit)."""
    if file is None or not file.filename:
        raise InvalidArgument("Choose a CSV file to upload")
    limit = get_settings().job_body_max_bytes
    data = file.file.read(limit + 1)
    if len(data) > limit:
        raise InvalidArgument(f"The file is larger than {limit:,} bytes; split it into jobs")
    return data, file.filename[:120]


def _preview(
    request: Request,
    session: Session,
    user: User,
    tool: str,
    data: bytes,
    filename: str,
    **context: Any,
) -> Response:
    """The cost before the start, with the Start form (the upload kept under a token)."""
    estimate = estimate_job(session, user.id, tool, csv_items(tool, data))
    token = stage_upload(user.id, tool, data)
    return _jobs_page(
        request,
        session,
        user,
        estimate=estimate,
        token=token,
        filename=filename,
        chosen_tool=tool,
        upload_minutes=UPLOAD_TTL_S // 60,
        **context,
    )


@router.post(JOBS_PAGE + "/preview")
def preview_job(
    request: Request,
    session: SessionDep,
    user: SignedInUser,
    tool: Annotated[str, Form(max_length=64)] = "",
    file: Annotated[UploadFile | None, File()] = None,
) -> Response:
    """Reads and checks the CSV, shows rows, credits, the month's credits after it and the
    time at the plan's bulk pace; nothing runs and nothing is charged until Start."""
    chosen = tool if tool in BATCH_FORMS else next(iter(BATCH_FORMS))
    try:
        if tool not in BATCH_FORMS:
            raise InvalidArgument(f"Choose a tool: one of {', '.join(BATCH_FORMS)}")
        if refused := email_unconfirmed(user):
            raise refused
        data, filename = _read_upload(file)
        return _preview(request, session, user, tool, data, filename)
    except AppError as exc:
        session.rollback()
        return _jobs_page(
            request, session, user, status=exc.status, error=exc.message, chosen_tool=chosen
        )


@router.post(JOBS_PAGE + "/start")
def start_job(
    request: Request,
    session: SessionDep,
    user: SignedInUser,
    token: Annotated[str, Form(max_length=64)] = "",
    filename: Annotated[str, Form(max_length=120)] = "",
) -> Response:
    """Starts the previewed upload (once: the token is spent), then to the job's page."""
    staged = take_upload(user.id, token) if token else None
    if staged is None:
        return redirect(JOBS_PAGE + "?notice=upload_gone")
    try:
        if refused := email_unconfirmed(user):
            raise refused
        job = jobs.submit_job(
            session,
            user_id=user.id,
            key_id=None,
            tool=staged.tool,
            items=csv_items(staged.tool, staged.data),
            origin="dashboard",
        )
    except AppError as exc:  # e.g. the account's jobs at once: the preview again, kept
        session.rollback()
        try:
            return _preview(
                request,
                session,
                user,
                staged.tool,
                staged.data,
                filename,
                status=exc.status,
                error=exc.message,
            )
        except AppError:
            return _jobs_page(request, session, user, status=exc.status, error=exc.message)
    session.commit()
    jobs.start_job(job.id)
    return redirect(f"{JOBS_PAGE}/{job.id}")
