from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    model_validator,
)
from pydantic.json_schema import SkipJsonSchema

from app.kit.validation import VISIBLE_TEXT_PATTERN, JsonSchemaPattern, plain_text

KEY_NAME_MAX = 64
KEY_ID_LENGTH = 16

# Documented, not enforced on input: any other id is a key that does not exist (404).
KeyId = Annotated[str, JsonSchemaPattern(f"^[a-z0-9]{{{KEY_ID_LENGTH}}}$")]

KeyName = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=KEY_NAME_MAX),
    AfterValidator(plain_text),
    JsonSchemaPattern(VISIBLE_TEXT_PATTERN),  # stripped, then at least 1 character
]


EXPIRES_AT = (
    "When the key stops working, ISO 8601 (UTC when no offset is given), in the future and "
    "at most 3 years ahead; null: never"
)


class CreateApiKeyRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: KeyName = Field(description="A label for the key, 1-64 characters")
    expiresAt: datetime | None = Field(None, description=EXPIRES_AT)
    env: Literal["live", "test"] = Field(
        "live",
        description="`live` (default): billed. `test`: a svc_test_ak_ key with real data, "
        "metered on its own test counter, never billed or counted against quota or caps",
    )


class UpdateApiKeyRequest(BaseModel):
    """A new name, a new expiry (null removes it), or both; what is left out is kept."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"minProperties": 1})

    # Not null (a key keeps a name), but may be left out: None is never published.
    name: KeyName | SkipJsonSchema[None] = Field(None, description="A new label, 1-64 characters")
    expiresAt: datetime | None = Field(None, description=EXPIRES_AT)

    @model_validator(mode="before")
    @classmethod
    def _something_to_change(cls, data: Any) -> Any:
        if isinstance(data, dict):
            if not {"name", "expiresAt"} & data.keys():
                raise ValueError("give a new name, a new expiresAt, or both")
            if "name" in data and data["name"] is None:
                raise ValueError("name: a key keeps a name; give a new one or leave it out")
        return data


class ApiKeyRecord(BaseModel):
    """Key metadata: never the plaintext nor its hash."""

    keyId: KeyId
    env: str = Field(description="`live`: billed; `test`: its own test counter, never billed")
    name: str
    scopes: list[str]
    createdAt: str = Field(description="ISO 8601 UTC with milliseconds")
    expiresAt: str | None = Field(
        None, description="When the key stops working (ISO 8601 UTC); null: never"
    )
    expired: bool = Field(False, description="Past its expiry: refused like a revoked key")
    lastUsedAt: str | None = Field(
        None, description="Its latest call, whatever the outcome (ISO 8601 UTC); null: never"
    )


class CreateApiKeyResponse(BaseModel):
    plaintext: str = Field(description="The full bearer token; shown only in this response")
    key: ApiKeyRecord


class ListApiKeysResponse(BaseModel):
    keys: list[ApiKeyRecord] = Field(
        description="Keys not revoked (expired ones included, marked), newest first"
    )
