"""Hosts for bench/multihost_drill.py: network namespaces on this machine, one per host,
each with one veth into a bridge that lives in a namespace of its own (the switch). No
address is on the machine's own namespace: every packet the drill sends stays inside
the namespaces it creates. Root only (`ip netns`).

Everything is named with one random prefix (`gd<hex>-<host>`) and removed on exit (the
caller's `finally`, and atexit for an exit that skips it): every process of every
namespace is killed (SIGTERM, then SIGKILL), then the namespaces go, and with them the
veths and the bridge.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import secrets
import signal
import subprocess
import time
from pathlib import Path

SUBNET = "10.254.0"


def sh(*argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, check=check, capture_output=True, text=True)


class Network:
    """`hosts`: name -> last octet of its address on the bridge."""

    def __init__(self, hosts: dict[str, int]) -> None:
        self.prefix = f"gd{secrets.token_hex(2)}"
        self.hosts = hosts
        self.switch = f"{self.prefix}-sw"
        self._made: list[str] = []
        atexit.register(self.close)

    def ns(self, host: str) -> str:
        return f"{self.prefix}-{host}"

    def ip(self, host: str) -> str:
        return f"{SUBNET}.{self.hosts[host]}"

    def _add_ns(self, name: str) -> None:
        sh("ip", "netns", "add", name)
        self._made.append(name)
        sh("ip", "-n", name, "link", "set", "lo", "up")

    def create(self) -> None:
        self._add_ns(self.switch)
        sh("ip", "-n", self.switch, "link", "add", "br0", "type", "bridge")
        sh("ip", "-n", self.switch, "link", "set", "br0", "up")
        for host in self.hosts:
            ns = self.ns(host)
            self._add_ns(ns)
            # one veth pair, created straight into the two namespaces (never the machine's)
            sh("ip", "link", "add", "eth0", "netns", ns, "type", "veth",
               "peer", "name", host, "netns", self.switch)  # fmt: skip
            sh("ip", "-n", ns, "addr", "add", f"{self.ip(host)}/24", "dev", "eth0")
            sh("ip", "-n", ns, "link", "set", "eth0", "up")
            sh("ip", "-n", self.switch, "link", "set", host, "master", "br0", "up")

    def popen(
        self, host: str, argv: list[str], env: dict[str, str], log: Path
    ) -> subprocess.Popen[bytes]:
        """`argv` run on `host` (its own session, output to `log`)."""
        with log.open("ab") as out:
            return subprocess.Popen(
                ["ip", "netns", "exec", self.ns(host), *argv],
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def run(self, host: str, argv: list[str], env: dict[str, str] | None = None,
            timeout: float = 120) -> subprocess.CompletedProcess[str]:  # fmt: skip
        done = subprocess.run(
            ["ip", "netns", "exec", self.ns(host), *argv],
            env=env, capture_output=True, text=True, timeout=timeout,
        )  # fmt: skip
        if done.returncode != 0:
            raise RuntimeError(f"{argv[:4]} on {host} failed:\n{done.stdout}{done.stderr}"[-3000:])
        return done

    def pids(self, host: str) -> list[int]:
        done = sh("ip", "netns", "pids", self.ns(host), check=False)
        return [int(pid) for pid in done.stdout.split()]

    def kill_host(self, host: str) -> int:
        """SIGKILL every process of `host`; how many there were."""
        pids = self.pids(host)
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        return len(pids)

    def partition(self, host: str, cut: bool) -> None:
        """Cut (or heal) `host`'s port on the switch: its packets, and those to it, are
        dropped without an answer (no RST, no ICMP), like a pulled cable. No netem or
        netfilter here: the kernel has neither (the worker hosts talk only to the data
        host, so this is the data host partitioned from that worker)."""
        sh("ip", "-n", self.switch, "link", "set", host, "down" if cut else "up")

    def close(self) -> None:
        made, self._made = self._made, []
        if not made:
            return
        for signum, grace in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
            pids = [pid for ns in made for pid in self._ns_pids(ns)]
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signum)
            deadline = time.monotonic() + grace
            while pids and time.monotonic() < deadline:
                pids = [pid for ns in made for pid in self._ns_pids(ns)]
                time.sleep(0.1)
        for ns in reversed(made):
            sh("ip", "netns", "del", ns, check=False)

    @staticmethod
    def _ns_pids(ns: str) -> list[int]:
        done = sh("ip", "netns", "pids", ns, check=False)
        return [int(pid) for pid in done.stdout.split()]
