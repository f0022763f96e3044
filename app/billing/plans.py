"""Plans and their monthly quotas (from Settings)."""

from __future__ import annotations

from enum import StrEnum

from app.config import get_settings


class Plan(StrEnum):
    FREE = "free"
    STANDARD = "standard"


def quota_for(plan: Plan) -> int:
    settings = get_settings()
    return settings.standard_quota if plan is Plan.STANDARD else settings.free_quota
