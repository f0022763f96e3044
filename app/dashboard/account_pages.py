"""The account page: the e-mail address (confirm it, move to another), the password,
and deleting the account. Each form posts here and calls the JSON API's services."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Cookie, Form, Request, Response
from pydantic import ValidationError

from app.dashboard.rendering import field_error_of, field_errors, redirect, render
from app.deps.client import client_ip_of
from app.deps.database import SessionDep
from app.deps.users import SESSION_COOKIE, SignedInUser
from app.kit.errors import AppError
from app.kit.redis_client import sync_redis
from app.models import User
from app.users import deletion, email_address, recovery
from app.users.mailbox import normalise_email
from app.users.messages import Notice
from app.users.notices import request_notice
from app.users.schemas import ChangeEmailRequest, ChangePasswordRequest, DeleteAccountRequest

router = APIRouter(prefix="/dashboard/account", include_in_schema=False)

FormText = Annotated[str, Form()]
SessionCookie = Annotated[str | None, Cookie(alias=SESSION_COOKIE)]

# The JSON API's field names (what messages name) -> each form's inputs (one page holds
# three forms, so their ids differ).
PASSWORD_FIELDS = {"currentPassword": "current_password", "newPassword": "new_password"}
EMAIL_FIELDS = {"email": "new_email", "currentPassword": "email_password"}
DELETE_FIELDS = {"currentPassword": "delete_password"}


def account_page(
    request: Request,
    user: User,
    *,
    status: int = 200,
    form: str | None = None,
    error: str | None = None,
    errors: dict[str, str] | None = None,
    new_email: str = "",
) -> Response:
    """`form` names the form whose `errors` these are (the page has three)."""
    return render(
        request,
        "account.html",
        status=status,
        user=user,
        form=form,
        error=error,
        field_errors=errors or {},
        new_email=new_email,
    )


def _errors_of(exc: ValidationError | AppError, fields: dict[str, str]) -> dict[str, str]:
    if isinstance(exc, ValidationError):
        found = field_errors(exc)
    else:
        found = field_error_of(exc.message, tuple(fields))
    return {fields.get(name, name): message for name, message in found.items()}


@router.get("")
def account(request: Request, user: SignedInUser) -> Response:
    return account_page(request, user)


@router.post("/verification")
def resend_verification(request: Request, user: SignedInUser) -> Response:
    try:
        email_address.check_resend(sync_redis(), user)
    except AppError as exc:
        return account_page(request, user, status=exc.status, error=exc.message)
    request_notice(Notice.VERIFY, user.id)
    return redirect("/dashboard/account?notice=verification_sent")


@router.post("/password")
def change_password(
    request: Request,
    session: SessionDep,
    user: SignedInUser,
    svc_session: SessionCookie = None,
    current_password: FormText = "",
    new_password: FormText = "",
) -> Response:
    try:
        body = ChangePasswordRequest(currentPassword=current_password, newPassword=new_password)
        recovery.change_password(
            session,
            sync_redis(),
            user,
            current=body.currentPassword,
            new=body.newPassword,
            client_ip=client_ip_of(request.client),
            keep_session=svc_session,
        )
    except (ValidationError, AppError) as exc:
        session.rollback()
        status = exc.status if isinstance(exc, AppError) else 422
        errors = _errors_of(exc, PASSWORD_FIELDS)
        message = None if errors or not isinstance(exc, AppError) else exc.message
        return account_page(request, user, status=status, form="password", error=message,
                            errors=errors)  # fmt: skip
    user_id = user.id
    session.commit()
    request_notice(Notice.PASSWORD_CHANGED, user_id)
    return redirect("/dashboard/account?notice=password_changed")


@router.post("/email")
def change_email(
    request: Request,
    session: SessionDep,
    user: SignedInUser,
    new_email: FormText = "",
    email_password: FormText = "",
) -> Response:
    typed = new_email
    try:
        body = ChangeEmailRequest(email=typed, currentPassword=email_password)
        new_email = normalise_email(body.email)
        notice = email_address.request_move(
            session,
            sync_redis(),
            user,
            new_email=new_email,
            current_password=body.currentPassword,
            client_ip=client_ip_of(request.client),
        )
    except (ValidationError, AppError) as exc:
        session.rollback()
        status = exc.status if isinstance(exc, AppError) else 422
        errors = _errors_of(exc, EMAIL_FIELDS)
        message = None if errors or not isinstance(exc, AppError) else exc.message
        return account_page(request, user, status=status, form="email", error=message,
                            errors=errors, new_email=typed)  # fmt: skip
    user_id = user.id
    session.commit()
    request_notice(notice, user_id, new_email if notice is Notice.ADDRESS_TAKEN else None)
    return redirect("/dashboard/account?notice=email_change_sent")


@router.post("/delete")
def delete_account(
    request: Request, session: SessionDep, user: SignedInUser, delete_password: FormText = ""
) -> Response:
    try:
        body = DeleteAccountRequest(currentPassword=delete_password)
        deleted = deletion.delete_account(
            session,
            sync_redis(),
            user,
            current_password=body.currentPassword,
            client_ip=client_ip_of(request.client),
        )
    except (ValidationError, AppError) as exc:
        session.rollback()
        status = exc.status if isinstance(exc, AppError) else 422
        errors = _errors_of(exc, DELETE_FIELDS)
        message = None if errors or not isinstance(exc, AppError) else exc.message
        return account_page(request, user, status=status, form="delete", error=message,
                            errors=errors)  # fmt: skip
    session.commit()
    request_notice(Notice.ACCOUNT_DELETED, None, deleted.former_email)
    response = redirect("/dashboard/signin?notice=account_deleted")
    response.delete_cookie(SESSION_COOKIE, path="/")
    return response
