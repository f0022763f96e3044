from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, EmailStr, Field

from app.kit.validation import PlainText, no_control_characters

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
    # False until the address is confirmed (data calls are then FORBIDDEN); an address
    # the owner is moving to, until its link is followed.
    emailVerified: bool
    pendingEmail: str | None = None


class SignUpPending(BaseModel):
    """202 to every sign-up while e-mail verification is on: a new address and a known
    one get the same answer (the known one's owner is told by e-mail)."""

    status: str = "verification_sent"
    email: str
    message: str


class Accepted(BaseModel):
    """202: the request is taken; what follows arrives by e-mail."""

    message: str


class PasswordResetRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    email: Email


class TokenBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    token: str = Field(min_length=1, max_length=256)


class PasswordResetConfirm(TokenBody):
    password: str = Field(min_length=8, max_length=256)


class EmailConfirmed(BaseModel):
    email: str
    emailVerified: bool


class ChangePasswordRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    currentPassword: str = Field(min_length=1, max_length=256)
    newPassword: str = Field(min_length=8, max_length=256)


class ChangeEmailRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    email: Email
    currentPassword: str = Field(min_length=1, max_length=256)


class EmailChangePending(BaseModel):
    email: str
    message: str


class DeleteAccountRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    currentPassword: str = Field(min_length=1, max_length=256)
