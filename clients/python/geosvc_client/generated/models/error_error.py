from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="ErrorError")


@_attrs_define
class ErrorError:
    """
    Attributes:
        code (str): What went wrong
        message (str): What to do about it, for people and agents
        retryable (bool | Unset): True when the same call may succeed later
        retry_after_seconds (float | Unset): Wait this long before retrying
        limit (str | Unset): Which limit refused the call: key_rate, account_rate, concurrency (RATE_LIMITED) or
            spend_cap (QUOTA_EXCEEDED)
        quota (int | Unset): Credits of the month (QUOTA_EXCEEDED)
        used (int | Unset): Credits used this month (QUOTA_EXCEEDED)
        cap (int | Unset): The account's own monthly cap (spend_cap)
        period (str | Unset): The month counted, YYYY-MM (QUOTA_EXCEEDED)
        resets_at (str | Unset): When the credits come back, ISO 8601 UTC
        reason (str | Unset): Why the account may not call (FORBIDDEN): email_unverified
    """

    code: str
    message: str
    retryable: bool | Unset = UNSET
    retry_after_seconds: float | Unset = UNSET
    limit: str | Unset = UNSET
    quota: int | Unset = UNSET
    used: int | Unset = UNSET
    cap: int | Unset = UNSET
    period: str | Unset = UNSET
    resets_at: str | Unset = UNSET
    reason: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        code = self.code

        message = self.message

        retryable = self.retryable

        retry_after_seconds = self.retry_after_seconds

        limit = self.limit

        quota = self.quota

        used = self.used

        cap = self.cap

        period = self.period

        resets_at = self.resets_at

        reason = self.reason

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "code": code,
                "message": message,
            }
        )
        if retryable is not UNSET:
            field_dict["retryable"] = retryable
        if retry_after_seconds is not UNSET:
            field_dict["retryAfterSeconds"] = retry_after_seconds
        if limit is not UNSET:
            field_dict["limit"] = limit
        if quota is not UNSET:
            field_dict["quota"] = quota
        if used is not UNSET:
            field_dict["used"] = used
        if cap is not UNSET:
            field_dict["cap"] = cap
        if period is not UNSET:
            field_dict["period"] = period
        if resets_at is not UNSET:
            field_dict["resetsAt"] = resets_at
        if reason is not UNSET:
            field_dict["reason"] = reason

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        code = d.pop("code")

        message = d.pop("message")

        retryable = d.pop("retryable", UNSET)

        retry_after_seconds = d.pop("retryAfterSeconds", UNSET)

        limit = d.pop("limit", UNSET)

        quota = d.pop("quota", UNSET)

        used = d.pop("used", UNSET)

        cap = d.pop("cap", UNSET)

        period = d.pop("period", UNSET)

        resets_at = d.pop("resetsAt", UNSET)

        reason = d.pop("reason", UNSET)

        error_error = cls(
            code=code,
            message=message,
            retryable=retryable,
            retry_after_seconds=retry_after_seconds,
            limit=limit,
            quota=quota,
            used=used,
            cap=cap,
            period=period,
            resets_at=resets_at,
            reason=reason,
        )

        error_error.additional_properties = d
        return error_error

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
