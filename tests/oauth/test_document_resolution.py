"""A client_id whose domain resolves slowly holds its own fetch slots, not the process's
(issue 51, item 7): the site's slot is taken from the URL before the name is resolved,
and a lookup the fetch stopped waiting for keeps its resolver thread counted until it
really returns.

In-process, with a resolver of the test's own (never the machine's): names under
slow.test wait as a name server that never answers would; every other name answers a
loopback address at once, where nothing listens (the development setting that admits
loopback stands in for "public"). The database is a SQLite file of the test's own."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator, Sequence

import anyio
import pytest

from app.kit.db import migrate
from app.oauth import document_refresh
from app.oauth.addresses import ResolverBusy, ThreadedResolver, site_of
from app.oauth.metadata_documents import FetchesBusy, MetadataDocumentError
from app.runtime import reload_settings

SLOTS = 3
PER_HOST = 2


class SlowSite:
    """Names under slow.test answer once `release` is set; any other name at once."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.asked: list[str] = []

    async def __call__(self, host: str, port: int) -> Sequence[str]:
        self.asked.append(host)
        if host.endswith(".slow.test"):
            await self.release.wait()
        return ["127.0.0.1"]


def clear_caches() -> None:
    """Settings and what is built from them, read again from the environment."""
    reload_settings()
    for cached in (document_refresh.slots, document_refresh.failures, document_refresh.current):
        cached.cache_clear()


@pytest.fixture
def fetch_settings(tmp_path: object, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Three fetch slots, two per host, no pacing in the way; a database of its own."""
    monkeypatch.delenv("GEOSVC_DATABASE_URL", raising=False)
    for name, value in {
        "GEOSVC_DATA_DIR": str(tmp_path),
        "GEOSVC_OAUTH_CIMD_ALLOW_LOOPBACK": "true",
        "GEOSVC_OAUTH_CIMD_MAX_FETCHES": str(SLOTS),
        "GEOSVC_OAUTH_CIMD_MAX_FETCHES_PER_HOST": str(PER_HOST),
        "GEOSVC_OAUTH_CIMD_FETCH_BURST": "16",
        "GEOSVC_OAUTH_CIMD_TIMEOUT_S": "5",
    }.items():
        monkeypatch.setenv(name, value)
    clear_caches()
    migrate()
    yield
    clear_caches()


async def wait_for(check: object, deadline_s: float = 5.0) -> None:
    deadline = time.monotonic() + deadline_s
    while not check():  # type: ignore[operator]
        assert time.monotonic() < deadline, "not reached in time"
        await asyncio.sleep(0.01)


async def test_a_slowly_resolving_domain_holds_only_its_own_slots(fetch_settings: None) -> None:
    resolver = SlowSite()
    held = [
        asyncio.create_task(
            document_refresh.refresh(f"http://a{n}.slow.test:1/client.json", resolver)
        )
        for n in range(PER_HOST)
    ]
    await wait_for(lambda: len(resolver.asked) == PER_HOST)

    # A third name of the same domain is refused at once, before it is resolved ...
    with pytest.raises(FetchesBusy, match="from this host"):
        await document_refresh.refresh("http://a9.slow.test:1/client.json", resolver)
    assert "a9.slow.test" not in resolver.asked
    # ... so another client's document is still fetched: resolved, dialled, and refused
    # for its own reason (nothing listens there), not for want of a slot.
    with pytest.raises(MetadataDocumentError) as other:
        await document_refresh.refresh("http://good.test:1/client.json", resolver)
    assert not isinstance(other.value, FetchesBusy), other.value
    assert "good.test" in resolver.asked

    resolver.release.set()
    for task in held:
        with pytest.raises(MetadataDocumentError, match="did not answer"):
            await task
    assert document_refresh.slots().in_flight == 0


async def test_an_abandoned_lookup_keeps_its_thread_until_it_returns() -> None:
    """getaddrinfo cannot be cancelled: a thread stays taken after its caller gave up."""
    answer = threading.Event()

    def lookup(host: str, port: int) -> Sequence[str]:
        if host.endswith(".slow.test"):
            answer.wait(10)
        return ["127.0.0.1"]

    resolver = ThreadedResolver(SLOTS, PER_HOST, lookup)
    for n in range(PER_HOST):
        with pytest.raises(TimeoutError), anyio.fail_after(0.05):
            await resolver(f"a{n}.slow.test", 443)
    with pytest.raises(ResolverBusy):
        await resolver("a9.slow.test", 443)  # the abandoned lookups still hold the site's
    assert await resolver("good.test", 443) == ["127.0.0.1"]  # another site resolves

    answer.set()
    await wait_for(lambda: not resolver.running)
    assert await resolver("a9.slow.test", 443) == ["127.0.0.1"]
    resolver.executor.shutdown()


@pytest.mark.parametrize(
    ("one", "other", "same"),
    [
        ("a1.evil.test", "a2.evil.test", True),
        ("x.y.evil.test.", "EVIL.test", True),
        ("client.example.co.uk", "login.example.co.uk", True),
        ("one.co.uk", "two.co.uk", False),
        ("evil.test", "good.test", False),
        ("203.0.113.7", "203.0.113.8", False),
        ("2001:db8::1", "2001:db8::2", True),  # one /64
    ],
)
def test_names_of_one_domain_share_a_site(one: str, other: str, same: bool) -> None:
    assert (site_of(one) == site_of(other)) is same
