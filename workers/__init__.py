"""The Celery edge: task functions over feature services, worker signals, the beat schedule.

A worker or beat process imports this package (`geosvc worker`, `geosvc beat`, or
`celery -A workers`); nothing under `app/` does.
"""

from app.queue import celery_app
from beat_schedule import BEAT_SCHEDULE
from workers import billing, jobs, mail, maintenance, tiles, tools

celery_app.conf.beat_schedule = BEAT_SCHEDULE

__all__ = ["billing", "celery_app", "jobs", "mail", "maintenance", "tiles", "tools"]
