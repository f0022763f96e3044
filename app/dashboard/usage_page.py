"""The usage page: this period's gauge, the daily chart, and the breakdowns by tool and by
key. The gauge reads the live counter (as the data plane enforces it); the chart and the
breakdowns read the SQL ledger (`app.metering.reports`)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from decimal import ROUND_HALF_UP, Decimal
from typing import Annotated, Any

from fastapi import APIRouter, Form, Request, Response
from sqlmodel import Session

from app.dashboard.rendering import percent, readable_date, redirect, render
from app.deps.database import SessionDep
from app.deps.users import SignedInUser
from app.kit.clock import period_end, utcnow
from app.kit.config import get_settings
from app.kit.validation import ascii_digits
from app.metering import reports
from app.metering.schemas import MAX_CREDIT_CAP, UsageResponse
from app.metering.usage import set_credit_cap, usage_for

router = APIRouter(include_in_schema=False)

STATE_LABELS = {"ok": "OK", "warning": "Warning", "over": "Over quota", "blocked": "Blocked"}
CHART_HEIGHT = 100
BAR_SLOT = 10  # viewBox units per day


@dataclass(frozen=True)
class GaugeView:
    period: str
    mode: str
    used: int
    granted: int
    quota: int
    percent: str
    state: str  # ok, warning, over, or blocked (a free account at its cap)
    state_label: str
    fill: float  # 0-100
    resets_at: datetime
    overage: int
    overage_cost: Decimal


def gauge_view(usage: UsageResponse) -> GaugeView:
    blocked = usage.mode == "free" and usage.remaining == 0
    state = "blocked" if blocked else usage.state
    # Granted credits are not billed: overage starts past the quota plus them.
    billable = usage.used - usage.granted - usage.quota
    overage = max(0, billable) if usage.mode == "standard" else 0
    price = get_settings().overage_price_per_1000
    cost = (Decimal(overage) * price / 1000).quantize(Decimal("0.01"), ROUND_HALF_UP)
    return GaugeView(
        period=usage.period,
        mode=usage.mode,
        used=usage.used,
        granted=usage.granted,
        quota=usage.quota,
        percent=percent(usage.percent),
        state=state,
        state_label=STATE_LABELS[state],
        fill=min(100.0, usage.percent),
        resets_at=period_end(usage.period),
        overage=overage,
        overage_cost=cost,
    )


@dataclass(frozen=True)
class Bar:
    x: float
    y: float
    width: float
    height: float
    title: str
    today: bool


@dataclass(frozen=True)
class Tick:
    value: int
    y: float  # in the chart's viewBox units (0 at the top)


@dataclass(frozen=True)
class ChartView:
    bars: list[Bar]
    width: int
    height: int
    peak: int
    axis: list[str]  # day labels under the chart: first, middle, last
    ticks: list[Tick]  # the y-axis: 0 up to the top of the scale, evenly spaced, 2 or 3
    days_so_far: list[reports.DayTotal]


def nice_step(peak: int) -> int:
    """The smallest of 1, 2, 5, 10, 20, 50, ... that is at least half the peak: two or
    three gridlines on round numbers."""
    magnitude = 1
    while True:
        for mantissa in (1, 2, 5):
            if mantissa * magnitude * 2 >= peak:
                return mantissa * magnitude
        magnitude *= 10


def y_ticks(peak: int) -> tuple[int, list[Tick]]:
    """The top of the scale (a round number at or above the peak) and its ticks."""
    step = nice_step(max(peak, 1))
    top = step * -(-max(peak, 1) // step)
    ticks = [
        Tick(value, CHART_HEIGHT - value * CHART_HEIGHT / top) for value in range(0, top + 1, step)
    ]
    return top, ticks


def chart_view(days: list[reports.DayTotal], today: date) -> ChartView:
    peak = max((day.credits for day in days), default=0)
    top, ticks = y_ticks(peak)
    scale = CHART_HEIGHT / top if peak else 0.0
    bars = []
    for index, day in enumerate(days):
        height = day.credits * scale
        bars.append(
            Bar(
                x=index * BAR_SLOT + 1.5,
                y=CHART_HEIGHT - height,
                width=BAR_SLOT - 3,
                height=height,
                title=f"{readable_date(day.day)}: {day.credits:,} credits",
                today=day.day == today,
            )
        )
    middle = days[len(days) // 2].day if days else today
    axis = [readable_date(d) for d in (days[0].day, middle, days[-1].day)] if days else []
    return ChartView(
        bars=bars,
        width=len(days) * BAR_SLOT,
        height=CHART_HEIGHT,
        peak=peak,
        axis=axis,
        ticks=ticks,
        days_so_far=[day for day in days if day.day <= today],
    )


def usage_context(session: Session, user_id: str) -> dict[str, Any]:
    now = utcnow()
    usage = usage_for(session, user_id, now=now)
    by_tool = reports.totals_by_tool(session, user_id, usage.period)
    tool_total = sum(row.credits for row in by_tool) or 1
    return {
        "gauge": gauge_view(usage),
        "limits": usage.limits,
        "credit_cap": usage.creditCap,
        "test_usage": usage.test,
        "chart": chart_view(reports.daily_totals(session, user_id, usage.period), now.date()),
        "by_tool": [(row, round(row.credits * 100 / tool_total, 1)) for row in by_tool],
        "by_key": reports.totals_by_key(session, user_id, usage.period),
        "overage_price": get_settings().overage_price_per_1000,
    }


@router.get("/dashboard/usage")
def usage_page(request: Request, session: SessionDep, user: SignedInUser) -> Response:
    return render(request, "usage.html", user=user, **usage_context(session, user.id))


@router.post("/dashboard/usage/cap")
def set_cap(
    request: Request, session: SessionDep, user: SignedInUser, cap: Annotated[str, Form()] = ""
) -> Response:
    """Set the monthly credit cap; an empty field removes it."""
    text = cap.strip().replace(",", "")
    value = ascii_digits(text)
    if text and (value is None or not 1 <= value <= MAX_CREDIT_CAP):
        return render(
            request,
            "usage.html",
            status=422,
            user=user,
            field_errors={"cap": f"Enter a whole number of credits from 1 to {MAX_CREDIT_CAP:,}."},
            cap_input=cap[:20],
            **usage_context(session, user.id),
        )
    set_credit_cap(session, user.id, value)
    session.commit()
    return redirect("/dashboard/usage?notice=" + ("cap_set" if value else "cap_removed"))
