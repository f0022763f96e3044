"""The OAuth authorization endpoint: the consent page, where the signed-in person sees
which app asks (its name, and where the answer goes) and approves `read:data` for their
account, or declines.

Safety: the request is validated in full (client, exact redirect URI, PKCE S256, scope,
resource) before anything is shown, and again when the form comes back; until the
redirect URI is validated for the client, an error is a page of ours, never a redirect,
so no one can use this endpoint to send a browser elsewhere. The form is protected
against cross-site posting twice over (the Origin check of every cookie-authenticated
POST, and a signature binding it to the session and to exactly the request shown), and
the page cannot be framed (X-Frame-Options DENY, CSP frame-ancestors 'none'). Its CSP
lets the form's redirect reach only this client's redirect URI.
"""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import quote, urlencode

from authlib.oauth2.rfc6749 import InvalidRequestError, OAuth2Error
from fastapi import APIRouter, Cookie, Form, Request, Response
from fastapi.responses import RedirectResponse

from app.dashboard.authorize_admission import ADMIT_FIRST
from app.dashboard.rendering import render
from app.deps.database import SessionDep
from app.deps.users import SESSION_COOKIE, OptionalUser, SignedInUser
from app.http.guards import CONTENT_SECURITY_POLICY
from app.kit.config import get_settings
from app.models import User
from app.oauth import grants, redirects
from app.oauth.clients import ClientView
from app.oauth.metadata import AUTHORIZE_PATH
from app.oauth.requests import HttpRequest, OAuthResponse, unsafe_parameter
from app.oauth.secrets import consent_signature, consent_signature_ok
from app.oauth.server import OAuthServer

router = APIRouter(include_in_schema=False)

# The authorization request's parameters the form carries back (RFC 6749, 7636, 8707).
PARAMS = (
    "response_type",
    "client_id",
    "redirect_uri",
    "scope",
    "state",
    "code_challenge",
    "code_challenge_method",
    "resource",
)
MAX_PARAM = 2048
ParamForm = Annotated[str | None, Form(max_length=MAX_PARAM)]
SessionCookie = Annotated[str | None, Cookie(alias=SESSION_COOKIE)]


def _redirect(answer: OAuthResponse) -> Response:
    assert answer.location is not None
    return RedirectResponse(answer.location, 303, headers={"Cache-Control": "no-store"})


def _error_page(
    request: Request, error: OAuth2Error, *, not_sent_to: str | None = None
) -> Response:
    message = error.description or error.error
    return render(
        request,
        "oauth_error.html",
        status=400,
        message=message,
        code=error.error,
        not_sent_to=not_sent_to,
    )


def _error_answer(
    request: Request,
    server: OAuthServer,
    error: OAuth2Error,
    user: User | None,
    client_id: str | None,
) -> Response:
    """An error of a request shown to nobody yet (GET): sent back to the client's redirect
    URI only if the signed-in person has connected this client before; otherwise our own
    page, so that an app anyone can register cannot use this endpoint as an open redirect
    (issue 36, item 7; docs/OAUTH.md)."""
    if not error.redirect_uri:  # the redirect URI is not validated for the client
        return _error_page(request, error)
    if user and client_id and grants.has_approved(server.session, user.id, client_id):
        return _redirect(server.error_redirect(error))
    return _error_page(request, error, not_sent_to=redirects.host_of(error.redirect_uri))


def _csp_for(redirect_uri: str) -> str:
    """The default policy, with the client's redirect URI as a place the form may lead."""
    source = redirects.form_action_source(redirect_uri)
    return CONTENT_SECURITY_POLICY.replace("form-action 'self'", f"form-action 'self' {source}")


def _validated(
    request: Request, server: OAuthServer, pairs: list[tuple[str, str]], user: object
) -> tuple[Any, HttpRequest]:
    """Authlib's grant for a valid request; OAuth2Error otherwise."""
    unsafe = unsafe_parameter(pairs)
    if unsafe is not None:  # an error page, not a redirect: the redirect URI is unchecked
        raise InvalidRequestError(f"The {unsafe} parameter is not valid")
    uri = get_settings().base_url.rstrip("/") + AUTHORIZE_PATH + "?" + urlencode(pairs)
    http = HttpRequest("GET", uri, request.headers, pairs)
    return server.get_consent_grant(http, end_user=user), http


@router.get(AUTHORIZE_PATH, dependencies=ADMIT_FIRST)
def authorize(
    request: Request,
    session: SessionDep,
    user: OptionalUser,
    svc_session: SessionCookie = None,
) -> Response:
    pairs = [(k, v) for k, v in request.query_params.multi_items()]
    server = OAuthServer(session, fetch_client_documents=True)
    try:
        grant, _http = _validated(request, server, pairs, user)
    except OAuth2Error as error:
        session.commit()
        return _error_answer(request, server, error, user, dict(pairs).get("client_id"))
    session.commit()
    if user is None or not svc_session:
        next_path = AUTHORIZE_PATH + "?" + request.url.query
        return RedirectResponse(f"/dashboard/signin?next={quote(next_path, safe='')}", 303)
    params = {name: value for name, value in grant.request.payload.data.items() if name in PARAMS}
    client: ClientView = grant.client
    redirect_uri = params["redirect_uri"]
    response = render(
        request,
        "consent.html",
        user=user,
        client_name=client.name,
        verified_host=redirects.host_of(client.client_id) if client.is_metadata_document else None,
        redirect_host=redirects.host_of(redirect_uri),
        loopback=redirects.is_loopback(redirect_uri),
        params=params,
        signature=consent_signature(svc_session, params),
    )
    response.headers["Content-Security-Policy"] = _csp_for(redirect_uri)
    return response


@router.post(AUTHORIZE_PATH, dependencies=ADMIT_FIRST)
def decide(
    request: Request,
    session: SessionDep,
    user: SignedInUser,
    svc_session: SessionCookie = None,
    decision: Annotated[str, Form(max_length=16)] = "",
    signature: Annotated[str, Form(max_length=128)] = "",
    response_type: ParamForm = None,
    client_id: ParamForm = None,
    redirect_uri: ParamForm = None,
    scope: ParamForm = None,
    state: ParamForm = None,
    code_challenge: ParamForm = None,
    code_challenge_method: ParamForm = None,
    resource: ParamForm = None,
) -> Response:
    """Approve or decline; either way the browser goes back to the client."""
    fields = {
        "response_type": response_type,
        "client_id": client_id,
        "redirect_uri": redirect_uri,
        "scope": scope,
        "state": state,
        "code_challenge": code_challenge,
        "code_challenge_method": code_challenge_method,
        "resource": resource,
    }
    params = {name: value for name, value in fields.items() if value is not None}
    if not svc_session or not consent_signature_ok(svc_session, params, signature):
        return render(
            request,
            "oauth_error.html",
            status=403,
            user=user,
            code="invalid_request",
            message="This approval form is not the one shown to you (or it expired): "
            "start the connection again from the app.",
        )
    server = OAuthServer(session, fetch_client_documents=True)
    try:
        grant, http = _validated(request, server, list(params.items()), user)
    except OAuth2Error as error:
        session.commit()
        if error.redirect_uri:
            return _redirect(server.error_redirect(error))
        return _error_page(request, error)
    approved = user if decision == "approve" else None
    answer = server.create_authorization_response(http, grant_user=approved, grant=grant)
    session.commit()
    return _redirect(answer)
