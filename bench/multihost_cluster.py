"""The cluster mode of bench/multihost_drill.py (`--redis cluster`, issue 56 item 3).

Six more hosts, redis1..redis6, one Redis Cluster node each (AOF everysec,
`cluster-node-timeout` 2 s): `redis-cli --cluster create --cluster-replicas 1` makes
three masters with a replica each. The api and worker hosts run on
`GEOSVC_REDIS_CLUSTER=true` with `GEOSVC_REDIS_URL` naming redis1 (the seed, left alone:
docs/OPERATIONS.md says what its loss costs) and the outbox in 3 buckets; the data host
keeps PostgreSQL, RabbitMQ and beat, and runs no Redis. The phases:

  baseline          nothing wrong
  master-kill       the host of the master (not the seed) serving most accounts dies: its
                    processes SIGKILLed and its switch port cut (a dead machine answers
                    nothing, not even a refusal); its replica is promoted by the cluster
  partition         another master cut from both api hosts (the cluster still sees it)
  recovery          healed; nothing is restarted by hand

The cut is a permanent neighbour entry with a MAC nobody has, on both sides (api -> the
master, the master -> each api): their packets are flooded by the bridge and taken by no
one, like a pulled cable between those hosts only (the kernel has no netfilter or netem).
"""

from __future__ import annotations

import time
from typing import Any

from multihost_hosts import wait_until
from multihost_net import Network
from redis.crc import key_slot

REDIS_HOSTS = {f"redis{n}": 40 + n for n in range(1, 7)}
SEED = "redis1"
BUCKETS = 3
NODE_TIMEOUT_MS = 2_000
NOWHERE_MAC = "02:00:00:de:ad:01"
API_HOSTS = ("api1", "api2")


class RedisHosts:
    """The cluster's nodes, one per host; read through redis-cli on the data host."""

    def __init__(self, net: Network, workdir: Any, prefix: str) -> None:
        self.net = net
        self.dir = workdir / "redis"
        self.prefix = prefix  # GEOSVC_REDIS_KEY_PREFIX

    @property
    def url(self) -> str:
        return f"redis://{self.net.ip(SEED)}:6379/0"

    def start(self) -> None:
        for host in REDIS_HOSTS:
            folder = self.dir / host
            folder.mkdir(parents=True)
            argv = ["redis-server", "--port", "6379", "--bind", "0.0.0.0",
                    "--protected-mode", "no", "--cluster-enabled", "yes",
                    "--cluster-config-file", "nodes.conf",
                    "--cluster-node-timeout", str(NODE_TIMEOUT_MS), "--dir", str(folder),
                    "--save", "", "--appendonly", "yes", "--appendfsync", "everysec"]  # fmt: skip
            self.net.popen(host, argv, {}, folder / "redis.log")
        for host in REDIS_HOSTS:
            wait_until(lambda host=host: "PONG" in self.cli("PING", node=host), host, 30)
        nodes = [f"{self.net.ip(host)}:6379" for host in REDIS_HOSTS]
        self.net.run(SEED, ["redis-cli", "--cluster", "create", *nodes,
                            "--cluster-replicas", "1", "--cluster-yes"], timeout=60)  # fmt: skip
        wait_until(self.healthy, "the cluster ok with its replicas", 60)

    def cli(self, *args: str, node: str = SEED) -> str:
        """redis-cli on the data host (following MOVED) against `node`."""
        argv = ["redis-cli", "-c", "-h", self.net.ip(node), "-p", "6379", *args]
        return self.net.run("data", argv, timeout=15).stdout.strip()

    def nodes(self) -> list[dict[str, Any]]:
        """CLUSTER NODES as a live node sees it: host, id, role, master id, failed, slots."""
        by_ip = {self.net.ip(host): host for host in REDIS_HOSTS}
        rows = []
        for line in self.cli("CLUSTER", "NODES").splitlines():
            node_id, address, flags, master, *_rest = line.split()
            slots = []
            for part in line.split()[8:]:
                if not part.startswith("["):
                    first, _, last = part.partition("-")
                    slots.append((int(first), int(last or first)))
            rows.append({"host": by_ip[address.split(":")[0]], "id": node_id,
                         "master": "master" in flags, "of": master,
                         "failed": "fail" in flags and "fail?" not in flags,
                         "slots": slots})  # fmt: skip
        return rows

    def masters(self) -> list[str]:
        return [n["host"] for n in self.nodes() if n["master"] and n["slots"] and not n["failed"]]

    def replica_of(self, master: str) -> str:
        nodes = self.nodes()
        master_id = next(n["id"] for n in nodes if n["host"] == master)
        return next(n["host"] for n in nodes if n["of"] == master_id)

    def host_of(self, user_id: str) -> str:
        """The master serving the account's slot (its hash tag's)."""
        slot = key_slot(f"{self.prefix}usage:{{{user_id}}}:x".encode())
        for node in self.nodes():
            if node["master"] and not node["failed"]:
                if any(first <= slot <= last for first, last in node["slots"]):
                    return str(node["host"])
        raise LookupError(slot)

    def healthy(self) -> bool:
        """Every node sees the cluster ok and every replica has synced with its master."""
        for node in self.nodes():
            if "cluster_state:ok" not in self.cli("CLUSTER", "INFO", node=node["host"]):
                return False
            if not node["master"]:
                links = self.cli("INFO", "replication", node=node["host"])
                if "master_link_status:up" not in links:
                    return False
        return True

    def counter(self, key: str) -> int | None:
        value = self.cli("HGET", key, "used")
        return int(value) if value else None

    def outbox_depth(self) -> int:
        keys = [f"{self.prefix}usage:outbox:{{o{bucket}}}" for bucket in range(BUCKETS)]
        return sum(int(self.cli("LLEN", key) or 0) for key in keys)

    def cut(self, master: str, cut: bool) -> None:
        """Cut (or heal) `master` from the api hosts only, both ways."""
        pairs = [(api, master) for api in API_HOSTS] + [(master, api) for api in API_HOSTS]
        for host, peer in pairs:
            if cut:
                argv = ["ip", "neigh", "replace", self.net.ip(peer), "lladdr", NOWHERE_MAC,
                        "dev", "eth0", "nud", "permanent"]  # fmt: skip
            else:
                argv = ["ip", "neigh", "del", self.net.ip(peer), "dev", "eth0"]
            self.net.run(host, argv)


def env(hosts: RedisHosts) -> dict[str, str]:
    return {
        "GEOSVC_REDIS_CLUSTER": "true",
        "GEOSVC_REDIS_URL": hosts.url,
        "GEOSVC_OUTBOX_BUCKETS": str(BUCKETS),
    }


def run(drill: Any, hosts: RedisHosts, durations: Any) -> None:
    """The phases, once the load runs (`drill`: multihost_drill.Drill)."""
    accounts = drill.accounts()
    holders = {a["name"]: hosts.host_of(a["userId"]) for a in accounts}
    masters = [m for m in hosts.masters() if m != SEED]
    by_load = sorted(masters, key=lambda m: -sum(h == m for h in holders.values()))
    victim, cut = by_load[0], by_load[1]
    replica = hosts.replica_of(victim)
    drill.groups["master-kill"] = [name for name, h in holders.items() if h == victim]
    drill.groups["partition"] = [name for name, h in holders.items() if h == cut]
    drill.groups["recovery"] = drill.groups["partition"]
    drill.notes.append(f"accounts per master: {dict(sorted(holders.items()))}")
    drill.phase("baseline")
    time.sleep(durations.baseline)

    drill.phase("master-kill")
    drill.events["master-kill"] = time.monotonic()
    drill.net.partition(victim, cut=True)
    drill.notes.append(f"{victim} (master): {drill.net.kill_host(victim)} processes SIGKILLed, "
                       f"its port cut; its replica is on {replica}")  # fmt: skip
    wait_until(lambda: replica in hosts.masters(), f"{replica} promoted", 30, every=0.1)
    drill.events["promoted"] = time.monotonic()
    remaining = drill.events["master-kill"] + durations.api_kill - time.monotonic()
    time.sleep(max(0.0, remaining))

    drill.phase("partition")
    hosts.cut(cut, cut=True)
    drill.events["partition"] = time.monotonic()
    drill.notes.append(f"{cut} (master) cut from {', '.join(API_HOSTS)} for "
                       f"{durations.partition:g} s")  # fmt: skip
    time.sleep(durations.partition)
    hosts.cut(cut, cut=False)

    drill.phase("recovery")
    drill.events["cut-healed"] = time.monotonic()
    if cut not in hosts.masters():
        drill.notes.append(f"{cut} lost its slots during the cut")
    time.sleep(durations.recovery)
    drill.marks["end"] = time.monotonic()


def reconcile(drill: Any, env: dict[str, str], argv: list[str]) -> None:
    """`geosvc admin rebuild-counters` twice on the data host, as OPERATIONS.md says."""
    for _run in range(2):
        drill.net.run("data", argv, env, timeout=120)
