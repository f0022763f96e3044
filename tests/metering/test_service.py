"""reserve / commit / release against the real Redis (fakeredis without it)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from datetime import timedelta

import pytest
import redis
import redis.asyncio as aioredis
from sqlmodel import Session, select

from app.kit.clock import iso_ms, period_end, period_of, utcnow
from app.kit.config import get_settings
from app.kit.db import new_session
from app.kit.errors import QuotaExceeded
from app.kit.redis_client import async_redis, send_now, sync_redis
from app.metering import retries, service
from app.metering.keys import counter_key, outbox_bucket, reservations_key
from app.metering.outbox import drain
from app.metering.readings import usage_state
from app.metering.service import Reservation, release, reserve
from app.models import UsageEvent
from app.plans import Plan
from tests.metering.conftest import Accounts, call_id, commit
from tests.support.services import redis_reachable


async def _try_reserve(user_id: str, plan: Plan = Plan.FREE) -> Reservation | QuotaExceeded:
    try:
        return await reserve(user_id, plan)
    except QuotaExceeded as exc:
        return exc


class TestReserve:
    @pytest.mark.skipif(
        not redis_reachable(),
        reason="late in a full run, fakeredis's TCP server (a thread per connection, each "
        "polling every 10 ms, hundreds of them) answers 200 at once after the 1.5 s timeout",
    )
    async def test_200_concurrent_reservations_with_10_credits_left(
        self, redis_accounts: Accounts
    ) -> None:
        user_id, period = redis_accounts.new_id(), period_of(utcnow())
        quota = get_settings().free_quota
        redis_accounts.set_used(user_id, period, quota - 10)

        outcomes = await asyncio.gather(*(_try_reserve(user_id) for _ in range(200)))

        granted = [o for o in outcomes if isinstance(o, Reservation)]
        refused = [o for o in outcomes if isinstance(o, QuotaExceeded)]
        assert (len(granted), len(refused)) == (10, 190)
        assert len({r.reservation_id for r in granted}) == 10
        body = refused[0].to_body()
        assert body["error"]["code"] == "QUOTA_EXCEEDED"
        assert body["error"]["message"]
        assert {k: body["error"][k] for k in ("quota", "used", "period", "resetsAt")} == {
            "quota": quota,
            "used": quota - 10,
            "period": period,
            "resetsAt": iso_ms(period_end(period)),
        }
        await asyncio.gather(*(commit(r) for r in granted))
        assert redis_accounts.used(user_id, period) == quota
        assert isinstance(await _try_reserve(user_id), QuotaExceeded)

    async def test_released_reservations_cost_nothing(self, redis_accounts: Accounts) -> None:
        user_id, period = redis_accounts.new_id(), period_of(utcnow())
        quota = get_settings().free_quota
        redis_accounts.set_used(user_id, period, quota - 10)

        first = await asyncio.gather(*(reserve(user_id, Plan.FREE) for _ in range(10)))
        assert isinstance(await _try_reserve(user_id), QuotaExceeded)
        await asyncio.gather(*(release(r) for r in first))

        assert redis_accounts.used(user_id, period) == quota - 10
        again = await asyncio.gather(*(reserve(user_id, Plan.FREE) for _ in range(10)))
        assert len(again) == 10
        await asyncio.gather(*(release(r) for r in again))

    async def test_standard_plan_is_never_refused_and_overage_counts(
        self, redis_accounts: Accounts
    ) -> None:
        user_id, period = redis_accounts.new_id(), period_of(utcnow())
        quota = get_settings().standard_quota
        redis_accounts.set_used(user_id, period, quota - 2)

        reservations = await asyncio.gather(*(reserve(user_id, Plan.STANDARD) for _ in range(5)))
        await asyncio.gather(*(commit(r) for r in reservations))

        assert redis_accounts.used(user_id, period) == quota + 3
        assert usage_state(quota + 3, quota) == "over"

    async def test_commit_of_expired_reservation_still_counts(
        self, redis_accounts: Accounts
    ) -> None:
        user_id, period = redis_accounts.new_id(), period_of(utcnow())
        gone = Reservation("res_never_made", user_id, period, Plan.FREE)

        await commit(gone)

        assert redis_accounts.used(user_id, period) == 1

    async def test_keys_share_the_account_hash_tag_and_expire(
        self, redis_accounts: Accounts
    ) -> None:
        user_id, period = redis_accounts.new_id(), period_of(utcnow())
        reservation = await reserve(user_id, Plan.FREE)
        counter, holds = counter_key(user_id, period), reservations_key(user_id, period)
        assert f"{{{user_id}}}" in counter
        assert f"{{{user_id}}}" in holds
        ttl_ms = redis_accounts.pttl(holds)
        assert 0 < ttl_ms <= get_settings().reservation_ttl_s * 1000

        await commit(reservation)

        assert redis_accounts.store.zcard(holds) == 0
        # counters outlive their period by about three months
        ttl = timedelta(milliseconds=redis_accounts.pttl(counter))
        assert period_end(period) + timedelta(days=90) < utcnow() + ttl

    async def test_reservation_of_a_killed_process_frees_itself(
        self, redis_accounts: Accounts, use_redis: dict[str, str]
    ) -> None:
        ttl_s = 5
        user_id, period = redis_accounts.new_id(), period_of(utcnow())
        quota = get_settings().free_quota
        redis_accounts.set_used(user_id, period, quota - 1)
        script = (
            "import asyncio, sys\n"
            "from app.plans import Plan\n"
            "from app.metering.service import reserve\n"
            "async def main():\n"
            "    r = await reserve(sys.argv[1], Plan.FREE)\n"
            "    print(r.reservation_id, flush=True)\n"
            "    await asyncio.sleep(600)\n"
            "asyncio.run(main())\n"
        )
        child = subprocess.Popen(
            [sys.executable, "-c", script, user_id],
            env={**use_redis, "GEOSVC_RESERVATION_TTL_S": str(ttl_s)},
            stdout=subprocess.PIPE,
        )
        try:
            assert child.stdout is not None
            line = child.stdout.readline()  # blocks until the child holds the credit
            reserved_at = time.monotonic()
            assert line.startswith(b"res_"), line
            assert isinstance(await _try_reserve(user_id), QuotaExceeded)
        finally:
            child.kill()  # SIGKILL: no release, no cleanup
            child.wait()

        deadline = reserved_at + ttl_s + 2
        while isinstance(outcome := await _try_reserve(user_id), QuotaExceeded):
            assert time.monotonic() < deadline, "the dead process's credit never came back"
            await asyncio.sleep(0.1)
        assert time.monotonic() - reserved_at >= ttl_s - 0.5  # not before it expired
        await release(outcome)
        assert redis_accounts.used(user_id, period) == quota - 1


class TestCommitWrittenBeforeItsReply:
    """`send_commit` (an MCP answer goes out while Redis runs the commit): the commit is in
    Redis once it returns; its reply is read later, once, on a connection no one shares."""

    async def test_the_commit_counts_before_its_reply_is_read(
        self, redis_accounts: Accounts
    ) -> None:
        user_id, period = redis_accounts.new_id(), period_of(utcnow())
        reservation = await reserve(user_id, Plan.FREE)

        committed = await service.send_commit(
            reservation, call_id=call_id(), key_id=None, tool="geocode"
        )

        deadline = time.monotonic() + 5
        while redis_accounts.used(user_id, period) != 1:  # read on another connection
            assert time.monotonic() < deadline, "the commit never reached Redis"
            await asyncio.sleep(0.01)
        assert await committed() == 1
        assert redis_accounts.store.zcard(reservations_key(user_id, period)) == 0

    async def test_a_cluster_commit_sent_again_counts_once(self, redis_accounts: Accounts) -> None:
        if not get_settings().redis_cluster:
            pytest.skip("only redis-py's cluster pipeline sends a pipeline again")
        user_id, period = redis_accounts.new_id(), period_of(utcnow())
        reservation = await reserve(user_id, Plan.FREE)
        # What the cluster pipeline does after a node's error: the same commit once more.
        for _ in range(2):
            committed = await service.send_commit(
                reservation, call_id=call_id(), key_id=None, tool="geocode"
            )
            assert await committed() == 1

        assert redis_accounts.used(user_id, period) == 1

    @pytest.mark.skipif(
        not redis_reachable(),
        reason="fakeredis's TCP server closes the connection after an error reply",
    )
    async def test_an_error_reply_is_raised_and_the_connection_stays_usable(
        self, redis_accounts: Accounts
    ) -> None:
        key = counter_key(redis_accounts.new_id(), period_of(utcnow()))
        async with async_redis().pipeline(transaction=False) as pipe:
            pipe.set(key, "x")
            pipe.lpush(key, "y")  # WRONGTYPE: a string, not a list
            pipe.get(key)
            read_replies = await send_now(pipe)
        ok, wrong_type, value = await read_replies()

        assert ok in ("OK", True)
        assert isinstance(wrong_type, redis.ResponseError)
        assert "WRONGTYPE" in str(wrong_type)
        assert value == "x"
        assert await async_redis().get(key) == "x"
        await async_redis().delete(key)

    async def test_an_abandoned_read_never_hands_its_reply_to_the_next_command(
        self, redis_accounts: Accounts
    ) -> None:
        if get_settings().redis_cluster:
            pytest.skip("on a cluster send_now has read the replies when it returns")
        key = counter_key(redis_accounts.new_id(), period_of(utcnow()))
        async with async_redis().pipeline(transaction=False) as pipe:
            pipe.blpop([f"{key}:empty"], timeout=1)  # its reply comes after a second
            read_replies = await send_now(pipe)
        reading = asyncio.ensure_future(read_replies())
        await asyncio.sleep(0)  # the read has started
        reading.cancel()
        with pytest.raises(asyncio.CancelledError):
            await reading

        await async_redis().set(key, "mine")
        # a reused connection would answer with the BLPOP's late reply (None)
        assert await async_redis().get(key) == "mine"
        await async_redis().delete(key)

    async def test_a_command_that_cannot_be_sent_gives_its_connection_back(
        self, redis_accounts: Accounts
    ) -> None:
        if get_settings().redis_cluster:
            pytest.skip("on a cluster send_now runs the cluster pipeline: no connection of its own")
        key = counter_key(redis_accounts.new_id(), period_of(utcnow()))
        shared = async_redis().connection_pool  # its server and options, one connection
        pool = type(shared)(
            connection_class=shared.connection_class,
            max_connections=1,
            **shared.connection_kwargs,
        )
        client = aioredis.Redis(connection_pool=pool)
        try:
            async with client.pipeline(transaction=False) as pipe:
                pipe.set(key, None)  # type: ignore[arg-type]  # no encoding for None
                with pytest.raises(redis.DataError):
                    await send_now(pipe)
            # the pool's one connection is free again (else: "Too many connections")
            assert await client.set(key, "x")
            assert await client.get(key) == "x"
            await client.delete(key)
        finally:
            await client.aclose()


def drained_call_ids(user_id: str, until: int, deadline_s: float = 30.0) -> list[str]:
    """The ledger's call ids of `user_id` once it holds `until` of them (or the deadline
    passed): a drain here, and polling, since the backend's worker (started by another
    test file in this process) may be draining the same outbox, its lock held."""
    deadline = time.monotonic() + deadline_s
    while True:
        drain(new_session, sync_redis(), outbox_bucket(user_id))
        with new_session() as db:
            ids = list(db.exec(select(UsageEvent.call_id).where(UsageEvent.user_id == user_id)))
        if len(ids) >= until or time.monotonic() > deadline:
            return ids
        time.sleep(0.05)


class TestRetryKey:
    """A request the proxy sent twice (`app.metering.retries`): its second commit counts
    nothing, and both usage events carry one call id, which the ledger keeps once."""

    async def test_a_second_commit_with_the_same_key_is_not_counted(
        self, accounts: Accounts, session: Session
    ) -> None:
        user_id, period = accounts.create(session), period_of(utcnow())
        request_id = "0123456789abcdef0123456789abcdef"
        key = retries.retry_key(request_id, user_id, "geocode", {"query": "x"})
        assert key is not None
        used = []
        for _ in range(2):
            reservation = await reserve(user_id, Plan.FREE)
            committed = await service.send_commit(
                reservation, call_id=call_id(), key_id=None, tool="geocode", retry_key=key
            )
            used.append(await committed())
        other = await reserve(user_id, Plan.FREE)  # another request: counted
        await (await service.send_commit(other, call_id=call_id(), key_id=None, tool="geocode"))()
        ids = drained_call_ids(user_id, until=2)

        assert used == [1, 1]
        assert accounts.used(user_id, period) == 2
        assert accounts.store.zcard(reservations_key(user_id, period)) == 0
        assert len(ids) == 2
        assert retries.ledger_call_id(key) in ids

    def test_only_nginx_request_ids_make_a_key_and_the_question_is_in_it(self) -> None:
        request_id, user = "0123456789abcdef0123456789abcdef", "user_a"
        key = retries.retry_key(request_id, user, "geocode", {"query": "x"})
        assert key == retries.retry_key(request_id, user, "geocode", {"query": "x"})
        assert key != retries.retry_key(request_id, user, "geocode", {"query": "y"})
        assert key != retries.retry_key(request_id, user, "get_population", {"query": "x"})
        assert key != retries.retry_key("f" * 32, user, "geocode", {"query": "x"})
        # another account's call with the same id is another ledger row (issue 51, item 2)
        assert key != retries.retry_key(request_id, "user_b", "geocode", {"query": "x"})
        for malformed in (None, "", "abc", request_id.upper(), request_id + "0", "g" * 32):
            assert retries.retry_key(malformed, user, "geocode", {"query": "x"}) is None


class TestPeriodBoundary:
    async def test_new_period_starts_at_zero(self, redis_accounts: Accounts) -> None:
        user_id = redis_accounts.new_id()
        old = period_of(utcnow())
        last_moment = period_end(old) - timedelta(milliseconds=100)  # 23:59:59.9 UTC
        first_moment = period_end(old)  # 00:00:00 UTC on the 1st
        quota = get_settings().free_quota
        redis_accounts.set_used(user_id, old, quota - 1)

        late = await reserve(user_id, Plan.FREE, now=last_moment)
        assert late.period == old
        with pytest.raises(QuotaExceeded) as refused:
            await reserve(user_id, Plan.FREE, now=last_moment)
        assert refused.value.details["resetsAt"] == iso_ms(first_moment)

        fresh = await reserve(user_id, Plan.FREE, now=first_moment)
        assert fresh.period != old
        await commit(late)
        await commit(fresh)

        assert redis_accounts.used(user_id, old) == quota
        assert redis_accounts.used(user_id, fresh.period) == 1


class TestUsageState:
    @pytest.mark.parametrize(
        ("used", "quota", "state"),
        [
            (0, 1000, "ok"),
            (7999, 10_000, "ok"),  # 79.99 %
            (79_999, 100_000, "ok"),  # 79.999 %: percent rounds to 80.0, state stays ok
            (8000, 10_000, "warning"),  # 80 %
            (10_000, 10_000, "warning"),  # 100 %
            (10_010, 10_000, "over"),  # 100.1 %
            (1001, 1000, "over"),
        ],
    )
    def test_thresholds(self, used: int, quota: int, state: str) -> None:
        assert usage_state(used, quota) == state


def test_credits_per_call_is_one() -> None:
    assert service.CREDITS_PER_CALL == 1
