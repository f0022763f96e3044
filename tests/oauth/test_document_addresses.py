"""Where a Client ID Metadata Document may be fetched from (issue 36 item 6): every
non-public address form refused before connecting, one resolution whose answer is the
address dialled (no DNS rebinding), and one message whatever the network said.

The fetcher runs here in-process against real servers on loopback addresses; names are
answered by a resolver of the test's own (the `Resolver` the fetcher takes), never the
machine's. The development setting that admits loopback addresses stands in for
"public" where a server must really answer."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from contextlib import ExitStack
from urllib.parse import urlencode

import httpx
import pytest

from app.kit.config import Settings
from app.oauth.metadata_documents import FetchesBusy, FetchSlots, MetadataDocumentError, fetch
from tests.fakes.oauth_host import Answer, MetadataServer
from tests.fakes.slow_http import ResettingServer, shared_free_port
from tests.support.live_server import LiveServer

# Each carries or reaches something other than a public host.
NOT_PUBLIC = [
    "::127.0.0.1",  # IPv4-compatible ::/96 (was dialled)
    "::",
    "::1",
    "::ffff:127.0.0.1",  # IPv4-mapped
    "::ffff:0:7f00:1",  # IPv4-translated
    "64:ff9b::7f00:1",  # NAT64
    "64:ff9b::a9fe:a9fe",  # NAT64 of the cloud metadata address
    "64:ff9b:1::7f00:1",  # local-use NAT64
    "2002:7f00:1::1",  # 6to4
    "2001:0:4136:e378:8000:63bf:80ff:fffe",  # Teredo (its client 127.0.0.1, obfuscated)
    "fec0::1",  # site-local
    "fc00::1",
    "fd12:3456::1",
    "fe80::1",
    "fe80::1%1",
    "ff02::1",  # multicast
    "ff0e::1",
    "100::1",  # discard
    "2001:db8::1",
    "0.0.0.0",
    "10.1.2.3",
    "100.64.0.1",  # carrier-grade NAT
    "127.0.0.1",
    "169.254.169.254",
    "172.16.0.1",
    "192.0.0.8",
    "192.168.1.1",
    "198.18.0.1",
    "224.0.0.1",  # multicast
    "239.255.255.250",
    "240.0.0.1",
    "255.255.255.255",
]
PRODUCTION = Settings(oauth_cimd_allow_loopback=False, oauth_cimd_timeout_s=2)
LOOPBACK_OK = Settings(oauth_cimd_allow_loopback=True, oauth_cimd_timeout_s=2)


class CountingResolver:
    """Answers each lookup with the next of `answers` (the last one again after)."""

    def __init__(self, *answers: list[str]) -> None:
        self.answers = list(answers)
        self.asked: list[str] = []

    async def __call__(self, host: str, port: int) -> Sequence[str]:
        self.asked.append(host)
        return self.answers[min(len(self.asked), len(self.answers)) - 1]


def run_fetch(url: str, settings: Settings, resolver: CountingResolver) -> object:
    return asyncio.run(
        fetch(url, settings, FetchSlots(4, 2, settings.oauth_cimd_timeout_s, 4), resolver)
    )


@pytest.mark.parametrize("address", NOT_PUBLIC)
def test_a_name_resolving_to_a_non_public_address_is_refused(address: str) -> None:
    resolver = CountingResolver([address])
    with pytest.raises(MetadataDocumentError) as private:
        run_fetch("https://client.test/client.json", PRODUCTION, resolver)
    assert resolver.asked == ["client.test"]
    # the same words as for a name that does not resolve: no oracle of internal names
    with pytest.raises(MetadataDocumentError) as unknown:
        run_fetch("https://client.test/client.json", PRODUCTION, CountingResolver([]))
    assert str(private.value) == str(unknown.value)
    assert "does not resolve to a public address" in str(private.value)


@pytest.mark.parametrize(
    "host", ["[::127.0.0.1]", "[64:ff9b::7f00:1]", "[2002:7f00:1::1]", "[fec0::1]", "[ff0e::1]"]
)
def test_an_address_literal_is_checked_without_resolving(host: str) -> None:
    resolver = CountingResolver(["203.0.113.1"])
    with pytest.raises(MetadataDocumentError, match="not a public address"):
        run_fetch(f"https://{host}/client.json", PRODUCTION, resolver)
    assert resolver.asked == []


@pytest.mark.parametrize("host", ["127.1", "2130706433", "0x7f000001", "0177.0.0.1", "a..b"])
def test_a_host_some_resolver_reads_as_a_number_is_refused(host: str) -> None:
    resolver = CountingResolver(["127.0.0.1"])
    with pytest.raises(MetadataDocumentError, match="not a host name"):
        run_fetch(f"http://{host}:1/client.json", LOOPBACK_OK, resolver)
    assert resolver.asked == []


def test_one_non_public_answer_among_public_ones_refuses_the_name() -> None:
    documents = MetadataServer().start()
    try:
        resolver = CountingResolver(["127.0.0.1", "10.0.0.1"])
        url = f"http://client.test:{documents.port}/client.json"
        with pytest.raises(MetadataDocumentError, match="not resolve to a public address"):
            run_fetch(url, LOOPBACK_OK, resolver)
        assert documents.requests == []
    finally:
        documents.stop()


def test_the_connection_goes_to_the_address_that_was_checked() -> None:
    """DNS rebinding: the name answers 127.0.0.1 (allowed here) once and 127.0.0.2 after.
    The document comes from the first; the second address never sees a connection."""
    port = shared_free_port(["127.0.0.1", "127.0.0.2"])
    checked, other = MetadataServer(port=port), ResettingServer("127.0.0.2", port)
    checked.start()
    other.start()
    try:
        url = f"http://client.test:{port}/client.json"
        checked.publish({"client_id": url, "redirect_uris": ["http://127.0.0.1/cb"]})
        resolver = CountingResolver(["127.0.0.1"], ["127.0.0.2"])
        fetched = run_fetch(url, LOOPBACK_OK, resolver)
        assert fetched.document["client_id"] == url  # type: ignore[attr-defined]
        assert resolver.asked == ["client.test"]  # resolved once
        assert other.accepted == 0
        assert checked.hosts == [f"client.test:{port}"]  # the name, not the address
    finally:
        checked.stop()
        other.stop()


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ('{"client_name": "a\\ud800", "redirect_uris": ["http://127.0.0.1/cb"]}', "surrogate"),
        ('{"x": ' + "[" * 2000 + "]" * 2000 + "}", "levels deep"),  # under 5 KiB
    ],
)
def test_a_document_json_cannot_hold_is_refused(body: str, said: str) -> None:
    """Each raised past the fetch (UnicodeEncodeError at the insert, RecursionError)."""
    server = MetadataServer()
    server.start()
    try:
        server.answer = Answer(body=body.encode(), headers={"Content-Type": "application/json"})
        resolver = CountingResolver(["127.0.0.1"])
        with pytest.raises(MetadataDocumentError, match=said):
            run_fetch(server.client_id, LOOPBACK_OK, resolver)
    finally:
        server.stop()


def test_every_network_failure_reads_the_same() -> None:
    """No port oracle: a closed port and a reset connection give one message."""
    resetting = ResettingServer().start()
    closed_port = shared_free_port(["127.0.0.1"])
    try:
        messages = set()
        for port in (closed_port, resetting.port):
            url = f"http://client.test:{port}/client.json"
            with pytest.raises(MetadataDocumentError) as refused:
                run_fetch(url, LOOPBACK_OK, CountingResolver(["127.0.0.1"]))
            messages.add(str(refused.value))
        assert resetting.accepted == 1
        assert len(messages) == 1, messages
        (message,) = messages
        assert "refused" not in message.lower()
        assert "reset" not in message.lower()
    finally:
        resetting.stop()


@pytest.mark.parametrize(
    "host", ["[::127.0.0.1]", "[64:ff9b::7f00:1]", "[2002:7f00:1::1]", "[fec0::1]", "[ff0e::1]"]
)
def test_the_authorization_endpoint_refuses_them_unfetched(
    live_server: LiveServer, host: str
) -> None:
    """Through the endpoint, on the default (production) policy: a page, no connection."""
    query = urlencode({"response_type": "code", "client_id": f"https://{host}:1/client.json"})
    page = httpx.get(f"{live_server.url}/authorize?{query}", timeout=30)
    assert page.status_code == 400
    assert "not a public address" in page.text


def test_a_crowd_of_new_documents_starts_a_few_fetches_at_a_time() -> None:
    """Sixteen slots, started in bursts of four at the pace they turn over (16 per 4 s):
    the fifth fetch asked at once is refused though slots are free, and a start comes back
    within a quarter of a second."""
    slots = FetchSlots(16, 2, 4.0, 4)
    with ExitStack() as held:
        for _ in range(4):
            held.enter_context(slots.process_slot())
        with pytest.raises(FetchesBusy, match="being fetched"):
            held.enter_context(slots.process_slot())
        assert slots.in_flight == 4
        deadline = time.monotonic() + 5
        while True:
            try:
                held.enter_context(slots.process_slot())
                break
            except FetchesBusy:
                assert time.monotonic() < deadline
                time.sleep(0.01)
        assert slots.in_flight == 5
