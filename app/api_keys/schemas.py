from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints

from app.validation import VISIBLE_TEXT_PATTERN, JsonSchemaPattern, plain_text

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


class CreateApiKeyRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: KeyName = Field(description="A label for the key, 1-64 characters")


class ApiKeyRecord(BaseModel):
    """Key metadata: never the plaintext nor its hash."""

    keyId: KeyId
    env: str
    name: str
    scopes: list[str]
    createdAt: str = Field(description="ISO 8601 UTC with milliseconds")


class CreateApiKeyResponse(BaseModel):
    plaintext: str = Field(description="The full bearer token; shown only in this response")
    key: ApiKeyRecord


class ListApiKeysResponse(BaseModel):
    keys: list[ApiKeyRecord] = Field(description="Active keys, newest first")
