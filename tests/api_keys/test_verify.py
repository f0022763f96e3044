"""verify_bearer / averify_bearer in this process, against keys made through the live
server on the same backend (database and pepper)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy import event

from app.api_keys import service
from app.api_keys.verify import KeyRecord, averify_bearer, verify_bearer
from app.kit.config import get_settings
from app.kit.db import get_engine, new_session
from app.kit.errors import Unauthenticated
from app.kit.principal import CallerPrincipal
from app.kit.ttl_cache import TTLCache
from app.runtime import reload_settings
from tests.api_keys.conftest import create_key
from tests.support.factories import sign_up
from tests.support.fixtures import Backend


class QueryCounter:
    """Statements this process sends to the database, and the threads that sent them."""

    def __init__(self) -> None:
        self.threads: list[int] = []

    def __call__(self, *_args: Any) -> None:
        self.threads.append(threading.get_ident())

    @property
    def count(self) -> int:
        return len(self.threads)


@pytest.fixture
def queries(use_backend: Backend) -> Iterator[QueryCounter]:
    counter = QueryCounter()
    engine = get_engine()
    event.listen(engine, "before_cursor_execute", counter)
    yield counter
    event.remove(engine, "before_cursor_execute", counter)


@pytest.fixture
def account(use_backend: Backend, http: httpx.Client) -> str:
    return str(sign_up(http)["userId"])


def bearer(plaintext: str) -> str:
    return f"Bearer {plaintext}"


class TestVerifyBearer:
    def test_a_valid_key_gives_its_principal(self, http: httpx.Client, account: str) -> None:
        created = create_key(http)

        principal = verify_bearer(bearer(created["plaintext"]))

        assert principal == CallerPrincipal(
            key_id=created["key"]["keyId"], user_id=account, scopes=frozenset({"read:data"})
        )

    def test_scheme_is_case_insensitive(self, http: httpx.Client, account: str) -> None:
        plaintext = create_key(http)["plaintext"]
        assert verify_bearer(f"bearer {plaintext}").user_id == account

    @pytest.mark.parametrize(
        ("header", "message"),
        [
            (None, "Missing API key"),
            ("", "Missing API key"),
            ("   ", "Missing API key"),
            ("Basic dXNlcjpwYXNz", "must be `Bearer <API key>`"),
            ("Bearer", "must be `Bearer <API key>`"),
            ("Bearer svc_live_ak_abc", "Malformed API key"),
            ("Bearer svc_stage_ak_0123456789abcdef_" + "a" * 40, "Malformed API key"),
            ("Bearer svc_live_ak_0123456789abcdef_short", "Malformed API key"),
            ("Bearer svc_live_ak_0123456789ABCDEF_" + "a" * 40, "Malformed API key"),
        ],
    )
    def test_missing_and_malformed_headers(
        self, use_backend: Backend, header: str | None, message: str
    ) -> None:
        with pytest.raises(Unauthenticated, match=message) as raised:
            verify_bearer(header)
        assert raised.value.status == 401

    def test_unknown_key_id(self, use_backend: Backend) -> None:
        with pytest.raises(Unauthenticated, match="Invalid API key"):
            verify_bearer(bearer("svc_live_ak_0123456789abcdef_" + "a" * 40))

    def test_wrong_secret_of_a_real_key(self, http: httpx.Client, account: str) -> None:
        plaintext = create_key(http)["plaintext"]
        prefix, secret = plaintext.rsplit("_", 1)
        wrong = prefix + "_" + ("b" if secret[0] != "b" else "c") + secret[1:]
        verify_bearer(bearer(plaintext))  # cached: the wrong secret is refused from the cache

        with pytest.raises(Unauthenticated, match="Invalid API key"):
            verify_bearer(bearer(wrong))

    def test_a_test_mode_key_verifies_on_the_same_path_with_its_env(
        self, http: httpx.Client, account: str
    ) -> None:
        """Issue 57, item 1: svc_test_ak_ keys go through `verify_bearer` as live ones do;
        a key's id and secret under the other environment's prefix are refused."""
        created = http.post("/api-keys", json={"name": "ci", "env": "test"}).json()
        live = create_key(http)["plaintext"]

        principal = verify_bearer(bearer(created["plaintext"]))

        assert created["plaintext"].startswith("svc_test_ak_")
        assert (principal.key_id, principal.env, principal.is_test) == (
            created["key"]["keyId"],
            "test",
            True,
        )
        assert verify_bearer(bearer(live)).env == "live"
        swapped = [
            created["plaintext"].replace("svc_test_ak_", "svc_live_ak_", 1),
            live.replace("svc_live_ak_", "svc_test_ak_", 1),
        ]
        for token in swapped:
            with pytest.raises(Unauthenticated, match="Invalid API key"):
                verify_bearer(bearer(token))

    def test_revoked_key(self, http: httpx.Client, account: str) -> None:
        created = create_key(http)
        assert http.delete(f"/api-keys/{created['key']['keyId']}").status_code == 204

        with pytest.raises(Unauthenticated, match="revoked"):
            verify_bearer(bearer(created["plaintext"]))

    def test_revoked_is_not_revealed_without_the_secret(
        self, http: httpx.Client, account: str
    ) -> None:
        created = create_key(http)
        assert http.delete(f"/api-keys/{created['key']['keyId']}").status_code == 204
        guess = f"svc_live_ak_{created['key']['keyId']}_" + "a" * 40

        with pytest.raises(Unauthenticated, match="Invalid API key"):
            verify_bearer(bearer(guess))


def wait_for_refusal(header: str, deadline_s: float) -> Unauthenticated:
    deadline = time.monotonic() + deadline_s
    while True:
        try:
            verify_bearer(header)
        except Unauthenticated as exc:
            return exc
        assert time.monotonic() < deadline, "still accepted"
        time.sleep(0.005)  # polling interval, not synchronisation


@pytest.fixture
def long_cache(use_backend: Backend, monkeypatch: pytest.MonkeyPatch) -> None:
    """Cache entries that outlive the test: what this process checks is its cached copy."""
    monkeypatch.setenv("GEOSVC_KEY_CACHE_TTL_S", "60")
    reload_settings()


class TestExpiry:
    def test_a_cached_key_stops_at_its_expiry_without_a_read(
        self, http: httpx.Client, account: str, long_cache: None, queries: QueryCounter
    ) -> None:
        expires = datetime.now(UTC) + timedelta(seconds=1.5)
        response = http.post("/api-keys", json={"name": "k", "expiresAt": expires.isoformat()})
        header = bearer(response.json()["plaintext"])
        verify_bearer(header)  # read once; later checks within the TTL hit the cache
        reads = queries.count

        refusal = wait_for_refusal(header, deadline_s=3)

        assert datetime.now(UTC) >= expires
        assert "expired" in refusal.message
        assert queries.count == reads

    def test_an_expiry_set_elsewhere_is_seen_within_the_ttl(
        self, http: httpx.Client, account: str
    ) -> None:
        created = create_key(http)
        header = bearer(created["plaintext"])
        verify_bearer(header)  # cached here
        soon = datetime.now(UTC) + timedelta(seconds=0.5)

        patched = http.patch(
            f"/api-keys/{created['key']['keyId']}", json={"expiresAt": soon.isoformat()}
        )
        assert patched.status_code == 200

        refusal = wait_for_refusal(header, deadline_s=0.5 + get_settings().key_cache_ttl_s + 0.5)
        assert "expired" in refusal.message


class TestCache:
    def test_a_cache_hit_makes_no_query(
        self, http: httpx.Client, account: str, queries: QueryCounter
    ) -> None:
        plaintext = create_key(http)["plaintext"]
        verify_bearer(bearer(plaintext))
        after_miss = queries.count
        assert after_miss >= 1

        for _ in range(50):
            verify_bearer(bearer(plaintext))

        assert queries.count == after_miss

    def test_unknown_keys_are_cached_too(self, use_backend: Backend, queries: QueryCounter) -> None:
        unknown = bearer("svc_live_ak_zzzzzzzzzzzzzzzz_" + "a" * 40)
        for _ in range(5):
            with pytest.raises(Unauthenticated):
                verify_bearer(unknown)
        assert queries.count == 1

    def test_revocation_elsewhere_is_seen_within_the_ttl(
        self, http: httpx.Client, account: str
    ) -> None:
        """The live server revokes; this process (another "api process") holds a cached
        entry and must refuse the key within key_cache_ttl_s of the revocation."""
        created = create_key(http)
        header = bearer(created["plaintext"])
        verify_bearer(header)  # cached here

        assert http.delete(f"/api-keys/{created['key']['keyId']}").status_code == 204
        revoked_at = time.monotonic()
        deadline = revoked_at + get_settings().key_cache_ttl_s + 0.1
        refusal: Unauthenticated | None = None
        while refusal is None:
            try:
                verify_bearer(header)
            except Unauthenticated as exc:
                refusal = exc
                continue
            assert time.monotonic() < deadline, "revocation not seen within the cache TTL"
            time.sleep(0.005)  # polling interval, not synchronisation
        assert time.monotonic() <= deadline
        assert "revoked" in refusal.message

    def test_revocation_in_this_process_is_immediate(
        self, http: httpx.Client, account: str
    ) -> None:
        created = create_key(http)
        header = bearer(created["plaintext"])
        verify_bearer(header)  # cached here

        with new_session() as session:
            service.revoke_key(session, account, created["key"]["keyId"])
            session.commit()

        with pytest.raises(Unauthenticated, match="revoked"):
            verify_bearer(header)

    def test_concurrent_verifications(self, http: httpx.Client, account: str) -> None:
        plaintexts = [create_key(http, f"k{n}")["plaintext"] for n in range(4)]

        def verify(number: int) -> str:
            return verify_bearer(bearer(plaintexts[number % 4])).user_id

        with ThreadPoolExecutor(max_workers=8) as pool:
            users = set(pool.map(verify, range(400)))

        assert users == {account}

    def test_bounded_size(self) -> None:
        cache: TTLCache[str, KeyRecord] = TTLCache(ttl_s=60, max_entries=10)
        record = KeyRecord(None, None, revoked=False)
        for number in range(25):
            cache.put(f"k{number}", record)
        assert len(cache) <= 10
        assert cache.get("k24") is record


class TestAverifyBearer:
    async def test_a_miss_reads_in_a_worker_thread_and_a_hit_inline(
        self, http: httpx.Client, account: str, queries: QueryCounter
    ) -> None:
        created = create_key(http)
        loop_thread = threading.get_ident()

        principal = await averify_bearer(bearer(created["plaintext"]))

        assert principal.user_id == account
        assert queries.threads, "the miss read the database"
        assert loop_thread not in queries.threads
        misses = queries.count
        assert (await averify_bearer(bearer(created["plaintext"]))) == principal
        assert queries.count == misses

    async def test_refusals(self, http: httpx.Client, account: str) -> None:
        created = create_key(http)
        with pytest.raises(Unauthenticated, match="Missing"):
            await averify_bearer(None)
        assert http.delete(f"/api-keys/{created['key']['keyId']}").status_code == 204
        with pytest.raises(Unauthenticated, match="revoked"):
            await averify_bearer(bearer(created["plaintext"]))
