from __future__ import annotations

from fastapi import APIRouter, Response

from app.accounts.deps import CurrentUser
from app.api_keys import service
from app.api_keys.schemas import (
    CreateApiKeyRequest,
    CreateApiKeyResponse,
    KeyId,
    ListApiKeysResponse,
)
from app.http.deps import SessionDep
from app.http.openapi import error_responses

router = APIRouter(prefix="/api-keys", tags=["api-keys"], responses=error_responses(401))


@router.post("", status_code=201, responses=error_responses(403, 409))
def create_api_key(
    body: CreateApiKeyRequest, user: CurrentUser, session: SessionDep
) -> CreateApiKeyResponse:
    """Create a key. The plaintext is in this response only; store it now."""
    key, plaintext = service.create_key(session, user.id, body.name)
    session.commit()
    return CreateApiKeyResponse(plaintext=plaintext, key=service.to_record(key))


@router.get("")
def list_api_keys(user: CurrentUser, session: SessionDep) -> ListApiKeysResponse:
    """Active keys, newest first (metadata only)."""
    keys = service.list_keys(session, user.id)
    return ListApiKeysResponse(keys=[service.to_record(key) for key in keys])


@router.delete("/{key_id}", status_code=204, responses=error_responses(403, 404))
def revoke_api_key(key_id: KeyId, user: CurrentUser, session: SessionDep) -> Response:
    """Revoke a key; it stops working on every api process within a second."""
    service.revoke_key(session, user.id, key_id)
    session.commit()
    return Response(status_code=204)
