"""What runs on each host of bench/multihost_drill.py.

data:   its own PostgreSQL (initdb into the drill's temp dir, run as `postgres`), its own
        redis-server (AOF everysec) and its own RabbitMQ node (its own node name, Mnesia
        dir, config and Erlang cookie; epmd is the namespace's own, on its own loopback).
        The drill reads the ledger and the counters over their Unix sockets (a file,
        not the network), never through the machine's services.
proxy:  deploy/nginx.conf, with the api as an upstream group of the two api hosts.
api1/2: `geosvc api`; worker1/2: `geosvc worker` (prefork, 2 processes); beat on data.
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import sys
from pathlib import Path

from drill_stack import geodata_dir
from drill_stack import wait_for as wait_until
from multihost_net import Network

ROOT = Path(__file__).resolve().parent.parent
RABBIT_USER, RABBIT_PASSWORD = "drill", "drill-broker-password"


class DataHost:
    def __init__(self, net: Network, workdir: Path) -> None:
        self.net = net
        self.dir = workdir / "data-host"
        self.dir.mkdir()
        os.chmod(self.dir, 0o755)
        self.ip = net.ip("data")
        self.pg_dir = self.dir / "pg"
        self.pg_dir.mkdir()
        shutil.chown(self.pg_dir, "postgres")  # initdb refuses root
        self.redis_socket = self.dir / "redis.sock"
        bindir = subprocess.run(["pg_config", "--bindir"], check=True, capture_output=True,
                                text=True).stdout.strip()  # fmt: skip
        self.pg_bin = Path(bindir)
        self.rabbit_env = {
            **os.environ,
            "HOME": str(self.dir / "rabbit"),  # the node's and rabbitmqctl's Erlang cookie
            "RABBITMQ_NODENAME": "rabbit@localhost",
            "RABBITMQ_CONF_ENV_FILE": str(self.dir / "rabbit" / "rabbitmq-env.conf"),
            "RABBITMQ_CONFIG_FILE": str(self.dir / "rabbit" / "rabbitmq.conf"),
            "RABBITMQ_ENABLED_PLUGINS_FILE": str(self.dir / "rabbit" / "enabled_plugins"),
            "RABBITMQ_MNESIA_BASE": str(self.dir / "rabbit" / "mnesia"),
            "RABBITMQ_LOG_BASE": str(self.dir / "rabbit" / "log"),
            "RABBITMQ_PID_FILE": str(self.dir / "rabbit" / "pid"),
            "RABBITMQ_NODE_PORT": "5672",
            "RABBITMQ_DIST_PORT": "25672",
        }

    @property
    def database_url(self) -> str:
        return f"postgresql+psycopg://postgres@{self.ip}:5432/geosvc"

    @property
    def redis_url(self) -> str:
        return f"redis://{self.ip}:6379/0"

    @property
    def broker_url(self) -> str:
        return f"amqp://{RABBIT_USER}:{RABBIT_PASSWORD}@{self.ip}:5672/drill"

    def start(self, redis: bool = True) -> None:
        """`redis`: False when the Redis is a cluster on hosts of its own."""
        self._start_rabbitmq()  # the slowest to boot: first, it boots while the rest start
        self._start_postgres()
        if redis:
            self._start_redis()

    def _pg(self, tool: str, *args: str) -> None:
        argv = ["runuser", "-u", "postgres", "--", str(self.pg_bin / tool), *args]
        self.net.run("data", argv)

    def _start_postgres(self) -> None:
        data = self.pg_dir / "data"
        self._pg("initdb", "-D", str(data), "-A", "trust", "-U", "postgres", "--no-sync")
        with (data / "pg_hba.conf").open("a") as hba:
            hba.write("host all all 10.254.0.0/24 trust\n")
        options = f"-p 5432 -k {self.pg_dir} -c listen_addresses=* -c fsync=off"
        self._pg("pg_ctl", "-D", str(data), "-o", options, "-l", str(self.pg_dir / "log"),
                 "-w", "start")  # fmt: skip
        self.query("CREATE DATABASE geosvc", database="postgres")

    def query(self, sql: str, *params: object, database: str = "geosvc") -> list[tuple]:
        import psycopg

        # the Unix socket (a file in the drill's dir): the operator's look, not network traffic
        with psycopg.connect(host=str(self.pg_dir), port=5432, user="postgres",
                             dbname=database, autocommit=True) as conn:  # fmt: skip
            cursor = conn.execute(sql, params)  # type: ignore[arg-type]
            return cursor.fetchall() if cursor.description else []

    def _start_redis(self) -> None:
        argv = ["redis-server", "--port", "6379", "--bind", "0.0.0.0", "--protected-mode", "no",
                "--dir", str(self.dir), "--save", "", "--appendonly", "yes",
                "--appendfsync", "everysec", "--unixsocket", str(self.redis_socket),
                "--unixsocketperm", "700"]  # fmt: skip
        self.net.popen("data", argv, dict(os.environ), self.dir / "redis.log")
        wait_until(lambda: self.redis().ping(), "redis-server", 30)

    def redis(self):  # type: ignore[no-untyped-def]
        import redis

        return redis.Redis(unix_socket_path=str(self.redis_socket), decode_responses=True,
                           socket_timeout=5)  # fmt: skip

    def _start_rabbitmq(self) -> None:
        home = self.dir / "rabbit"
        home.mkdir()
        (home / "rabbitmq-env.conf").write_text("")  # not the machine's /etc/rabbitmq one
        (home / "enabled_plugins").write_text("[].\n")
        (home / "rabbitmq.conf").write_text(
            "listeners.tcp.default = 5672\nloopback_users = none\n"
            "consumer_timeout = 360000\n"  # compose's 6 min
        )
        server = "/usr/lib/rabbitmq/bin/rabbitmq-server"  # not the wrapper: it su's to rabbitmq
        self.net.popen("data", [server], self.rabbit_env, self.dir / "rabbitmq.log")

    def rabbitmqctl(self, *args: str, timeout: float = 90) -> str:
        argv = ["/usr/lib/rabbitmq/bin/rabbitmqctl", "-n", "rabbit@localhost", *args]
        return self.net.run("data", argv, self.rabbit_env, timeout=timeout).stdout

    def await_rabbitmq(self) -> None:
        wait_until(lambda: self.rabbitmqctl("await_startup", "--timeout", "10") is not None,
                   "rabbitmq-server", 120, every=1)  # fmt: skip
        self.rabbitmqctl("add_user", RABBIT_USER, RABBIT_PASSWORD)
        self.rabbitmqctl("add_vhost", "drill")
        self.rabbitmqctl("set_permissions", "-p", "drill", RABBIT_USER, ".*", ".*", ".*")


def nginx_config(workdir: Path, api_ips: list[str]) -> str:
    """deploy/nginx.conf with the api as an upstream group of the api hosts (one failed
    connection marks a host down for 10 s), its certificate and logs in `workdir`."""
    config = (ROOT / "deploy" / "nginx.conf").read_text()
    for included in ("nginx-limits.conf", "nginx-rate-limited.conf"):  # written in place
        text = (ROOT / "deploy" / "proxy" / included).read_text()
        config = config.replace(f"include {included};", text)
    servers = "".join(f"        server {ip}:8000 max_fails=1 fail_timeout=10s;\n" for ip in api_ips)
    upstream = f"    upstream api_hosts {{\n{servers}    }}\n    map $host $api {{"
    replacements = {
        "    map $host $api {": upstream,
        "default http://api:8000;": "default http://api_hosts;",  # a group: no resolver
        "/etc/nginx/tls/fullchain.pem;": f"{workdir}/tls/fullchain.pem;",
        "/etc/nginx/tls/privkey.pem;": f"{workdir}/tls/privkey.pem;",
        "access_log /dev/stdout edge;": f"access_log {workdir}/access.log edge;",
    }
    for old, new in replacements.items():
        assert config.count(old) == 1, old  # the deployed file still has what we rewrite
        config = config.replace(old, new)
    return config


def start_proxy(net: Network, workdir: Path, api_ips: list[str]) -> None:
    directory = workdir / "proxy"
    (directory / "tls").mkdir(parents=True)
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-subj", f"/CN={net.ip('proxy')}", "-keyout", str(directory / "tls" / "privkey.pem"),
         "-out", str(directory / "tls" / "fullchain.pem")],
        check=True, capture_output=True,
    )  # fmt: skip
    conf = directory / "nginx.conf"
    conf.write_text(nginx_config(directory, api_ips))
    main = f"pid {directory}/nginx.pid; error_log {directory}/error.log; daemon off; user root;"
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    net.popen("proxy", [nginx, "-p", str(directory), "-c", str(conf), "-g", main],
              dict(os.environ), directory / "nginx.out")  # fmt: skip


def app_env(net: Network, data: DataHost, workdir: Path, extra: dict[str, str]) -> dict[str, str]:
    """The same settings on every app host (as a ConfigMap and Secret would give them)."""
    data_dir = workdir / "geodata"
    data_dir.mkdir()
    prebuilt = geodata_dir()  # GEOSVC_DATA_DIR's, else the checkout's .geosvc, built if missing
    (data_dir / "indices").symlink_to((prebuilt / "indices").resolve())
    env = {k: v for k, v in os.environ.items() if not k.startswith("GEOSVC_")}
    env.update(
        GEOSVC_DATABASE_URL=data.database_url,
        GEOSVC_REDIS_URL=data.redis_url,
        GEOSVC_BROKER_URL=data.broker_url,
        GEOSVC_DATA_DIR=str(data_dir),
        GEOSVC_BASE_URL=f"https://{net.ip('proxy')}",
        GEOSVC_FORWARDED_ALLOW_IPS=net.ip("proxy"),
        GEOSVC_SECRET_PEPPER=secrets.token_hex(32),
        GEOSVC_OAUTH_SIGNING_KEY=secrets.token_hex(32),
        C_FORCE_ROOT="1",
        PYTHONUNBUFFERED="1",
    )
    env.update(extra)
    return env


def geosvc(*args: str) -> list[str]:
    return [sys.executable, "-m", "app.cli", *args]
