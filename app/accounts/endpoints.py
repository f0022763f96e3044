from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Cookie, Request, Response

from app.accounts import service, throttle
from app.accounts.deps import SESSION_COOKIE, CurrentUser
from app.accounts.schemas import MeResponse, SignInRequest, SignUpRequest
from app.config import get_settings
from app.http.deps import SessionDep
from app.http.openapi import error_responses
from app.redis_client import sync_redis

router = APIRouter(tags=["accounts"])


def set_session_cookie(response: Response, token: str) -> None:
    settings = get_settings()
    response.set_cookie(
        SESSION_COOKIE,
        token,
        max_age=settings.session_days * 86400,
        httponly=True,
        samesite="lax",
        secure=not settings.is_development,
        path="/",
    )


@router.post("/auth/signup", status_code=201, responses=error_responses(403, 409, 429))
def sign_up(
    body: SignUpRequest, session: SessionDep, request: Request, response: Response
) -> MeResponse:
    throttle.check_rate(sync_redis(), service.client_ip_of(request.client))
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
    client_ip = service.client_ip_of(request.client)
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
def sign_out(session: SessionDep, svc_session: Annotated[str | None, Cookie()] = None) -> Response:
    service.end_session(session, svc_session)
    session.commit()
    response = Response(status_code=204)
    response.delete_cookie(SESSION_COOKIE, path="/")
    return response


@router.get("/me", responses=error_responses(401))
def get_me(user: CurrentUser, session: SessionDep) -> MeResponse:
    return service.me(session, user)
