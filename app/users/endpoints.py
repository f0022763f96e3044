from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, BackgroundTasks, Cookie, Request, Response
from fastapi.responses import JSONResponse

from app.deps.client import client_ip_of
from app.deps.database import SessionDep
from app.deps.users import SESSION_COOKIE, CurrentUser, set_session_cookie
from app.http.openapi import error_responses
from app.kit.config import get_settings
from app.kit.redis_client import sync_redis
from app.users import deletion, email_address, recovery, service, signup, throttle
from app.users.mailbox import normalise_email
from app.users.messages import Notice
from app.users.notices import request_notice
from app.users.schemas import (
    Accepted,
    ChangeEmailRequest,
    ChangePasswordRequest,
    DeleteAccountRequest,
    EmailChangePending,
    EmailConfirmed,
    MeResponse,
    PasswordResetConfirm,
    PasswordResetRequest,
    SignInRequest,
    SignUpPending,
    SignUpRequest,
    TokenBody,
)

router = APIRouter(tags=["accounts"])

Cookieless = Annotated[str | None, Cookie(alias=SESSION_COOKIE)]

RESET_ACCEPTED = "If an account uses this address, a link to reset its password is on its way."
CHECK_INBOX = "Check your inbox: the link in our e-mail confirms the address."


def pending_signup(email: str) -> SignUpPending:
    return SignUpPending(email=email, message=CHECK_INBOX)


@router.post(
    "/auth/signup",
    status_code=201,
    response_model=MeResponse,
    responses={202: {"model": SignUpPending}, **error_responses(403, 409, 429)},
)
def sign_up(
    body: SignUpRequest,
    session: SessionDep,
    request: Request,
    response: Response,
    background: BackgroundTasks,
) -> MeResponse | JSONResponse:
    """201 with a session; with e-mail verification on, 202 for every address (see
    app/users/signup.py)."""
    store = sync_redis()
    throttle.check_rate(store, client_ip_of(request.client))
    signup.check_before_answer(store, body.email, body.password)
    if get_settings().verifies_email:
        background.add_task(signup.register, body.email, body.password, body.name)
        pending = pending_signup(normalise_email(body.email))
        return JSONResponse(pending.model_dump(), status_code=202)
    user = service.create_user(session, email=body.email, password=body.password, name=body.name)
    token = service.start_session(session, user)
    me = service.me(session, user)
    session.commit()
    set_session_cookie(response, token)
    return me


@router.post("/auth/signin", responses=error_responses(401, 403, 429))
def sign_in(
    body: SignInRequest, session: SessionDep, request: Request, response: Response
) -> MeResponse:
    client_ip = client_ip_of(request.client)
    throttle.check_rate(sync_redis(), client_ip)
    user = service.authenticate(
        session, sync_redis(), email=body.email, password=body.password, client_ip=client_ip
    )
    token = service.start_session(session, user)
    me = service.me(session, user)
    session.commit()
    set_session_cookie(response, token)
    return me


@router.post("/auth/signout", status_code=204, responses=error_responses(403))
def sign_out(session: SessionDep, svc_session: Cookieless = None) -> Response:
    service.end_session(session, svc_session)
    session.commit()
    response = Response(status_code=204)
    response.delete_cookie(SESSION_COOKIE, path="/")
    return response


@router.get("/me", responses=error_responses(401))
def get_me(user: CurrentUser, session: SessionDep) -> MeResponse:
    return service.me(session, user)


@router.post("/auth/password-reset", status_code=202, responses=error_responses(403, 429))
def request_password_reset(
    body: PasswordResetRequest, request: Request, background: BackgroundTasks
) -> Accepted:
    """202 whatever the address: the lookup and the e-mail come after the answer."""
    store = sync_redis()
    throttle.check_rate(store, client_ip_of(request.client))
    if recovery.reset_wanted(store, body.email):
        background.add_task(recovery.send_reset_link, body.email)
    return Accepted(message=RESET_ACCEPTED)


@router.post("/auth/password-reset/confirm", status_code=204, responses=error_responses(403, 429))
def confirm_password_reset(
    body: PasswordResetConfirm, session: SessionDep, request: Request
) -> Response:
    """Sets the password from a reset link; every session of the account ends."""
    throttle.check_rate(sync_redis(), client_ip_of(request.client))
    reset = recovery.reset_password(session, body.token, body.password)
    session.commit()
    request_notice(Notice.PASSWORD_CHANGED, reset.user_id)
    response = Response(status_code=204)
    response.delete_cookie(SESSION_COOKIE, path="/")
    return response


@router.post("/auth/email/confirm", responses=error_responses(403, 409))
def confirm_email(body: TokenBody, session: SessionDep, request: Request) -> EmailConfirmed:
    """Follows a confirmation link (after sign-up, or to a new address); no session needed."""
    throttle.check_rate(sync_redis(), client_ip_of(request.client))
    confirmed = email_address.confirm(session, body.token)
    email, user_id = confirmed.user.email, confirmed.user.id
    session.commit()
    if confirmed.previous_email is not None:
        request_notice(Notice.EMAIL_CHANGED, user_id, confirmed.previous_email)
    return EmailConfirmed(email=email, emailVerified=True)


@router.post(
    "/auth/email/verification", status_code=202, responses=error_responses(401, 403, 409, 429)
)
def resend_verification(user: CurrentUser) -> Accepted:
    """Sends the sign-up confirmation link again (409 when already confirmed)."""
    email_address.check_resend(sync_redis(), user)
    request_notice(Notice.VERIFY, user.id)
    return Accepted(message=CHECK_INBOX)


@router.post("/account/password", status_code=204, responses=error_responses(401, 403, 429))
def change_password(
    body: ChangePasswordRequest,
    user: CurrentUser,
    session: SessionDep,
    request: Request,
    svc_session: Cookieless = None,
) -> Response:
    """With the current password; the account's other sessions end, this one stays."""
    recovery.change_password(
        session,
        sync_redis(),
        user,
        current=body.currentPassword,
        new=body.newPassword,
        client_ip=client_ip_of(request.client),
        keep_session=svc_session,
    )
    user_id = user.id
    session.commit()
    request_notice(Notice.PASSWORD_CHANGED, user_id)
    return Response(status_code=204)


@router.post("/account/email", status_code=202, responses=error_responses(401, 403, 409, 429))
def change_email(
    body: ChangeEmailRequest, user: CurrentUser, session: SessionDep, request: Request
) -> EmailChangePending:
    """With the current password; the new address is in force once its link is followed."""
    new_email = normalise_email(body.email)
    notice = email_address.request_move(
        session,
        sync_redis(),
        user,
        new_email=new_email,
        current_password=body.currentPassword,
        client_ip=client_ip_of(request.client),
    )
    user_id = user.id
    session.commit()
    request_notice(notice, user_id, new_email if notice is Notice.ADDRESS_TAKEN else None)
    message = f"Check the inbox of {new_email}: the link there moves the account to it."
    return EmailChangePending(email=new_email, message=message)


@router.post("/account/delete", status_code=204, responses=error_responses(401, 403, 429))
def delete_account(
    body: DeleteAccountRequest, user: CurrentUser, session: SessionDep, request: Request
) -> Response:
    """With the current password: keys revoked, subscription cancelled, personal data
    removed (see app/users/deletion.py); signs out."""
    deleted = deletion.delete_account(
        session,
        sync_redis(),
        user,
        current_password=body.currentPassword,
        client_ip=client_ip_of(request.client),
    )
    session.commit()
    request_notice(Notice.ACCOUNT_DELETED, None, deleted.former_email)
    response = Response(status_code=204)
    response.delete_cookie(SESSION_COOKIE, path="/")
    return response
