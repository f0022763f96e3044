from __future__ import annotations

from fastapi import APIRouter, Response

from app.api_keys import service
from app.api_keys.schemas import (
    ApiKeyRecord,
    CreateApiKeyRequest,
    CreateApiKeyResponse,
    KeyId,
    ListApiKeysResponse,
    UpdateApiKeyRequest,
)
from app.deps.database import SessionDep
from app.deps.users import CurrentUser
from app.http.openapi import error_responses

router = APIRouter(prefix="/api-keys", tags=["api-keys"], responses=error_responses(401))


@router.post("", status_code=201, responses=error_responses(403, 409))
def create_api_key(
    body: CreateApiKeyRequest, user: CurrentUser, session: SessionDep
) -> CreateApiKeyResponse:
    """Create a key, optionally expiring at `expiresAt`; `env` "test" makes a test-mode
    key (real data, its own counter, never billed). The plaintext is in this response
    only; store it now."""
    key, plaintext = service.create_key(
        session,
        user.id,
        body.name,
        expires_at=body.expiresAt,
        generation=user.generation,
        env=body.env,
    )
    session.commit()
    return CreateApiKeyResponse(plaintext=plaintext, key=service.to_record(key))


@router.get("")
def list_api_keys(user: CurrentUser, session: SessionDep) -> ListApiKeysResponse:
    """Keys not revoked (expired ones marked), newest first, with each key's last use
    (metadata only)."""
    keys = service.list_keys(session, user.id)
    last_calls = service.last_calls(user.id)
    return ListApiKeysResponse(keys=[service.to_record(key, last_calls) for key in keys])


@router.patch("/{key_id}", responses=error_responses(403, 404, 409))
def update_api_key(
    key_id: KeyId, body: UpdateApiKeyRequest, user: CurrentUser, session: SessionDep
) -> ApiKeyRecord:
    """Rename a key and/or change its expiry (`null`: never); 404 like DELETE, 409 when
    extending a key that has already expired. Every api process applies a new expiry
    within a second."""
    changes = body.model_dump(include=body.model_fields_set)
    key = service.update_key(session, user.id, key_id, changes)
    session.commit()
    return service.to_record(key, service.last_calls(user.id))


@router.delete("/{key_id}", status_code=204, responses=error_responses(403, 404))
def revoke_api_key(key_id: KeyId, user: CurrentUser, session: SessionDep) -> Response:
    """Revoke a key; it stops working on every api process within a second."""
    service.revoke_key(session, user.id, key_id)
    session.commit()
    return Response(status_code=204)
