from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.job_status import JobStatus
from ..types import UNSET, Unset

T = TypeVar("T", bound="Job")


@_attrs_define
class Job:
    """
    Attributes:
        id (str): The job's id, `job_...`
        tool (str): The tool each row calls
        status (JobStatus):
        rows_total (int): Rows in the job
        rows_done (int): Rows answered (with data or an error)
        credits_ (int): Credits charged so far
        origin (str | Unset): Where it was submitted: v1, dashboard, mcp
        rows_with_data (int | Unset): Rows answered with data (each charged)
        rows_with_errors (int | Unset): Rows answered with an error (free)
        seconds_left (float | None | Unset): Estimate of the time left; null when not known or finished
        status_message (str | Unset): Progress, "1,200 of 10,000 rows"
        created_at (str | Unset):
        finished_at (None | str | Unset):
        expires_at (None | str | Unset): When the results are deleted (set when the job ends)
        results (str | Unset): The path of its results
    """

    id: str
    tool: str
    status: JobStatus
    rows_total: int
    rows_done: int
    credits_: int
    origin: str | Unset = UNSET
    rows_with_data: int | Unset = UNSET
    rows_with_errors: int | Unset = UNSET
    seconds_left: float | None | Unset = UNSET
    status_message: str | Unset = UNSET
    created_at: str | Unset = UNSET
    finished_at: None | str | Unset = UNSET
    expires_at: None | str | Unset = UNSET
    results: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        tool = self.tool

        status = self.status.value

        rows_total = self.rows_total

        rows_done = self.rows_done

        credits_ = self.credits_

        origin = self.origin

        rows_with_data = self.rows_with_data

        rows_with_errors = self.rows_with_errors

        seconds_left: float | None | Unset
        if isinstance(self.seconds_left, Unset):
            seconds_left = UNSET
        else:
            seconds_left = self.seconds_left

        status_message = self.status_message

        created_at = self.created_at

        finished_at: None | str | Unset
        if isinstance(self.finished_at, Unset):
            finished_at = UNSET
        else:
            finished_at = self.finished_at

        expires_at: None | str | Unset
        if isinstance(self.expires_at, Unset):
            expires_at = UNSET
        else:
            expires_at = self.expires_at

        results = self.results

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "tool": tool,
                "status": status,
                "rowsTotal": rows_total,
                "rowsDone": rows_done,
                "credits": credits_,
            }
        )
        if origin is not UNSET:
            field_dict["origin"] = origin
        if rows_with_data is not UNSET:
            field_dict["rowsWithData"] = rows_with_data
        if rows_with_errors is not UNSET:
            field_dict["rowsWithErrors"] = rows_with_errors
        if seconds_left is not UNSET:
            field_dict["secondsLeft"] = seconds_left
        if status_message is not UNSET:
            field_dict["statusMessage"] = status_message
        if created_at is not UNSET:
            field_dict["createdAt"] = created_at
        if finished_at is not UNSET:
            field_dict["finishedAt"] = finished_at
        if expires_at is not UNSET:
            field_dict["expiresAt"] = expires_at
        if results is not UNSET:
            field_dict["results"] = results

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        id = d.pop("id")

        tool = d.pop("tool")

        status = JobStatus(d.pop("status"))

        rows_total = d.pop("rowsTotal")

        rows_done = d.pop("rowsDone")

        credits_ = d.pop("credits")

        origin = d.pop("origin", UNSET)

        rows_with_data = d.pop("rowsWithData", UNSET)

        rows_with_errors = d.pop("rowsWithErrors", UNSET)

        def _parse_seconds_left(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        seconds_left = _parse_seconds_left(d.pop("secondsLeft", UNSET))

        status_message = d.pop("statusMessage", UNSET)

        created_at = d.pop("createdAt", UNSET)

        def _parse_finished_at(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        finished_at = _parse_finished_at(d.pop("finishedAt", UNSET))

        def _parse_expires_at(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        expires_at = _parse_expires_at(d.pop("expiresAt", UNSET))

        results = d.pop("results", UNSET)

        job = cls(
            id=id,
            tool=tool,
            status=status,
            rows_total=rows_total,
            rows_done=rows_done,
            credits_=credits_,
            origin=origin,
            rows_with_data=rows_with_data,
            rows_with_errors=rows_with_errors,
            seconds_left=seconds_left,
            status_message=status_message,
            created_at=created_at,
            finished_at=finished_at,
            expires_at=expires_at,
            results=results,
        )

        job.additional_properties = d
        return job

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
