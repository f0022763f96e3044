"""The jobs service and runner in this process, on the database matrix and Redis: a chunk
run twice writes and counts once; expired results are deleted (beat's purge)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from app.jobs import runner
from app.jobs import service as jobs
from app.kit.clock import period_of, utcnow
from app.kit.db import new_session
from app.kit.errors import NotFound
from app.kit.ids import new_user_id
from app.kit.redis_client import sync_redis
from app.metering.keys import counter_key
from tests.support.fixtures import Backend


def submitted(user_id: str, items: list[object]) -> str:
    with new_session() as session:
        job = jobs.submit_job(
            session, user_id=user_id, key_id=None, tool="geocode", items=items, origin="v1"
        )
        session.commit()
        return job.id


class TestRunChunk:
    def test_a_chunk_run_twice_writes_and_counts_once(self, use_backend: Backend) -> None:
        user_id = new_user_id()
        # Two chunks (a free account's chunk is 5 s of its pace: 100 rows); the rows
        # after the third are invalid, answered without running.
        items: list[object] = [{"query": "Paris"}, {"query": "Qxzzyv Qqxzw"}] + [{}] * 110
        job_id = submitted(user_id, items)

        assert runner.run_chunk(job_id, 0) == "done: 1 with data"
        assert runner.run_chunk(job_id, 0) == "chunk done before"  # redelivered

        with new_session() as session:
            job = jobs.get_job(session, user_id, job_id)
            rows = jobs.job_rows(session, user_id, job_id)
        assert job.chunks_total == 2
        assert (job.status, job.rows_done, job.rows_with_data, job.credits) == (
            "working",
            job.chunk_rows,
            1,
            1,
        )
        assert len(rows) == job.chunk_rows  # the second chunk's rows are not run yet
        assert [row.error["code"] if row.error else "data" for row in rows[:3]] == [
            "data",
            "NOT_FOUND",
            "INVALID_ARGUMENT",
        ]
        used = sync_redis().hget(counter_key(user_id, period_of(utcnow())), "used")
        assert used == "1"


class TestPurge:
    def test_expired_results_are_deleted_and_the_rest_kept(self, use_backend: Backend) -> None:
        user_id = new_user_id()
        old, fresh = submitted(user_id, [{"query": "Paris"}]), submitted(user_id, [{}])
        with new_session() as session:
            jobs.cancel_job(session, user_id, old)  # ended: kept until it expires
            session.commit()
            expires_at = jobs.get_job(session, user_id, old).expires_at
        assert expires_at is not None

        purged = runner.purge_expired(now=expires_at + timedelta(seconds=1))

        assert purged >= 1
        with new_session() as session:
            with pytest.raises(NotFound):
                jobs.get_job(session, user_id, old)
            assert jobs.get_job(session, user_id, fresh).status == "working"
