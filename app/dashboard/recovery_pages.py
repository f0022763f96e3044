"""The pages an e-mail link leads to, and the one that sends a reset link: forgot
password, reset password, confirm an address. None needs a session.

A link's token is in its fragment (`#t=...`): the page's script moves it into the
form's hidden `token` field and off the address bar, and the form posts it in its body,
so it never appears in a URL the server sees or logs."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, BackgroundTasks, Form, Request, Response
from pydantic import ValidationError

from app.dashboard.rendering import field_error_of, field_errors, redirect, render
from app.deps.client import client_ip_of
from app.deps.database import SessionDep
from app.deps.users import OptionalUser
from app.kit.errors import AppError, InvalidArgument
from app.kit.redis_client import sync_redis
from app.users import email_address, recovery, throttle
from app.users.messages import Notice
from app.users.notices import request_notice
from app.users.schemas import PasswordResetConfirm, PasswordResetRequest

router = APIRouter(prefix="/dashboard", include_in_schema=False)

FormText = Annotated[str, Form()]

RESET_SENT = (
    "If an account uses this address, a link to reset its password is on its way. It "
    "works for 30 minutes."
)


@router.get("/forgot-password")
def forgot_password_page(request: Request, user: OptionalUser) -> Response:
    return render(request, "forgot_password.html", user=user, email="")


@router.post("/forgot-password")
def forgot_password(
    request: Request, background: BackgroundTasks, user: OptionalUser, email: FormText = ""
) -> Response:
    """The same answer for every address (the JSON API's 202, as a page)."""
    try:
        store = sync_redis()
        throttle.check_rate(store, client_ip_of(request.client))
        body = PasswordResetRequest(email=email)
        if recovery.reset_wanted(store, body.email):
            background.add_task(recovery.send_reset_link, body.email)
    except ValidationError as exc:
        errors = field_errors(exc)
        return render(
            request, "forgot_password.html", status=422, user=user, email=email, field_errors=errors
        )
    except AppError as exc:
        return render(
            request, "forgot_password.html", status=exc.status, user=user, email=email,
            error=exc.message,
        )  # fmt: skip
    return render(request, "forgot_password.html", user=user, email=email, sent=RESET_SENT)


@router.get("/reset-password")
def reset_password_page(request: Request, user: OptionalUser) -> Response:
    return render(request, "reset_password.html", user=user, token="")


@router.post("/reset-password")
def reset_password(
    request: Request, session: SessionDep, token: FormText = "", password: FormText = ""
) -> Response:
    def again(status: int, **context: object) -> Response:
        # The token goes back into the form (the address bar no longer has it).
        return render(request, "reset_password.html", status=status, token=token, **context)

    try:
        throttle.check_rate(sync_redis(), client_ip_of(request.client))
        body = PasswordResetConfirm(token=token, password=password)
        reset = recovery.reset_password(session, body.token, body.password)
    except ValidationError as exc:
        return again(422, field_errors=field_errors(exc))
    except InvalidArgument as exc:
        errors = field_error_of(exc.message, ("password",))
        if errors:
            return again(exc.status, field_errors=errors)
        return again(exc.status, error=exc.message.removeprefix("token: ").capitalize())
    except AppError as exc:
        return again(exc.status, error=exc.message)
    session.commit()
    request_notice(Notice.PASSWORD_CHANGED, reset.user_id)
    response = redirect("/dashboard/signin?notice=password_reset")
    response.delete_cookie("svc_session", path="/")
    return response


@router.get("/confirm-email")
def confirm_email_page(request: Request, user: OptionalUser) -> Response:
    return render(request, "confirm_email.html", user=user, token="")


@router.post("/confirm-email")
def confirm_email(
    request: Request, session: SessionDep, user: OptionalUser, token: FormText = ""
) -> Response:
    try:
        throttle.check_rate(sync_redis(), client_ip_of(request.client))
        confirmed = email_address.confirm(session, token)
    except AppError as exc:
        message = exc.message.removeprefix("token: ").capitalize()
        return render(
            request, "confirm_email.html", status=exc.status, user=user, token="", error=message
        )
    user_id, previous = confirmed.user.id, confirmed.previous_email
    session.commit()
    if previous is not None:
        request_notice(Notice.EMAIL_CHANGED, user_id, previous)
    notice = "email_moved" if previous is not None else "email_confirmed"
    if user is not None and user.id == user_id:
        return redirect(f"/?notice={notice}")
    return redirect(f"/dashboard/signin?notice={notice}")
