"""Which addresses a Client ID Metadata Document may be fetched from, and the one
resolution of its host name.

A stranger chooses the URL, so the only addresses dialled are public unicast ones. The
policy is an allow-list: IPv4 that `is_global` and not multicast or reserved, and IPv6
in global unicast 2000::/3 minus the ranges that carry or reach something else (Teredo
and the other IETF protocol assignments in 2001::/23, 6to4 2002::/16, documentation).
Everything outside 2000::/3 is refused, which covers every IPv6 form with an IPv4
address inside (IPv4-mapped and -compatible ::/96, NAT64 64:ff9b::/96 and
64:ff9b:1::/48), site-local fec0::/10, unique-local, link-local, multicast, loopback and
unspecified. An address with a zone (`%eth0`) is refused.

The name is resolved once, by `Resolver` (tests pass their own; the default is the
system's `getaddrinfo` on threads of its own, one per fetch slot and at most a few per
site, `ThreadedResolver`, so a slow DNS server never takes a thread another request or
another site needs). Every answer must pass, and the fetch then connects to exactly these
addresses (app/oauth/metadata_documents.py), never resolving again.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
import threading
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache

from app.kit.config import get_settings

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str, int], Awaitable[Sequence[str]]]

_IPV4_REFUSED = [
    ipaddress.IPv4Network(net)
    for net in (
        "0.0.0.0/8",
        "100.64.0.0/10",  # carrier-grade NAT
        "192.0.0.0/24",
        "192.0.2.0/24",
        "192.88.99.0/24",  # 6to4 relays
        "198.18.0.0/15",
        "198.51.100.0/24",
        "203.0.113.0/24",
        "224.0.0.0/4",  # multicast (is_global says True for some of it)
        "240.0.0.0/4",
    )
]
_IPV6_GLOBAL_UNICAST = ipaddress.IPv6Network("2000::/3")
_IPV6_REFUSED = [
    ipaddress.IPv6Network(net)
    for net in (
        "2001::/23",  # IETF protocol assignments: Teredo 2001::/32, ORCHID, benchmarking
        "2001:db8::/32",  # documentation
        "2002::/16",  # 6to4: an IPv4 address inside
        "3fff::/20",  # documentation
    )
]
_LOOPBACK_V4 = ipaddress.IPv4Network("127.0.0.0/8")
_LOOPBACK_V6 = ipaddress.IPv6Address("::1")
# A host name as DNS spells it (IDNA names arrive as punycode): letters, digits, hyphens.
_HOST_NAME = re.compile(r"^(?!-)[a-z0-9-]{1,63}(?<!-)(\.(?!-)[a-z0-9-]{1,63}(?<!-))*\.?$")
_NUMERIC_LABEL = re.compile(r"^(0x[0-9a-f]*|[0-9]+)$")


class AddressRefused(Exception):
    """The host is not one the service will connect to; the message says why."""


def is_public(ip: IPAddress) -> bool:
    if isinstance(ip, ipaddress.IPv4Address):
        return ip.is_global and not any(ip in net for net in _IPV4_REFUSED)
    if ip.scope_id:
        return False
    if ip not in _IPV6_GLOBAL_UNICAST or any(ip in net for net in _IPV6_REFUSED):
        return False
    return ip.is_global


def allowed(ip: IPAddress, *, allow_loopback: bool) -> bool:
    """Public, or loopback with the development setting GEOSVC_OAUTH_CIMD_ALLOW_LOOPBACK."""
    if is_public(ip):
        return True
    if isinstance(ip, ipaddress.IPv4Address):
        return allow_loopback and ip in _LOOPBACK_V4
    return allow_loopback and ip == _LOOPBACK_V6


def literal(host: str) -> IPAddress | None:
    """`host` as an IP address when it is one (brackets of an IPv6 URL host removed)."""
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None


def check_host_name(host: str) -> None:
    """A plain DNS name: no numeric last label (`127.1`, `0x7f.1` and `2130706433` are
    IPv4 addresses to some resolvers), nothing but letters, digits, hyphens and dots."""
    if not _HOST_NAME.match(host) or _NUMERIC_LABEL.match(host.rstrip(".").rsplit(".", 1)[-1]):
        raise AddressRefused("the client_id host is not a host name or an IP address")


def site_of(host: str) -> str:
    """Whom a host name belongs to, roughly: its last two labels (three under a country's
    second-level domain such as co.uk), so every name of one registered domain (a1.evil.test,
    a2.evil.test ...) shares one key. An address literal keys by its host (IPv4) or /64."""
    ip = literal(host)
    if ip is not None:
        return str(ipaddress.ip_network(f"{ip}/{32 if ip.version == 4 else 64}", strict=False))
    labels = host.lower().rstrip(".").split(".")
    kept = 3 if len(labels) >= 3 and len(labels[-1]) == 2 and len(labels[-2]) <= 3 else 2
    return ".".join(labels[-kept:])


class ResolverBusy(Exception):
    """Every resolver thread, or every one a site may have, is still resolving."""


Lookup = Callable[[str, int], Sequence[str]]


def _getaddrinfo(host: str, port: int) -> list[str]:
    return [str(info[4][0]) for info in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)]


class ThreadedResolver:
    """A blocking `lookup` (getaddrinfo) on threads of its own: at most `threads` at once,
    and `per_site` for the names of one site (`site_of`). getaddrinfo cannot be
    cancelled: a lookup abandoned at the fetch's deadline keeps its thread until the
    operating system gives up (tens of seconds for a name server that never answers), so
    a thread is counted until its lookup really returns, not until its caller stops
    waiting. Over either bound, ResolverBusy at once: a slowly resolving domain holds
    `per_site` threads at most, never every thread of the process."""

    def __init__(self, threads: int, per_site: int, lookup: Lookup = _getaddrinfo) -> None:
        self.threads, self.per_site, self.lookup = threads, per_site, lookup
        self.executor = ThreadPoolExecutor(threads, thread_name_prefix="cimd-resolve")
        self.lock = threading.Lock()
        self.running: Counter[str] = Counter()

    def _take(self, site: str) -> None:
        with self.lock:
            if sum(self.running.values()) >= self.threads or self.running[site] >= self.per_site:
                raise ResolverBusy("every resolver thread is busy")
            self.running[site] += 1

    def _give_back(self, site: str) -> None:
        with self.lock:
            self.running[site] -= 1
            if not self.running[site]:
                del self.running[site]

    def _run(self, host: str, port: int, site: str) -> Sequence[str]:
        try:
            return self.lookup(host, port)
        finally:
            self._give_back(site)

    async def __call__(self, host: str, port: int) -> Sequence[str]:
        site = site_of(host)
        self._take(site)
        try:
            future = self.executor.submit(self._run, host, port, site)
        except BaseException:
            self._give_back(site)
            raise
        # A lookup cancelled before a thread picked it up never runs `_run`'s finally.
        future.add_done_callback(lambda done: self._give_back(site) if done.cancelled() else None)
        return await asyncio.wrap_future(future)


@lru_cache
def _system() -> ThreadedResolver:
    settings = get_settings()
    return ThreadedResolver(
        settings.oauth_cimd_max_fetches, settings.oauth_cimd_max_fetches_per_host
    )


async def system_resolver(host: str, port: int) -> Sequence[str]:
    return await _system()(host, port)


async def resolve_once(
    host: str, port: int, resolver: Resolver, *, allow_loopback: bool
) -> list[IPAddress]:
    """The addresses to connect to, every one of them allowed; AddressRefused otherwise."""
    ip = literal(host)
    if ip is not None:
        if not allowed(ip, allow_loopback=allow_loopback):
            raise AddressRefused("the client_id host is not a public address")
        return [ip]
    check_host_name(host)
    # One message for a name that does not resolve and one that resolves to a private
    # address: two would tell anyone which internal names exist.
    refused = AddressRefused("the client_id host does not resolve to a public address")
    try:
        answers = await resolver(host, port)
        addresses = [ipaddress.ip_address(answer) for answer in answers]
    except (OSError, UnicodeError, ValueError) as exc:
        raise refused from exc
    if not addresses or not all(allowed(a, allow_loopback=allow_loopback) for a in addresses):
        raise refused
    return list(dict.fromkeys(addresses))
