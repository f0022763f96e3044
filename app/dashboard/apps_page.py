"""Connected apps: the MCP hosts a person signed in to with OAuth, with their last use,
and a button that disconnects one (its tokens stop working within a second)."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from app.dashboard.pages import mcp_url
from app.dashboard.rendering import redirect, render
from app.deps.database import SessionDep
from app.deps.users import SignedInUser
from app.kit.errors import NotFound
from app.oauth.grants import connected_apps, revoke_grant
from app.oauth.verify import note_grant_revoked

router = APIRouter(include_in_schema=False)


@router.get("/dashboard/apps")
def apps_page(request: Request, session: SessionDep, user: SignedInUser) -> Response:
    apps = connected_apps(session, user.id)
    return render(request, "apps.html", user=user, apps=apps, mcp_url=mcp_url())


@router.post("/dashboard/apps/{grant_id}/revoke")
def disconnect(grant_id: str, session: SessionDep, user: SignedInUser) -> Response:
    try:
        revoke_grant(session, user.id, grant_id)
    except NotFound:  # a second click, or another tab disconnected it first
        return redirect("/dashboard/apps?notice=app_gone")
    session.commit()
    note_grant_revoked(grant_id)
    return redirect("/dashboard/apps?notice=app_revoked")
