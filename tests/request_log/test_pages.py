"""Pages of the request log (keyset cursors): forward and back, calls arriving meanwhile,
ties on the same millisecond, cursors past the end."""

from __future__ import annotations

import pytest

from app.kit.errors import InvalidArgument
from app.request_log.pages import Page, page_of
from app.request_log.service import CallEntry


def entry(at_ms: int, tool: str = "geocode", latency_ms: float = 1.0) -> CallEntry:
    return CallEntry(at_ms, "api_key", "key1", tool, "OK", latency_ms, 1, f"call_{at_ms}")


def times(page: Page) -> list[int]:
    return [call.at_ms for call in page.entries]


LOG = [entry(at) for at in range(1000, 1010)]  # ten calls, any order in the list


class TestPages:
    def test_first_page_is_the_newest_and_points_older_only(self) -> None:
        page = page_of(list(reversed(LOG)), limit=4)

        assert times(page) == [1009, 1008, 1007, 1006]
        assert page.offset == 0
        assert page.newer is None
        assert page.older is not None

    def test_walking_older_then_newer_visits_every_call_once(self) -> None:
        first = page_of(LOG, limit=4)
        second = page_of(LOG, limit=4, before=first.older)
        third = page_of(LOG, limit=4, before=second.older)

        assert times(second) == [1005, 1004, 1003, 1002]
        assert (second.offset, third.offset) == (4, 8)
        assert times(third) == [1001, 1000]
        assert third.older is None
        back = page_of(LOG, limit=4, after=third.newer)
        assert times(back) == times(second)
        assert page_of(LOG, limit=4, after=back.newer) == first

    def test_a_page_back_to_the_start_is_full(self) -> None:
        third = page_of(LOG, limit=4, before=page_of(LOG, limit=3).older)
        assert times(third) == [1006, 1005, 1004, 1003]

        back = page_of(LOG, limit=4, after=third.newer)  # only three are newer

        assert times(back) == [1009, 1008, 1007, 1006]
        assert back.newer is None

    def test_calls_arriving_meanwhile_shift_nothing(self) -> None:
        first = page_of(LOG, limit=4)
        grown = [*LOG, entry(1010), entry(1011)]  # two new calls before the next click

        second = page_of(grown, limit=4, before=first.older)

        assert times(second) == [1005, 1004, 1003, 1002]
        assert second.offset == 6
        assert times(page_of(grown, limit=4, after=second.newer)) == [1009, 1008, 1007, 1006]

    def test_calls_in_the_same_millisecond_are_split_across_pages_without_loss(self) -> None:
        tied = [entry(5000, latency_ms=n) for n in range(7)]

        first = page_of(tied, limit=3)
        second = page_of(tied, limit=3, before=first.older)
        third = page_of(tied, limit=3, before=second.older)

        seen = [*first.entries, *second.entries, *third.entries]
        assert sorted(call.latency_ms for call in seen) == list(range(7))
        assert third.older is None

    def test_a_cursor_past_the_end_answers_an_empty_page_that_leads_back(self) -> None:
        page = page_of(LOG, limit=4, before="999-000000000000")

        assert page.entries == []
        assert page.offset == 10
        assert times(page_of(LOG, limit=4, after=page.newer)) == [1003, 1002, 1001, 1000]

    def test_before_and_after_together_are_refused(self) -> None:
        with pytest.raises(InvalidArgument, match="not both"):
            page_of(LOG, limit=4, before="1005-000000000000", after="1001-000000000000")
