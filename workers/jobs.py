"""Bulk job tasks: a chunk of a job's rows (queue `jobs`), and beat's upkeep of jobs
(queue `billing`): resume stalled jobs, delete expired results. Thin: `app.jobs.runner`."""

from __future__ import annotations

from app.jobs import runner
from app.queue import celery_app
from app.queue.celery import MAINTENANCE_SOFT_TIME_LIMIT_S, MAINTENANCE_TIME_LIMIT_S


# No one waits on a chunk call by call, and its pool runs on idle CPU only (SCHED_IDLE):
# on a busy host 500 rows may take minutes, which the tool calls' 30 s limit would cut
# (seen at load average 30 on 2 cores), sending the chunk back to beat's resume.
@celery_app.task(
    name="jobs.run_chunk",
    soft_time_limit=MAINTENANCE_SOFT_TIME_LIMIT_S,
    time_limit=MAINTENANCE_TIME_LIMIT_S,
)
def run_chunk(job_id: str, index: int) -> str:
    return runner.run_chunk(job_id, index)


@celery_app.task(
    name=runner.RESUME_STALLED_TASK,
    soft_time_limit=MAINTENANCE_SOFT_TIME_LIMIT_S,
    time_limit=MAINTENANCE_TIME_LIMIT_S,
)
def resume_stalled() -> int:
    return runner.resume_stalled()


@celery_app.task(
    name=runner.PURGE_EXPIRED_TASK,
    soft_time_limit=MAINTENANCE_SOFT_TIME_LIMIT_S,
    time_limit=MAINTENANCE_TIME_LIMIT_S,
)
def purge_expired() -> int:
    return runner.purge_expired()
