from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define

from ..models.job_submission_tool import JobSubmissionTool

if TYPE_CHECKING:
    from ..models.job_submission_items_item import JobSubmissionItemsItem


T = TypeVar("T", bound="JobSubmission")


@_attrs_define
class JobSubmission:
    """
    Attributes:
        tool (JobSubmissionTool):
        items (list[JobSubmissionItemsItem]): One call's arguments per row; a row that is not a valid call is answered
            INVALID_ARGUMENT in its place, free
    """

    tool: JobSubmissionTool
    items: list[JobSubmissionItemsItem]

    def to_dict(self) -> dict[str, Any]:
        tool = self.tool.value

        items = []
        for items_item_data in self.items:
            items_item = items_item_data.to_dict()
            items.append(items_item)

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "tool": tool,
                "items": items,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.job_submission_items_item import JobSubmissionItemsItem

        d = dict(src_dict)
        tool = JobSubmissionTool(d.pop("tool"))

        items = []
        _items = d.pop("items")
        for items_item_data in _items:
            items_item = JobSubmissionItemsItem.from_dict(items_item_data)

            items.append(items_item)

        job_submission = cls(
            tool=tool,
            items=items,
        )

        return job_submission
