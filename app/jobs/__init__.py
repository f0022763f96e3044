"""Bulk jobs: one tool over many rows (up to `job_max_rows`), run in chunks on the
Celery queue `jobs`, metered once per row with data. /v1/jobs, the dashboard's jobs page
and MCP tasks all stand on this package; its contract (`app.jobs.service`):

- `submit_job(session, *, user_id, key_id, tool, items, origin, max_rows=None) -> Job`:
  validates every row now (a row that is not a valid call of `tool` is answered
  INVALID_ARGUMENT in its place, never run, never charged; an item may be an AppError,
  a row the edge could not read, answered with it), stores the job and its
  chunks (flushed, not committed) and returns the Job, status "working". Refuses the
  whole job (AppError) for an unknown tool or one without a batch form (NOT_FOUND /
  INVALID_ARGUMENT), no rows or more than `max_rows`, and an account with
  `jobs_per_account` jobs working already (RATE_LIMITED, `limit: "jobs"`).
  **The caller commits, then calls `start_job(job.id)`** (jobs are enqueued after the
  commit, never before).
- `get_job(session, user_id, job_id) -> Job`: NOT_FOUND for another account's job, an
  unknown one or one whose results were deleted.
- `progress(job) -> JobProgress`: status, rows (total, done, with data, with errors),
  credits so far, seconds left (estimate), a status message ("1,200 of 10,000 rows").
- `cancel_job(session, user_id, job_id) -> Job`: status "cancelled" (flushed; commit it):
  rows already done are kept and charged, a chunk running now finishes and is kept,
  nothing after. Cancelling a finished job changes nothing.
- `list_jobs(session, user_id, *, origin=None, limit=50) -> list[Job]`, newest first.
- `job_rows(session, user_id, job_id, *, offset=0, limit=1000) -> list[JobRow]`: rows in
  input order from `offset`, each `row`, and `result` (the tool's structured result) or
  `error` (the error object the call alone would have got); rows not run yet are left
  out (the list stops at the first of them); rows a cancel stopped answer CANCELLED.
- `batch_result(session, user_id, job_id) -> dict`: the finished job as the tool's batch
  result `{"results": [{"status", "result"|"error"}], "credits"}`, what a synchronous
  batch call answers (for MCP tasks' `tasks/result`), `status` as /v1 would answer.

Statuses: "working" -> "completed" (every row answered, with data or an error) or
"cancelled"; "failed" is kept for a job that cannot run (never set by a row's error).
A finished job's rows are kept `job_results_ttl_s` (`expires_at`), then beat deletes it.

How it runs (`app.jobs.runner`): each job has at most `job_chunks_in_flight` chunk
tasks queued at a time, and each finished chunk sends the next, so jobs (and accounts)
take turns on the `jobs` queue's workers; interactive calls have their own queues and
workers. A chunk takes its rows from the account's bulk pace (`app.jobs.pace`), runs its
rows, charges its rows with data in one Lua call that remembers the chunk
(`app.metering.chunks`), then writes its answers and the job's counters in one
transaction guarded by the chunk's state: a chunk run twice is charged and counted once.
The free cap or the account's spend cap stops the job's charging: every later row is
QUOTA_EXCEEDED, free. A job with no progress for `job_stall_s` (a worker killed, a
message lost) has its pending chunks sent again by beat.
"""
