"""Each Lua script of `app.metering.scripts` (its file in app/metering/lua/), run as the
service runs it: its replies and the keys it leaves, at and over the cap, with expired
and unknown reservations. Every test runs three times: on fakeredis in this process (Lua by
lupa), on the test Redis (the machine's real one; fakeredis's server in the fast tier) and
on a local Redis Cluster.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import fakeredis
import pytest
import redis

from app.kit.redis_client import LuaScript
from app.metering import scripts
from tests.support.live_server import TEST_RUN_PREFIX
from tests.support.redis_cluster import store_for

TTL_MS = 60_000
COUNTER_TTL_S = 3600


@dataclass
class Account:
    """One account's keys (one hash tag, as `app.metering.keys` names them) on a store."""

    store: redis.Redis
    counter: str
    reservations: str
    key_bucket: str
    account_bucket: str

    def run(self, script: LuaScript, keys: list[str], args: list[Any]) -> Any:
        return script.run(self.store, keys, args)

    # Typed reads (redis-py's own are typed for its sync and async clients at once).
    def set_counter(self, **fields: int | str) -> None:
        self.store.hset(self.counter, mapping=dict(fields))

    def counter_fields(self) -> dict[str, str]:
        return dict(self.store.hgetall(self.counter))  # type: ignore[arg-type]

    def used(self) -> int | None:
        raw = self.counter_fields().get("used")
        return None if raw is None else int(raw)

    def live(self) -> list[str]:
        return list(self.store.zrange(self.reservations, 0, -1))  # type: ignore[arg-type]

    def tokens(self, bucket: str) -> int:
        """Whole tokens a rate bucket holds (as stored: at its last update)."""
        return int(float(str(self.store.hget(bucket, "t"))))

    def ttl(self, key: str) -> int:
        return int(str(self.store.ttl(key)))

    def pttl(self, key: str) -> int:
        return int(str(self.store.pttl(key)))

    def get(self, key: str) -> str | None:
        raw = self.store.get(key)
        return None if raw is None else str(raw)

    def exists(self, key: str) -> bool:
        return bool(self.store.exists(key))

    def now_ms(self) -> int:
        seconds, micros = self.store.time()  # type: ignore[misc]
        return int(seconds) * 1000 + int(micros) // 1000

    def hold(self, *reservation_ids: str, expired: bool = False) -> None:
        """Reservations as RESERVE leaves them; `expired`: their expiry already passed."""
        expiry = self.now_ms() + (-1000 if expired else TTL_MS)
        self.store.zadd(self.reservations, dict.fromkeys(reservation_ids, expiry))
        self.store.pexpire(self.reservations, TTL_MS)

    # RESERVE and RESERVE_BATCH: ARGV as `app.metering.service.admission_arguments`.
    def admission(
        self,
        script: LuaScript,
        amount: int = 1,
        *,
        limit: int | None = None,
        burst: int = 10,
        account_burst: int = 20,
        concurrency: int = 5,
        reservation_id: str = "res_a",
    ) -> list[int]:
        enforce = 0 if limit is None else 1
        keys = [self.counter, self.reservations, self.key_bucket, self.account_bucket]
        args = [reservation_id, TTL_MS, limit or 0, enforce, enforce, amount]
        # Rates of one token in 100 s: what a test sees is the burst alone.
        args += [0.01, burst, 0.01, account_burst, concurrency]
        return [int(value) for value in self.run(script, keys, args)]

    def commit(self, reservation_id: str, *, warning: int = 80, quota: int = 100) -> list[int]:
        args = [reservation_id, 1, COUNTER_TTL_S, warning, quota]
        reply = self.run(scripts.commit_script, [self.counter, self.reservations], args)
        return [int(value) for value in reply]


@pytest.fixture(params=["fakeredis", "test-redis", "cluster"])
def store(request: pytest.FixtureRequest) -> Iterator[redis.Redis]:
    if request.param == "fakeredis":
        client: redis.Redis = fakeredis.FakeRedis(decode_responses=True)
    elif request.param == "cluster":  # each script on the slot of its account's tag
        client = store_for(request.getfixturevalue("redis_cluster_url"), cluster=True)
    else:
        client = redis.Redis.from_url(request.getfixturevalue("redis_url"), decode_responses=True)
    yield client
    client.close()


@pytest.fixture
def account(store: redis.Redis) -> Iterator[Account]:
    tag = f"{TEST_RUN_PREFIX}scripts:{{usr_{secrets.token_hex(6)}}}"
    made = Account(store, f"{tag}:c", f"{tag}:c:res", f"{tag}:kb", f"{tag}:ab")
    yield made
    store.delete(made.counter, made.reservations, made.key_bucket, made.account_bucket)
    store.delete(made.counter + ":once:digest")


class TestReserve:
    def test_granted_holds_a_reservation_and_takes_tokens(self, account: Account) -> None:
        account.set_counter(used=3)
        reply = account.admission(scripts.reserve_script, 2, limit=10, reservation_id="res_1")

        assert reply == [scripts.GRANTED, 3, 1, 0, 8, 18]
        assert account.live() == ["res_1"]
        assert 0 < account.pttl(account.reservations) <= TTL_MS
        assert account.tokens(account.key_bucket) == 8
        assert account.tokens(account.account_bucket) == 18
        assert account.pttl(account.key_bucket) > 0
        assert account.used() == 3  # credits are counted at the commit, not here

    def test_a_missing_counter_is_asked_for_when_a_limit_is_enforced(
        self, account: Account
    ) -> None:
        reply = account.admission(scripts.reserve_script, limit=10)

        assert reply == [scripts.NEEDS_COUNTER, 0, 0, 0]
        assert account.live() == []
        assert not account.exists(account.key_bucket)  # nothing taken

    def test_without_a_limit_no_counter_is_needed(self, account: Account) -> None:
        assert account.admission(scripts.reserve_script)[:3] == [scripts.GRANTED, 0, 1]

    def test_at_the_cap_is_refused_but_takes_its_tokens(self, account: Account) -> None:
        account.set_counter(used=9)
        account.hold("res_old")

        reply = account.admission(scripts.reserve_script, limit=10)

        assert reply == [scripts.OVER_CREDITS, 9, 1, 0]
        assert account.live() == ["res_old"]
        assert account.tokens(account.key_bucket) == 9

    def test_over_the_cap_is_refused(self, account: Account) -> None:
        account.set_counter(used=12)
        assert account.admission(scripts.reserve_script, limit=10) == [
            scripts.OVER_CREDITS,
            12,
            0,
            0,
        ]
        assert account.live() == []

    def test_an_expired_reservation_no_longer_holds_credit(self, account: Account) -> None:
        account.set_counter(used=9)
        account.hold("res_abandoned", expired=True)

        reply = account.admission(scripts.reserve_script, limit=10, reservation_id="res_new")

        assert reply[:3] == [scripts.GRANTED, 9, 1]
        assert account.live() == ["res_new"]

    def test_an_empty_key_bucket_is_a_key_rate_refusal_with_its_wait(
        self, account: Account
    ) -> None:
        assert account.admission(scripts.reserve_script, 2, burst=2)[0] == scripts.GRANTED
        status, used, in_flight, wait_ms = account.admission(scripts.reserve_script, burst=2)

        assert (status, used, in_flight) == (scripts.KEY_RATE, 0, 1)
        assert 99_000 < wait_ms <= 100_000  # one token at 0.01 per second
        assert account.live() == ["res_a"]

    def test_an_empty_account_bucket_is_an_account_rate_refusal(self, account: Account) -> None:
        assert account.admission(scripts.reserve_script, 3, account_burst=3)[0] == 1
        reply = account.admission(scripts.reserve_script, account_burst=3)
        assert reply[0] == scripts.ACCOUNT_RATE
        assert account.tokens(account.key_bucket) == 7  # untouched

    def test_calls_in_flight_at_the_limit_are_a_concurrency_refusal(self, account: Account) -> None:
        account.hold("res_1", "res_2")
        assert account.admission(scripts.reserve_script, concurrency=2) == [
            scripts.CONCURRENCY,
            0,
            2,
            0,
        ]
        assert sorted(account.live()) == ["res_1", "res_2"]


class TestReserveBatch:
    def test_items_past_the_cap_are_refused_and_the_rest_hold_one_each(
        self, account: Account
    ) -> None:
        account.set_counter(used=7)
        reply = account.admission(scripts.reserve_batch_script, 5, limit=10, reservation_id="b")

        # status, admitted, used, in flight, wait, key tokens, account tokens
        assert reply == [scripts.OVER_CREDITS, 3, 7, 3, 0, 6, 16]
        assert sorted(account.live()) == ["b:1", "b:2", "b:3"]

    def test_every_item_admitted(self, account: Account) -> None:
        reply = account.admission(scripts.reserve_batch_script, 3, reservation_id="b")
        assert reply == [scripts.GRANTED, 3, 0, 3, 0, 7, 17]
        assert account.pttl(account.reservations) > 0

    def test_the_rate_ends_the_batch(self, account: Account) -> None:
        reply = account.admission(scripts.reserve_batch_script, 4, burst=2, reservation_id="b")
        assert reply[:2] == [scripts.KEY_RATE, 2]
        assert reply[4] > 0  # ms until the next token
        assert sorted(account.live()) == ["b:1", "b:2"]

    def test_at_the_concurrency_limit_nothing_is_admitted(self, account: Account) -> None:
        account.hold("res_1")
        reply = account.admission(scripts.reserve_batch_script, 3, concurrency=1)
        assert reply[:4] == [scripts.CONCURRENCY, 0, 0, 1]
        assert account.live() == ["res_1"]

    def test_a_missing_counter_is_asked_for(self, account: Account) -> None:
        reply = account.admission(scripts.reserve_batch_script, 3, limit=10)
        assert reply == [scripts.NEEDS_COUNTER, 0, 0, 0, 0, 0, 0]


class TestCommit:
    def test_a_live_reservation_is_closed_and_counted(self, account: Account) -> None:
        account.set_counter(used=4)
        account.hold("res_1", "res_2")

        assert account.commit("res_1") == [1, 5, scripts.ALERT_NONE, 1]
        assert account.live() == ["res_2"]
        assert account.used() == 5
        assert 0 < account.ttl(account.counter) <= COUNTER_TTL_S

    @pytest.mark.parametrize("expired", [True, False], ids=["expired", "unknown"])
    def test_an_expired_or_unknown_reservation_is_counted_anyway(
        self, account: Account, expired: bool
    ) -> None:
        if expired:
            account.hold("res_1", expired=True)
        assert account.commit("res_1") == [0, 1, scripts.ALERT_NONE, 1]
        assert account.live() == []
        assert account.used() == 1

    def test_the_warning_then_the_quota_alert_go_to_one_call_each(self, account: Account) -> None:
        account.set_counter(used=78)
        alerts = [account.commit(f"res_{i}", warning=80, quota=82)[2] for i in range(6)]

        assert alerts == [0, scripts.ALERT_WARNING, 0, scripts.ALERT_QUOTA, 0, 0]
        assert account.counter_fields().get("alert:w:80") == "1"
        assert account.counter_fields().get("alert:q:82") == "1"

    def test_reaching_the_quota_at_once_also_claims_the_warning(self, account: Account) -> None:
        account.set_counter(used=99)
        assert account.commit("res_1", warning=80, quota=100)[2] == scripts.ALERT_QUOTA
        assert account.counter_fields().get("alert:w:80") == "1"

    def test_a_quota_of_zero_has_no_alerts(self, account: Account) -> None:
        assert account.commit("res_1", warning=0, quota=0)[2] == scripts.ALERT_NONE
        assert list(account.counter_fields()) == ["used"]

    def test_a_retried_request_is_counted_once(self, account: Account) -> None:
        once = account.counter + ":once:digest"
        account.hold("res_1", "res_2")
        keys = [account.counter, account.reservations, once]

        first = account.run(scripts.commit_script, keys, ["res_1", 1, COUNTER_TTL_S, 80, 100, 60])
        again = account.run(scripts.commit_script, keys, ["res_2", 1, COUNTER_TTL_S, 80, 100, 60])

        assert first == [1, 1, 0, 1]
        assert again == [1, 1, 0, 0]  # its reservation closed, nothing counted
        assert account.live() == []
        assert account.get(once) == "res_1"
        assert 0 < account.ttl(once) <= 60


class TestCommitMany:
    def test_every_reservation_is_counted_live_or_not(self, account: Account) -> None:
        account.set_counter(used=10)
        account.hold("b:1", "b:2")
        account.hold("b:3", expired=True)
        args = [1, COUNTER_TTL_S, 80, 100, "b:1", "b:2", "b:3", "b:unknown"]

        reply = account.run(
            scripts.commit_many_script, [account.counter, account.reservations], args
        )

        assert reply == [2, 14, scripts.ALERT_NONE]
        assert account.live() == []
        assert account.ttl(account.counter) > 0

    def test_a_batch_that_reaches_the_quota_claims_its_alert(self, account: Account) -> None:
        account.set_counter(used=8)
        args = [1, COUNTER_TTL_S, 8, 10, "b:1", "b:2"]
        reply = account.run(
            scripts.commit_many_script, [account.counter, account.reservations], args
        )
        assert reply == [0, 10, scripts.ALERT_QUOTA]

    def test_the_same_batch_sent_again_counts_once(self, account: Account) -> None:
        """On a cluster redis-py may send a failed-over pipeline again: with its once key
        the second run closes the reservations and counts nothing."""
        once = account.counter + ":once:digest"
        account.set_counter(used=3)
        account.hold("b:1", "b:2")
        keys = [account.counter, account.reservations, once]
        args = [1, COUNTER_TTL_S, 80, 100, 60, "b:1", "b:2"]

        first = account.run(scripts.commit_many_script, keys, args)
        again = account.run(scripts.commit_many_script, keys, args)

        assert first == [2, 5, scripts.ALERT_NONE]
        assert again == [0, 5, 0]
        assert account.live() == []
        assert 0 < account.ttl(once) <= 60


class TestRelease:
    def test_a_live_reservation_is_given_back(self, account: Account) -> None:
        account.set_counter(used=4)
        account.hold("res_1", "res_2")
        keys = [account.counter, account.reservations]

        assert account.run(scripts.release_script, keys, ["res_1"]) == 1
        assert account.live() == ["res_2"]
        assert account.used() == 4  # a release never changes the count

    @pytest.mark.parametrize("expired", [True, False], ids=["expired", "unknown"])
    def test_an_expired_or_unknown_reservation_was_not_live(
        self, account: Account, expired: bool
    ) -> None:
        if expired:
            account.hold("res_1", expired=True)
        keys = [account.counter, account.reservations]
        assert account.run(scripts.release_script, keys, ["res_1"]) == 0
        assert account.live() == []
        assert account.used() is None

    def test_many_at_once_count_the_live_ones(self, account: Account) -> None:
        account.hold("b:1", "b:2")
        account.hold("b:3", expired=True)
        keys = [account.counter, account.reservations]
        assert account.run(scripts.release_many_script, keys, ["b:1", "b:2", "b:3", "b:x"]) == 2
        assert account.live() == []


class TestSeed:
    def test_a_missing_counter_is_made_from_the_ledger(self, account: Account) -> None:
        assert account.run(scripts.seed_script, [account.counter], [7, COUNTER_TTL_S]) == 7
        assert account.used() == 7
        assert 0 < account.ttl(account.counter) <= COUNTER_TTL_S

    def test_a_counter_made_meanwhile_is_kept(self, account: Account) -> None:
        account.set_counter(used=9)
        assert account.run(scripts.seed_script, [account.counter], [7, COUNTER_TTL_S]) == 9
        assert account.used() == 9
        assert account.ttl(account.counter) == -1  # not its to expire


class TestSnapshot:
    def test_records_used_and_when(self, account: Account) -> None:
        account.set_counter(used=5)
        assert account.run(scripts.snapshot_script, [account.counter], ["t1"]) == 1
        assert account.counter_fields() == {"used": "5", "snap_used": "5", "snap_at": "t1"}

    def test_no_counter_no_snapshot(self, account: Account) -> None:
        assert account.run(scripts.snapshot_script, [account.counter], ["t1"]) == 0
        assert not account.exists(account.counter)


class TestReconcile:
    def reconcile(self, account: Account, ledger: int, excess: int, snap_at: str) -> list[int]:
        args = [ledger, excess, snap_at, COUNTER_TTL_S]
        return [int(v) for v in account.run(scripts.reconcile_script, [account.counter], args)]

    def test_no_counter_and_an_empty_ledger_leaves_nothing(self, account: Account) -> None:
        assert self.reconcile(account, 0, 0, "") == [-1, 0]
        assert not account.exists(account.counter)

    def test_no_counter_is_made_from_the_ledger(self, account: Account) -> None:
        assert self.reconcile(account, 6, 0, "") == [-1, 6]
        assert account.used() == 6
        assert account.ttl(account.counter) > 0

    def test_the_excess_of_the_current_snapshot_is_taken_off_once(self, account: Account) -> None:
        account.set_counter(used=12, snap_used=10, snap_at="t1")

        assert self.reconcile(account, 5, 3, "t1") == [12, 9]
        assert self.reconcile(account, 5, 3, "t1") == [9, 9]  # the snapshot was consumed
        assert list(account.counter_fields()) == ["used"]

    def test_a_replaced_snapshot_takes_nothing_off(self, account: Account) -> None:
        account.set_counter(used=12, snap_at="t2")
        assert self.reconcile(account, 5, 3, "t1") == [12, 12]
        assert account.counter_fields().get("snap_at") == "t2"

    def test_never_below_the_ledger(self, account: Account) -> None:
        account.set_counter(used=4, snap_at="t1")
        assert self.reconcile(account, 6, 3, "t1") == [4, 6]
        assert account.used() == 6


def test_the_scripts_are_their_files_without_comments() -> None:
    """What Redis runs is the files' code: no comment line is sent with every EVAL."""
    for source in (scripts.RESERVE, scripts.COMMIT, scripts.RECONCILE):
        assert "--" not in source
    assert scripts.RESERVE.startswith(scripts.lua_source("prune", "buckets"))
    assert "redis.call('ZADD', KEYS[2], now + ttl, ARGV[1])" in scripts.RESERVE
