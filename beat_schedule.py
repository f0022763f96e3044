"""The beat schedule: task names and crontabs (UTC), nothing else.

Both tasks are safe to run twice or late: the rollover writes each account's period once
(unique key) and always finalises the period before "now"; reconciliation recomputes
from the ledger. The rollover and the meter report also run one at a time (a Redis lock,
`app.queue.locks`), so two beats by mistake never do their work twice at once.
"""

from __future__ import annotations

from typing import Any

from celery.schedules import crontab

BEAT_SCHEDULE: dict[str, dict[str, Any]] = {
    "monthly-rollover": {
        "task": "metering.rollover",
        "schedule": crontab(minute="0", hour="0", day_of_month="1"),
    },
    # Safety net: api processes ask for drains themselves within 50 ms of a call; this
    # covers a request lost with its drainer or a Redis restart. An empty outbox costs
    # one LLEN.
    "drain-usage-outbox": {
        "task": "billing.drain_usage_outbox",
        "schedule": 5.0,
        "options": {"expires": 4},
    },
    "reconcile-usage": {
        "task": "metering.reconcile",
        "schedule": crontab(minute="*/5"),
        # A run that waited past the next one is redundant: drop it.
        "options": {"expires": 290},
    },
    # Overage to Stripe as meter events (a no-op unless GEOSVC_PAYMENT_PROVIDER=stripe).
    # Safe twice: batches are recorded before sending and carry a fixed identifier.
    "report-stripe-meter-events": {
        "task": "billing.report_meter_events",
        "schedule": crontab(minute="*/5"),
        "options": {"expires": 290},
    },
}
