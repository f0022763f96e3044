"""Sign-in, sign-up and sign-out pages (HTML forms over the accounts service)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Cookie, Form, Request, Response
from pydantic import ValidationError

from app.accounts import service as accounts
from app.accounts import throttle
from app.accounts.deps import SESSION_COOKIE
from app.accounts.endpoints import set_session_cookie
from app.accounts.schemas import SignInRequest, SignUpRequest
from app.dashboard.deps import OptionalUser
from app.dashboard.rendering import field_error_of, field_errors, prices, redirect, render
from app.errors import AppError, Conflict, InvalidArgument
from app.http.deps import SessionDep
from app.redis_client import sync_redis

router = APIRouter(prefix="/dashboard", include_in_schema=False)

FormText = Annotated[str, Form()]


@router.get("/signin")
def sign_in_page(request: Request, user: OptionalUser) -> Response:
    if user is not None:
        return redirect("/")
    return render(request, "signin.html", email="")


@router.post("/signin")
def sign_in(
    request: Request, session: SessionDep, email: FormText = "", password: FormText = ""
) -> Response:
    try:
        client_ip = accounts.client_ip_of(request.client)
        throttle.check_rate(sync_redis(), client_ip)
        body = SignInRequest(email=email, password=password)
        user = accounts.authenticate(
            session, sync_redis(), email=body.email, password=body.password, client_ip=client_ip
        )
    except ValidationError as exc:
        return render(
            request, "signin.html", status=422, email=email, field_errors=field_errors(exc)
        )
    except AppError as exc:
        return render(request, "signin.html", status=exc.status, email=email, error=exc.message)
    token = accounts.start_session(session, user)
    session.commit()
    response = redirect("/")
    set_session_cookie(response, token)
    return response


@router.get("/signup")
def sign_up_page(request: Request, user: OptionalUser) -> Response:
    if user is not None:
        return redirect("/")
    return render(request, "signup.html", email="", name="", prices=prices())


@router.post("/signup")
def sign_up(
    request: Request,
    session: SessionDep,
    email: FormText = "",
    password: FormText = "",
    name: FormText = "",
) -> Response:
    context = {"email": email, "name": name, "prices": prices()}
    try:
        throttle.check_rate(sync_redis(), accounts.client_ip_of(request.client))
        body = SignUpRequest(email=email, password=password, name=name.strip() or None)
        user = accounts.create_user(
            session, email=body.email, password=body.password, name=body.name
        )
    except ValidationError as exc:
        errors = field_errors(exc)
        return render(request, "signup.html", status=422, field_errors=errors, **context)
    except Conflict as exc:  # the e-mail is taken
        errors = {"email": exc.message}
        return render(request, "signup.html", status=exc.status, field_errors=errors, **context)
    except InvalidArgument as exc:  # e.g. a common password: shown at its field
        errors = field_error_of(exc.message, ("email", "password", "name"))
        if not errors:
            return render(request, "signup.html", status=exc.status, error=exc.message, **context)
        return render(request, "signup.html", status=exc.status, field_errors=errors, **context)
    except AppError as exc:
        return render(request, "signup.html", status=exc.status, error=exc.message, **context)
    token = accounts.start_session(session, user)
    session.commit()
    response = redirect("/")
    set_session_cookie(response, token)
    return response


@router.post("/signout")
def sign_out(
    session: SessionDep,
    svc_session: Annotated[str | None, Cookie(alias=SESSION_COOKIE)] = None,
) -> Response:
    accounts.end_session(session, svc_session)
    session.commit()
    response = redirect("/dashboard/signin?notice=signed_out")
    response.delete_cookie(SESSION_COOKIE, path="/")
    return response
