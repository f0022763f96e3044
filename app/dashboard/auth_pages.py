"""Sign-in, sign-up and sign-out pages (HTML forms over the accounts service)."""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import quote, urlsplit

from fastapi import APIRouter, BackgroundTasks, Cookie, Form, Query, Request, Response
from pydantic import ValidationError

from app.dashboard.rendering import field_error_of, field_errors, prices, redirect, render
from app.deps.client import client_ip_of
from app.deps.database import SessionDep
from app.deps.users import SESSION_COOKIE, OptionalUser, set_session_cookie
from app.kit.config import get_settings
from app.kit.errors import AppError, Conflict, InvalidArgument
from app.kit.redis_client import sync_redis
from app.users import service as accounts
from app.users import signup, throttle
from app.users.mailbox import normalise_email
from app.users.schemas import SignInRequest, SignUpRequest

router = APIRouter(prefix="/dashboard", include_in_schema=False)

FormText = Annotated[str, Form()]
# Where to go after signing in: only back to an OAuth authorization request (an MCP host
# sent the person to sign in and approve it); anything else goes home, so the parameter
# cannot send anyone elsewhere.
AFTER_SIGN_IN_PREFIX = "/authorize?"
MAX_NEXT = 4096
NextQuery = Annotated[str, Query(max_length=MAX_NEXT)]
NextForm = Annotated[str, Form(max_length=MAX_NEXT)]


def safe_next(next_path: str) -> str:
    parts = urlsplit(next_path)
    if next_path.startswith(AFTER_SIGN_IN_PREFIX) and not parts.scheme and not parts.netloc:
        return next_path
    return "/"


def with_next(path: str, next_path: str) -> str:
    """`path` carrying `next` on to the other sign-in page, when there is one to carry."""
    if safe_next(next_path) == "/":
        return path
    return f"{path}?next={quote(next_path, safe='')}"


@router.get("/signin")
def sign_in_page(request: Request, user: OptionalUser, next: NextQuery = "") -> Response:
    if user is not None:
        return redirect(safe_next(next))
    return render(request, "signin.html", email="", **_next_context(next))


def _next_context(next_path: str) -> dict[str, Any]:
    target = safe_next(next_path)
    return {
        "next": "" if target == "/" else target,
        "signin_url": with_next("/dashboard/signin", target),
        "signup_url": with_next("/dashboard/signup", target),
    }


@router.post("/signin")
def sign_in(
    request: Request,
    session: SessionDep,
    email: FormText = "",
    password: FormText = "",
    next: NextForm = "",
) -> Response:
    shown = {"email": email, **_next_context(next)}
    try:
        client_ip = client_ip_of(request.client)
        throttle.check_rate(sync_redis(), client_ip)
        body = SignInRequest(email=email, password=password)
        user = accounts.authenticate(
            session, sync_redis(), email=body.email, password=body.password, client_ip=client_ip
        )
    except ValidationError as exc:
        return render(request, "signin.html", status=422, field_errors=field_errors(exc), **shown)
    except AppError as exc:
        return render(request, "signin.html", status=exc.status, error=exc.message, **shown)
    token = accounts.start_session(session, user)
    session.commit()
    response = redirect(safe_next(next))
    set_session_cookie(response, token)
    return response


@router.get("/signup")
def sign_up_page(request: Request, user: OptionalUser, next: NextQuery = "") -> Response:
    if user is not None:
        return redirect(safe_next(next))
    return render(request, "signup.html", email="", name="", prices=prices(), **_next_context(next))


@router.post("/signup")
def sign_up(
    request: Request,
    session: SessionDep,
    background: BackgroundTasks,
    email: FormText = "",
    password: FormText = "",
    name: FormText = "",
    next: NextForm = "",
) -> Response:
    """Signed in at once; with e-mail verification on, "check your inbox" for every
    address (app/users/signup.py)."""
    context = {"email": email, "name": name, "prices": prices(), **_next_context(next)}
    try:
        store = sync_redis()
        throttle.check_rate(store, client_ip_of(request.client))
        body = SignUpRequest(email=email, password=password, name=name.strip() or None)
        signup.check_before_answer(store, body.email, body.password)
        if get_settings().verifies_email:
            background.add_task(signup.register, body.email, body.password, body.name)
            return render(request, "check_inbox.html", email=normalise_email(body.email))
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
    response = redirect(safe_next(next))
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
