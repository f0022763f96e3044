from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints

from app.validation import plain_text

KEY_NAME_MAX = 64

KeyName = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=KEY_NAME_MAX),
    AfterValidator(plain_text),
]


class CreateApiKeyRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: KeyName = Field(description="A label for the key, 1-64 characters")


class ApiKeyRecord(BaseModel):
    """Key metadata: never the plaintext nor its hash."""

    keyId: str
    env: str
    name: str
    scopes: list[str]
    createdAt: str = Field(description="ISO 8601 UTC with milliseconds")


class CreateApiKeyResponse(BaseModel):
    plaintext: str = Field(description="The full bearer token; shown only in this response")
    key: ApiKeyRecord


class ListApiKeysResponse(BaseModel):
    keys: list[ApiKeyRecord] = Field(description="Active keys, newest first")
