from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, EmailStr, Field

from app.validation import PlainText, no_control_characters

Email = Annotated[str, AfterValidator(no_control_characters), EmailStr]


class SignUpRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    email: Email
    password: str = Field(min_length=8, max_length=256)
    name: PlainText | None = Field(default=None, min_length=1, max_length=200)


class SignInRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    email: Email
    password: str = Field(min_length=1, max_length=256)


class Entitlements(BaseModel):
    hasSubscription: bool


class UserObject(BaseModel):
    id: str
    name: str | None
    email: str


class MeResponse(BaseModel):
    userId: str
    email: str
    entitlements: Entitlements
    user: UserObject
