"""The texts of the account e-mails (plain text: every client shows it, none blocks it).

Links to the dashboard carry a token only in the fragment (`#t=...`): see
`app.users.tokens`.
"""

from __future__ import annotations

from enum import StrEnum

from app.kit.config import get_settings
from app.mail.transport import Message

SERVICE = "Geospatial Data Service"


class Notice(StrEnum):
    VERIFY = "verify_email"  # confirm the address after sign-up (link)
    CONFIRM_NEW = "confirm_new_email"  # to the address the owner wants to move to (link)
    RESET = "password_reset"  # set a new password (link)
    SIGNUP_ATTEMPT = "signup_attempt"  # someone signed up with an address already in use
    ADDRESS_TAKEN = "address_taken"  # a move to an address another account uses
    PASSWORD_CHANGED = "password_changed"
    EMAIL_CHANGED = "email_changed"  # to the old address, after a move
    ACCOUNT_DELETED = "account_deleted"


def page(path: str) -> str:
    return get_settings().base_url.rstrip("/") + path


def link(path: str, token: str) -> str:
    return f"{page(path)}#t={token}"


def _signature() -> str:
    return f"\n-- \n{SERVICE}\n{page('/')}\n"


def compose(
    notice: Notice, to: str, *, token: str | None = None, other: str | None = None
) -> Message:
    """The message of `notice` to `to`; `token` for the link notices, `other` the other
    address of an address change."""
    subject, body = _TEXTS[notice](token, other)
    return Message(to=to, subject=subject, text=body + _signature(), kind=notice.value)


def _verify(token: str | None, _other: str | None) -> tuple[str, str]:
    return (
        "Confirm your e-mail address",
        "Welcome! To finish creating your account, confirm this address:\n\n"
        f"{link('/dashboard/confirm-email', token or '')}\n\n"
        "Your API keys can make data calls once it is confirmed. The link works for 2 days "
        "and once. If you did not sign up, ignore this message: nothing happens without it.\n",
    )


def _confirm_new(token: str | None, _other: str | None) -> tuple[str, str]:
    return (
        "Confirm your new e-mail address",
        "You asked to use this address for your account. Confirm it:\n\n"
        f"{link('/dashboard/confirm-email', token or '')}\n\n"
        "The link works for 24 hours and once. Until then the account keeps its old "
        "address. If you did not ask for this, ignore this message.\n",
    )


def _reset(token: str | None, _other: str | None) -> tuple[str, str]:
    return (
        "Reset your password",
        "Someone (we hope you) asked to reset the password of the account with this "
        "address. Choose a new one here:\n\n"
        f"{link('/dashboard/reset-password', token or '')}\n\n"
        "The link works for 30 minutes and once. Setting a new password signs the account "
        "out everywhere, revokes every API key and disconnects every app (whoever knew "
        "the old password may have made them); make new keys after signing in. "
        "If you did not ask for it, ignore this message: nothing changes.\n",
    )


def _signup_attempt(_token: str | None, _other: str | None) -> tuple[str, str]:
    return (
        "Someone tried to sign up with your address",
        "Someone tried to create an account with this e-mail address, which already has "
        "one (addresses that differ only by a +tag, or by dots at Gmail, are one "
        "mailbox, and one account). Nothing was changed.\n\n"
        f"If it was you, sign in: {page('/dashboard/signin')}\n"
        f"Forgot the password? Reset it: {page('/dashboard/forgot-password')}\n\n"
        "If it was not you, you can ignore this message.\n",
    )


def _address_taken(_token: str | None, _other: str | None) -> tuple[str, str]:
    return (
        "This address already has an account",
        "Someone asked to move their account to this e-mail address, but another account "
        "already uses it (or an address of the same mailbox), so nothing was changed.\n\n"
        f"If that account is yours, sign in: {page('/dashboard/signin')}\n",
    )


def _password_changed(_token: str | None, _other: str | None) -> tuple[str, str]:
    return (
        "Your password was changed",
        "The password of your account was just changed, and other sign-ins were ended "
        "(after a reset, also every API key and connected app).\n\n"
        "If this was not you, reset it now: "
        f"{page('/dashboard/forgot-password')}\n",
    )


def _email_changed(_token: str | None, other: str | None) -> tuple[str, str]:
    return (
        "Your account's e-mail address was changed",
        f"Your account now uses the address {other}; this one no longer receives its "
        "messages.\n\nIf this was not you, reply to this message or contact us at once.\n",
    )


def _account_deleted(_token: str | None, _other: str | None) -> tuple[str, str]:
    return (
        "Your account was deleted",
        "Your account was deleted as you asked: its API keys no longer work, its "
        "subscription is cancelled, and your e-mail address, name and password are "
        "removed. Usage records are kept for accounting under an anonymous account id.\n\n"
        f"You can sign up again with this address at any time: {page('/dashboard/signup')}\n",
    )


_TEXTS = {
    Notice.VERIFY: _verify,
    Notice.CONFIRM_NEW: _confirm_new,
    Notice.RESET: _reset,
    Notice.SIGNUP_ATTEMPT: _signup_attempt,
    Notice.ADDRESS_TAKEN: _address_taken,
    Notice.PASSWORD_CHANGED: _password_changed,
    Notice.EMAIL_CHANGED: _email_changed,
    Notice.ACCOUNT_DELETED: _account_deleted,
}
