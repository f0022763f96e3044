"""The beat schedule: task names and crontabs (UTC), and when the outbox drain is sent.

Both tasks are safe to run twice or late: the rollover writes each account's period once
(unique key) and always finalises the period before "now"; reconciliation recomputes
from the ledger. The rollover and the meter report also run one at a time (a Redis lock,
`app.queue.locks`), so two beats by mistake never do their work twice at once.
"""

from __future__ import annotations

from typing import Any

from celery.schedules import crontab

from app.jobs.runner import PURGE_EXPIRED_TASK, RESUME_STALLED_TASK
from app.metering.outbox import DRAIN_TASK, pending
from app.queue.schedules import EveryIf

BEAT_SCHEDULE: dict[str, dict[str, Any]] = {
    "monthly-rollover": {
        "task": "metering.rollover",
        "schedule": crontab(minute="0", hour="0", day_of_month="1"),
    },
    # Safety net: api processes ask for drains themselves within 0.5 s of a call; this
    # covers a request lost with its drainer or a Redis restart. Beat sends the task only
    # while events wait (one LLEN from beat every 5 s), so an idle service wakes no worker.
    "drain-usage-outbox": {
        "task": DRAIN_TASK,
        "schedule": EveryIf(5.0, pending),
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
    # Bulk jobs: a job with no progress for a while (a worker killed) is sent again; a
    # finished job's results are deleted once they expire (app/jobs).
    "resume-stalled-jobs": {
        "task": RESUME_STALLED_TASK,
        "schedule": 30.0,
        "options": {"expires": 25},
    },
    "purge-expired-jobs": {
        "task": PURGE_EXPIRED_TASK,
        "schedule": crontab(minute="*/10"),
        "options": {"expires": 590},
    },
}
