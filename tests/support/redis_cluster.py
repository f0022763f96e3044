"""A real local Redis Cluster for tests and benches: three masters on free loopback ports.

`redis-server --cluster-enabled yes` per node (each in a directory of its own, no
persistence) and `redis-cli --cluster create`, then a wait until every node reports
`cluster_state:ok`. One per test session (`redis_cluster` fixture); each node's process
dies with the test process. With `replicas=1` every master gets a replica, and a
`kill9()`ed master is replaced by its replica through the cluster's own failover
(the failover drill: bench/cluster_failover.py).
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import redis

from app.kit.embedded_redis import die_with_parent

MASTERS = 3
# Redis Cluster's bus listens on the client port + 10000.
BUS_OFFSET = 10_000
START_DEADLINE_S = 30.0


class ClusterStartFailed(RuntimeError):
    pass


def store_for(url: str, *, cluster: bool) -> redis.Redis:
    """A test's own client of the Redis the app uses (a cluster's follows MOVED)."""
    if cluster:
        from redis.cluster import RedisCluster

        return RedisCluster.from_url(url, decode_responses=True)  # type: ignore[return-value]
    return redis.Redis.from_url(url, decode_responses=True)


@dataclass
class ClusterNode:
    port: int
    process: subprocess.Popen[bytes]

    def kill9(self) -> None:
        """A crash: SIGKILL, no shutdown (whatever was not yet replicated is lost)."""
        self.process.kill()
        self.process.wait(timeout=10)

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def client(self) -> redis.Redis:
        return redis.Redis(port=self.port, socket_connect_timeout=1, decode_responses=True)

    def cluster_ok(self) -> bool:
        with self.client() as client:
            return "cluster_state:ok" in str(client.execute_command("CLUSTER", "INFO"))


@dataclass
class LocalCluster:
    nodes: list[ClusterNode] = field(default_factory=list)

    @property
    def url(self) -> str:
        """What GEOSVC_REDIS_URL names: any one node (the first)."""
        return self.nodes[0].url

    def _seen(self) -> ClusterNode:
        """A live node to ask about the cluster (the first unless it was killed)."""
        return next(node for node in self.nodes if node.alive)

    def node_of_slot(self, slot: int) -> ClusterNode:
        """The master serving `slot`, as a live node sees the cluster."""
        with self._seen().client() as client:
            ranges = client.execute_command("CLUSTER", "SLOTS")
        for first, last, (_host, port, *_rest), *_replicas in ranges:
            if first <= slot <= last:
                return next(node for node in self.nodes if node.port == port)
        raise LookupError(slot)

    def node_of_key(self, key: str) -> ClusterNode:
        with self._seen().client() as client:
            return self.node_of_slot(int(client.execute_command("CLUSTER", "KEYSLOT", key)))

    def masters(self) -> list[ClusterNode]:
        """The live masters serving slots, as a live node sees the cluster now."""
        with self._seen().client() as client:
            ranges = client.execute_command("CLUSTER", "SLOTS")
        ports = {int(master[1]) for _first, _last, master, *_replicas in ranges}
        return [node for node in self.nodes if node.port in ports and node.alive]

    def replica_of(self, master: ClusterNode) -> ClusterNode:
        with master.client() as client:
            replicas = client.execute_command("CLUSTER", "REPLICAS", self._node_id(master))
        ports = {int(line.split()[1].split("@")[0].rsplit(":", 1)[1]) for line in replicas}
        found = [node for node in self.nodes if node.port in ports]
        if not found:
            raise LookupError(f"master {master.port} has no replica")
        return found[0]

    def _node_id(self, node: ClusterNode) -> str:
        with node.client() as client:
            return str(client.execute_command("CLUSTER", "MYID"))

    def wait_promoted(self, replica: ClusterNode, deadline_s: float = START_DEADLINE_S) -> None:
        """Until `replica` serves slots as a master and the cluster is ok again."""
        wait_until(lambda: replica in self.masters(), f"node {replica.port} promoted", deadline_s)
        wait_until(
            lambda: all(node.cluster_ok() for node in self.nodes if node.alive),
            "the cluster ok after the failover",
            deadline_s,
        )

    def wait_replicated(self, deadline_s: float = START_DEADLINE_S) -> None:
        """Until every replica has finished its initial sync with its master."""

        def synced() -> bool:
            for node in self.nodes:
                with node.client() as client:
                    info = client.info("replication")
                if info["role"] == "slave" and info.get("master_link_status") != "up":
                    return False
            return True

        wait_until(synced, "the replicas in sync", deadline_s)


def _free_port_pair() -> int:
    """A port whose cluster-bus port (+10000) is free too."""
    for _attempt in range(200):
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = int(sock.getsockname()[1])
        if port + BUS_OFFSET > 65535:
            continue
        with socket.socket() as bus:
            try:
                bus.bind(("127.0.0.1", port + BUS_OFFSET))
            except OSError:
                continue
        return port
    raise ClusterStartFailed("no free port pair for a cluster node")


def wait_until(
    check: Callable[[], object], what: str, deadline_s: float = START_DEADLINE_S
) -> None:
    """Poll `check()` until it is true (a Redis error counts as not yet), with a deadline."""
    deadline = time.monotonic() + deadline_s
    while True:
        try:
            if check():
                return
        except redis.RedisError:
            pass
        if time.monotonic() > deadline:
            raise ClusterStartFailed(f"timed out waiting for {what}")
        time.sleep(0.05)


@contextmanager
def local_cluster(
    masters: int = MASTERS,
    node_timeout_ms: int = 2_000,
    appendfsync: str | None = None,
    replicas: int = 0,
) -> Iterator[LocalCluster]:
    """`node_timeout_ms`: how long a node may not answer before the others mark it failed
    (and, with no replica, the cluster down; with one, its replica takes over).
    `appendfsync`: an AOF fsynced so ("everysec" as production requires; benches), else
    none. `replicas`: replicas per master (`redis-cli --cluster create --cluster-replicas`)."""
    server, cli = shutil.which("redis-server"), shutil.which("redis-cli")
    if not server or not cli:
        raise ClusterStartFailed("redis-server and redis-cli are needed on PATH")
    cluster = LocalCluster()
    persistence = ["--appendonly", "no"]
    if appendfsync:
        persistence = ["--appendonly", "yes", "--appendfsync", appendfsync]
    with tempfile.TemporaryDirectory(prefix="geosvc-cluster-") as workdir:
        try:
            for index in range(masters * (1 + replicas)):
                port = _free_port_pair()
                folder = Path(workdir) / str(index)
                folder.mkdir()
                process = subprocess.Popen(
                    [server, "--port", str(port), "--bind", "127.0.0.1",
                     "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                     "--cluster-node-timeout", str(node_timeout_ms), "--dir", str(folder),
                     "--save", "", *persistence],
                    stdout=subprocess.DEVNULL,
                    preexec_fn=die_with_parent,
                )  # fmt: skip
                cluster.nodes.append(ClusterNode(port, process))
            for node in cluster.nodes:
                wait_until(node.client().ping, f"node {node.port}")
            create = subprocess.run(
                [cli, "--cluster", "create",
                 *(f"127.0.0.1:{node.port}" for node in cluster.nodes),
                 "--cluster-replicas", str(replicas), "--cluster-yes"],
                capture_output=True, text=True, timeout=60,
            )  # fmt: skip
            if create.returncode != 0:
                raise ClusterStartFailed(f"redis-cli --cluster create: {create.stdout[-2000:]}")
            for node in cluster.nodes:
                wait_until(node.cluster_ok, f"node {node.port} to see the cluster ok")
            if replicas:
                cluster.wait_replicated()
            yield cluster
        finally:
            for node in cluster.nodes:
                if node.process.poll() is None:
                    node.process.terminate()
            for node in cluster.nodes:
                node.process.wait(timeout=10)
