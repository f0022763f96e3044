"""A real local Redis under Sentinel for benches and drills: a primary (AOF everysec), one
replica and three Sentinels (quorum 2), each on a free loopback port in a directory of its
own. `kill9()` the primary and the Sentinels promote the replica (down after 2 s).
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import redis

from app.kit.embedded_redis import die_with_parent, free_port
from tests.support.redis_cluster import ClusterStartFailed, wait_until

MASTER_NAME = "geosvc"
SENTINELS = 3
DOWN_AFTER_MS = 2_000


@dataclass
class Node:
    port: int
    process: subprocess.Popen[bytes]

    def client(self) -> redis.Redis:
        return redis.Redis(port=self.port, socket_connect_timeout=1, decode_responses=True)

    def kill9(self) -> None:
        self.process.kill()
        self.process.wait(timeout=10)


@dataclass
class LocalSentinel:
    primary: Node
    replica: Node
    sentinels: list[Node] = field(default_factory=list)

    @property
    def addresses(self) -> str:
        """What GEOSVC_REDIS_SENTINELS names."""
        return ",".join(f"127.0.0.1:{node.port}" for node in self.sentinels)

    def primary_port(self) -> int | None:
        """The primary's port as the first live Sentinel names it."""
        for node in self.sentinels:
            try:
                with node.client() as client:
                    answer = client.execute_command(
                        "SENTINEL", "GET-MASTER-ADDR-BY-NAME", MASTER_NAME
                    )
                return int(answer[1]) if answer else None
            except redis.RedisError:
                continue
        return None

    def wait_promoted(self, deadline_s: float = 30.0) -> None:
        """Until the Sentinels name the replica and it answers as a primary."""

        def promoted() -> bool:
            with self.replica.client() as client:
                role = client.info("replication")["role"]
            return self.primary_port() == self.replica.port and role == "master"

        wait_until(promoted, "the replica promoted by Sentinel", deadline_s)


def _start(server: str, argv: list[str], folder: Path) -> subprocess.Popen[bytes]:
    folder.mkdir()
    return subprocess.Popen(
        [server, *argv], cwd=folder, stdout=subprocess.DEVNULL, preexec_fn=die_with_parent
    )


@contextmanager
def local_sentinel() -> Iterator[LocalSentinel]:
    server = shutil.which("redis-server")
    if not server:
        raise ClusterStartFailed("redis-server is needed on PATH")
    processes: list[subprocess.Popen[bytes]] = []
    with tempfile.TemporaryDirectory(prefix="geosvc-sentinel-") as workdir:
        try:
            data = ["--bind", "127.0.0.1", "--save", "", "--appendonly", "yes"]
            data += ["--appendfsync", "everysec"]
            primary_port, replica_port = free_port(), free_port()
            primary = Node(
                primary_port,
                _start(server, ["--port", str(primary_port), *data], Path(workdir) / "primary"),
            )
            processes.append(primary.process)
            wait_until(primary.client().ping, "the primary")
            replica = Node(
                replica_port,
                _start(
                    server,
                    ["--port", str(replica_port), *data,
                     "--replicaof", "127.0.0.1", str(primary_port)],
                    Path(workdir) / "replica",
                ),
            )  # fmt: skip
            processes.append(replica.process)
            wait_until(
                lambda: replica.client().info("replication").get("master_link_status") == "up",
                "the replica in sync",
            )
            setup = LocalSentinel(primary, replica)
            for index in range(SENTINELS):
                port = free_port()
                folder = Path(workdir) / f"sentinel{index}"
                conf = [
                    f"port {port}",
                    "bind 127.0.0.1",
                    f"sentinel monitor {MASTER_NAME} 127.0.0.1 {primary_port} 2",
                    f"sentinel down-after-milliseconds {MASTER_NAME} {DOWN_AFTER_MS}",
                    f"sentinel failover-timeout {MASTER_NAME} 10000",
                ]
                folder.mkdir()
                (folder / "sentinel.conf").write_text("\n".join(conf) + "\n")
                process = subprocess.Popen(
                    [server, str(folder / "sentinel.conf"), "--sentinel"],
                    cwd=folder,
                    stdout=subprocess.DEVNULL,
                    preexec_fn=die_with_parent,
                )
                processes.append(process)
                setup.sentinels.append(Node(port, process))
            for node in setup.sentinels:
                wait_until(node.client().ping, f"sentinel {node.port}")
            wait_until(lambda: setup.primary_port() == primary_port, "the Sentinels' primary")
            yield setup
        finally:
            for process in processes:
                if process.poll() is None:
                    process.terminate()
            for process in processes:
                process.wait(timeout=10)
