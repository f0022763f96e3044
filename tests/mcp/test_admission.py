"""The edge's refusals (app/mcp/admission.py) say what the tool handler's would."""

from __future__ import annotations

import pytest
import redis

from app.kit.errors import AppError, unavailable_for
from app.mcp.admission import refusal_result
from app.mcp.tool_results import error_result
from app.metering.refusals import refusal
from app.metering.scripts import ACCOUNT_RATE, CONCURRENCY, KEY_RATE, OVER_CREDITS
from app.plans import Plan, limits_for
from app.tool_calls.service import email_unverified


def refused(status: int, plan: Plan = Plan.FREE, credit_cap: int | None = None) -> AppError:
    limits = limits_for(plan)
    used = credit_cap if credit_cap is not None else 1000
    return refusal(status, plan, limits, credit_cap, used, 2, 137, "2026-12", cost=1, granted=5)


class TestRefusalResult:
    @pytest.mark.parametrize(
        "make",
        [
            lambda: refused(KEY_RATE),
            lambda: refused(ACCOUNT_RATE, Plan.STANDARD),
            lambda: refused(CONCURRENCY),
            lambda: refused(OVER_CREDITS),
            lambda: refused(OVER_CREDITS, Plan.STANDARD, credit_cap=40),
            email_unverified,
            lambda: unavailable_for(redis.ConnectionError("down")),
        ],
        ids=["key_rate", "account_rate", "concurrency", "quota", "spend_cap", "email", "outage"],
    )
    def test_is_the_sdk_models_dump(self, make: object) -> None:
        error = make()  # type: ignore[operator]
        assert isinstance(error, AppError)
        expected = error_result(error).model_dump(by_alias=True, exclude_none=True, mode="json")
        assert refusal_result(error) == expected
        assert list(refusal_result(error)) == list(expected)  # the same order on the wire
