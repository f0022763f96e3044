"""The API keys page: create (with an optional expiry), rename or change the expiry,
revoke. Forms post here (same origin); each calls the same service as the JSON API."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta
from typing import Annotated, Any

from fastapi import APIRouter, Form, Request, Response
from sqlmodel import Session

from app.api_keys import service as api_keys
from app.dashboard.rendering import field_error_of, mcp_url, redirect, render
from app.deps.database import SessionDep
from app.deps.users import SignedInUser
from app.kit.clock import utcnow
from app.kit.config import get_settings
from app.kit.errors import AppError, InvalidArgument, NotFound
from app.models import User

router = APIRouter(include_in_schema=False)

FormText = Annotated[str, Form()]


def client_config(plaintext: str) -> str:
    """The README's MCP client configuration (remote server with a header), key filled in."""
    server = {"type": "http", "url": mcp_url(), "headers": {"Authorization": f"Bearer {plaintext}"}}
    return json.dumps({"mcpServers": {"geosvc": server}}, indent=2)


def curl_example(plaintext: str) -> str:
    """A first call of the HTTP API (README, "HTTP API"), key filled in."""
    base = get_settings().base_url.rstrip("/")
    return (
        f'curl -s "{base}/v1/geocode?query=Austin,%20TX&limit=1" \\\n'
        f'  -H "Authorization: Bearer {plaintext}"'
    )


def expiry_of_form(text: str) -> datetime | None:
    """A date field (YYYY-MM-DD) as the start of that day in UTC; empty: never."""
    text = text.strip()
    if not text:
        return None
    try:
        day = date.fromisoformat(text[:10]) if len(text) == 10 else None
    except ValueError:
        day = None
    if day is None:
        raise InvalidArgument("expiresAt: enter a date like 2026-12-31")
    if day <= utcnow().date():
        raise InvalidArgument("expiresAt: pick a day after today (UTC)")
    return datetime(day.year, day.month, day.day, tzinfo=UTC)


def _form_errors(exc: AppError, prefix: str = "") -> tuple[str | None, dict[str, str]]:
    """(page error, field errors) of a service error; expiresAt is the `expires_on` field."""
    on_field = field_error_of(
        exc.message.replace("expiresAt: ", "expires_on: "), ("name", "expires_on")
    )
    return (None if on_field else exc.message), {prefix + f: m for f, m in on_field.items()}


def keys_context(session: Session, user: User) -> dict[str, Any]:
    last_calls = api_keys.last_calls(user.id)
    keys = [api_keys.to_record(key, last_calls) for key in api_keys.list_keys(session, user.id)]
    tomorrow = utcnow().date() + timedelta(days=1)
    return {"keys": keys, "tomorrow": tomorrow.isoformat(), "mcp_url": mcp_url()}


def _keys_page(
    request: Request,
    session: Session,
    user: User,
    *,
    status: int = 200,
    **context: Any,
) -> Response:
    context.setdefault("form", {"name": "", "expires_on": "", "env": "live"})
    return render(
        request, "keys.html", status=status, user=user, **keys_context(session, user), **context
    )


@router.get("/dashboard/keys")
def keys_page(request: Request, session: SessionDep, user: SignedInUser) -> Response:
    return _keys_page(request, session, user)


@router.post("/dashboard/keys")
def create_key(
    request: Request,
    session: SessionDep,
    user: SignedInUser,
    name: FormText = "",
    expires_on: FormText = "",
    env: FormText = "live",
) -> Response:
    """Creates a key (`env`: live, or test: real data on its own counter, never billed)
    and shows its plaintext in this response only (no redirect, so the plaintext never
    lands in a URL or the history)."""
    try:
        expires_at = expiry_of_form(expires_on)
        key, plaintext = api_keys.create_key(
            session,
            user.id,
            name,
            expires_at=expires_at,
            generation=user.generation,
            env=env,
        )
    except AppError as exc:
        session.rollback()
        error, on_fields = _form_errors(exc)
        form = {"name": name[:200], "expires_on": expires_on[:20], "env": env[:10]}
        return _keys_page(
            request,
            session,
            user,
            status=exc.status,
            error=error,
            field_errors=on_fields,
            form=form,
        )
    session.commit()
    return _keys_page(
        request,
        session,
        user,
        status=201,
        created=(key.name, plaintext),
        config=client_config(plaintext),
        curl=curl_example(plaintext),
    )


@router.post("/dashboard/keys/{key_id}")
def edit_key(
    key_id: str,
    request: Request,
    session: SessionDep,
    user: SignedInUser,
    name: FormText = "",
    expires_on: FormText = "",
    has_expiry_field: FormText = "",
) -> Response:
    """Rename the key and, when its form has the date field (an expired key's has not),
    set or remove its expiry."""
    changes: dict[str, Any] = {"name": name}
    try:
        if has_expiry_field:
            changes["expiresAt"] = expiry_of_form(expires_on)
        api_keys.update_key(session, user.id, key_id, changes)
    except NotFound:
        return redirect("/dashboard/keys?notice=key_gone")
    except AppError as exc:
        session.rollback()
        error, on_fields = _form_errors(exc, prefix=f"key-{key_id}-")
        edit = {"key_id": key_id, "name": name[:200], "expires_on": expires_on[:20]}
        return _keys_page(
            request,
            session,
            user,
            status=exc.status,
            error=error,
            field_errors=on_fields,
            edit=edit,
        )
    session.commit()
    return redirect("/dashboard/keys?notice=key_saved")


@router.post("/dashboard/keys/{key_id}/revoke")
def revoke_key(key_id: str, session: SessionDep, user: SignedInUser) -> Response:
    try:
        api_keys.revoke_key(session, user.id, key_id)
    except NotFound:  # a second click, or another tab revoked it first
        return redirect("/dashboard/keys?notice=key_gone")
    session.commit()
    return redirect("/dashboard/keys?notice=revoked")
