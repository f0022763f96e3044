from __future__ import annotations

from pydantic import BaseModel, ConfigDict, EmailStr, Field


class SignUpRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    email: EmailStr
    password: str = Field(min_length=8, max_length=256)
    name: str | None = Field(default=None, min_length=1, max_length=200)


class SignInRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    email: EmailStr
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
