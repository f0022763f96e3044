"""A multi-host drill over a real network (issue 43, item 3). Root only.

Hosts are network namespaces on this machine, each with a veth into one bridge (in a
namespace of its own): a client host, a proxy host running deploy/nginx.conf (the api as
an upstream group of the two api hosts), api1 and api2 (`geosvc api`), worker1 and
worker2 (`geosvc worker`), and a data host with its own PostgreSQL, Redis, RabbitMQ and
beat (bench/multihost_hosts.py). No address is on the machine's namespace: all traffic
stays inside the namespaces the drill creates, and they go (with every process in them)
when it ends, failed or not.

Three accounts (two standard, one free) call /v1 through the proxy, several clients each,
mixed tools, for the whole drill. The phases:

  baseline         nothing wrong
  api-kill         SIGKILL every process of api1 (it stays dead)
  worker-kill      SIGKILL every process of worker1
  worker-replaced  worker1 started again (the platform replacing a host)
  partition        worker2 cut from the data host for --partition seconds (no RST, no ICMP)
  recovery         healed; nothing is restarted by hand

With `--redis cluster` the Redis is a 3-master cluster on hosts of its own, and the
phases are a master's host killed and a master cut from the api hosts instead
(bench/multihost_cluster.py); reconciliation runs after the drain.

Then the clients stop and the usage outbox drains; the ledger must hold exactly the
successes each account's clients counted. Per phase: calls, OK, retryable and other
errors, p50/p99 of every call, and the phase's own measure (failover, recovery).

    sudo .venv/bin/python bench/multihost_drill.py [--short] [--redis cluster] [--json OUT]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import multihost_cluster  # noqa: E402
from drill_stack import UNLIMITED_TENANTS  # noqa: E402
from multihost_hosts import (  # noqa: E402
    ROOT,
    DataHost,
    app_env,
    geosvc,
    start_proxy,
    wait_until,
)
from multihost_net import Network  # noqa: E402
from multihost_report import phase_table, print_report  # noqa: E402

HOSTS = {"client": 2, "proxy": 10, "api1": 11, "api2": 12, "worker1": 21, "worker2": 22,
         "data": 30}  # fmt: skip
BINARIES = ["nginx", "redis-server", "pg_config", "openssl", "ip"]
RABBITMQ_SERVER = "/usr/lib/rabbitmq/bin/rabbitmq-server"
CLIENT = str(Path(__file__).resolve().parent / "multihost_client.py")
KEY_PREFIX = "drill:"


def missing() -> str | None:
    """Why this machine cannot run the drill (None: it can)."""
    if os.geteuid() != 0:
        return "the multi-host drill needs root (ip netns)"
    for name in BINARIES:
        if shutil.which(name) is None and not Path(f"/usr/sbin/{name}").exists():
            return f"{name} is not installed"
    if not Path(RABBITMQ_SERVER).exists():
        return "rabbitmq-server is not installed"
    return None


@dataclass
class Durations:
    baseline: float
    api_kill: float
    worker_kill: float
    partition: float
    recovery: float

    @classmethod
    def of(cls, short: bool, partition: float | None, cluster: bool = False) -> Durations:
        if cluster:  # api_kill: the master-kill phase
            if short:
                return cls(5, 20, 0, partition or 15, 15)
            return cls(20, 30, 0, partition or 20, 40)
        if short:
            return cls(5, 10, 10, partition or 20, 15)
        return cls(20, 30, 30, partition or 20, 40)


@dataclass
class Drill:
    net: Network
    workdir: Path
    data: DataHost
    env: dict[str, str]
    marks: dict[str, float] = field(default_factory=dict)  # phase -> start
    events: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    groups: dict[str, list[str]] = field(default_factory=dict)  # phase -> accounts hit
    cluster: multihost_cluster.RedisHosts | None = None

    def accounts(self) -> list[dict[str, str]]:
        return list(json.loads((self.workdir / "accounts.json").read_text()))

    def counter(self, key: str) -> int | None:
        if self.cluster is not None:
            return self.cluster.counter(key)
        used = self.data.redis().hget(key, "used")
        return None if used is None else int(used)

    def outbox_depth(self) -> int:
        if self.cluster is not None:
            return self.cluster.outbox_depth()
        keys = [f"{KEY_PREFIX}usage:outbox", f"{KEY_PREFIX}usage:outbox:{{o0}}"]  # and legacy
        return sum(int(self.data.redis().llen(key)) for key in keys)

    def start_app(self, host: str, argv: list[str]) -> None:
        self.net.popen(host, argv, self.env, self.workdir / f"{host}.log")

    def start_worker(self, host: str) -> None:
        number = host.removeprefix("worker")
        self.start_app(host, geosvc("worker", "--concurrency", "2", "--pool", "prefork",
                                    "--hostname", f"w{number}@drill"))  # fmt: skip

    def log(self, host: str) -> str:
        return (self.workdir / f"{host}.log").read_text(errors="replace")

    def client(self, *args: str, timeout: float = 120) -> None:
        self.net.run("client", [sys.executable, CLIENT, *args], timeout=timeout)

    def phase(self, name: str) -> None:
        self.marks[name] = time.monotonic()
        print(f"  {time.strftime('%H:%M:%S')} phase {name}", flush=True)


def start(net: Network, workdir: Path, cluster: bool) -> Drill:
    net.create()
    data = DataHost(net, workdir)
    data.start(redis=not cluster)  # PostgreSQL and Redis; RabbitMQ boots meanwhile
    extra = {**UNLIMITED_TENANTS, "GEOSVC_FREE_QUOTA": "1000000",
             "GEOSVC_REDIS_KEY_PREFIX": KEY_PREFIX}  # fmt: skip
    redis_hosts = None
    if cluster:
        redis_hosts = multihost_cluster.RedisHosts(net, workdir, KEY_PREFIX)
        redis_hosts.start()
        extra.update(multihost_cluster.env(redis_hosts))
        print(f"  {time.strftime('%H:%M:%S')} redis cluster up", flush=True)
    drill = Drill(net, workdir, data, app_env(net, data, workdir, extra), cluster=redis_hosts)
    net.run("api1", geosvc("migrate"), drill.env)
    for host in ("api1", "api2"):
        drill.start_app(host, geosvc("api", "--host", "0.0.0.0", "--port", "8000",
                                     "--no-migrate"))  # fmt: skip
    start_proxy(net, workdir, [net.ip("api1"), net.ip("api2")])
    data.await_rabbitmq()
    print(f"  {time.strftime('%H:%M:%S')} data host up", flush=True)
    for host in ("worker1", "worker2"):
        drill.start_worker(host)
    drill.start_app("data", geosvc("beat"))
    for host in ("api1", "api2"):
        drill.client("probe", f"http://{net.ip(host)}:8000/healthz", "120", timeout=130)
    drill.client("probe", f"https://{net.ip('proxy')}/healthz", "30")
    print(f"  {time.strftime('%H:%M:%S')} api hosts and proxy up", flush=True)
    for host in ("worker1", "worker2"):
        wait_until(lambda host=host: " ready" in drill.log(host), f"{host}", 120)
    return drill


def run(drill: Drill, durations: Durations, clients_per_account: int, think_s: float) -> Path:
    net, workdir = drill.net, drill.workdir
    proxy = f"https://{net.ip('proxy')}"
    drill.client("setup", proxy, str(workdir / "accounts.json"))
    if drill.cluster is not None:
        spread(drill, proxy)
    config = {
        "proxy": proxy,
        "accounts": json.loads((workdir / "accounts.json").read_text()),
        "clients_per_account": clients_per_account,
        "think_s": think_s,
        "stop": str(workdir / "STOP"),
    }
    (workdir / "load.json").write_text(json.dumps(config))
    calls = workdir / "calls.jsonl"
    load = net.popen("client", [sys.executable, CLIENT, "load", str(workdir / "load.json"),
                                str(calls)], dict(os.environ), workdir / "load.log")  # fmt: skip
    if drill.cluster is not None:
        multihost_cluster.run(drill, drill.cluster, durations)
        (workdir / "STOP").touch()
        load.wait(timeout=60)
        return calls
    drill.phase("baseline")
    time.sleep(durations.baseline)

    drill.phase("api-kill")
    drill.events["api-kill"] = time.monotonic()
    drill.notes.append(f"api1: {net.kill_host('api1')} processes SIGKILLed")
    time.sleep(durations.api_kill)

    drill.phase("worker-kill")
    drill.events["worker-kill"] = time.monotonic()
    drill.notes.append(f"worker1: {net.kill_host('worker1')} processes SIGKILLed")
    time.sleep(durations.worker_kill)

    drill.phase("worker-replaced")
    drill.start_worker("worker1")
    wait_until(lambda: drill.log("worker1").count(" ready") >= 2, "worker1 again", 90)

    drill.phase("partition")
    seen = len(drill.log("worker2"))
    net.partition("worker2", cut=True)
    drill.events["partition"] = time.monotonic()
    time.sleep(durations.partition)
    net.partition("worker2", cut=False)

    drill.phase("recovery")
    drill.events["healed"] = time.monotonic()
    healed_wall = time.time()
    ends = drill.events["healed"] + durations.recovery
    while time.monotonic() < ends:
        if "recovered" not in drill.events and ran_task_since(drill.log("worker2"), healed_wall):
            drill.events["recovered"] = time.monotonic()
        time.sleep(0.25)
    after = drill.log("worker2")[seen:]
    if "the consumer loop has not run for" in after:  # app/queue/liveness.py's exit 70
        drill.notes.append("worker2 exited after the partition: its watchdog saw a stall")
    if "Unrecoverable error" in after:
        reason = after.split("Unrecoverable error: ", 1)[1][:90]
        drill.notes.append(f"worker2 exited after the partition: {reason}")
    drill.notes.append(f"worker2 processes at the end: {len(net.pids('worker2'))}")
    drill.marks["end"] = time.monotonic()
    (workdir / "STOP").touch()
    load.wait(timeout=60)
    return calls


def ran_task_since(log: str, since_wall: float) -> bool:
    """Whether `log` (a worker's JSON lines) has a tool task that started after `since_wall`."""
    from datetime import datetime

    for line in log.splitlines():
        if '"event": "task_done"' not in line or '"tools.run"' not in line:
            continue
        with contextlib.suppress(ValueError, KeyError):
            entry = json.loads(line)
            done = datetime.fromisoformat(entry["ts"]).timestamp()
            if entry["outcome"] == "success" and done - entry["ms"] / 1000 > since_wall:
                return True
    return False


def spread(drill: Drill, proxy: str) -> None:
    """More accounts (3 at a time) until every master serves one; then the load runs on
    at most two accounts per master (a steady load, whatever the hashing gave)."""
    assert drill.cluster is not None
    path = drill.workdir / "accounts.json"
    for _more in range(8):
        by_master: dict[str, list[dict[str, str]]] = {m: [] for m in drill.cluster.masters()}
        for account in drill.accounts():
            by_master.setdefault(drill.cluster.host_of(account["userId"]), []).append(account)
        if all(by_master.values()):
            break
        drill.client("setup", proxy, str(path))
    chosen = [account for held in by_master.values() for account in held[:2]]
    path.write_text(json.dumps(sorted(chosen, key=lambda a: int(a["name"][4:].split("-")[0]))))


def drain(drill: Drill, successes: dict[str, int], deadline_s: float) -> dict[str, dict]:
    """Wait (bounded) until the outbox is empty and the ledger stops moving; per account:
    ledger rows and the Redis counter (on a cluster also after reconciliation)."""
    from app.kit.clock import period_of, utcnow

    accounts = drill.accounts()
    deadline = time.monotonic() + deadline_s
    ledger: dict[str, int] = {}
    while time.monotonic() < deadline:
        rows = drill.data.query("SELECT user_id, count(*) FROM usage_events GROUP BY user_id")
        ledger = {str(user): int(count) for user, count in rows}
        settled = all(ledger.get(a["userId"], 0) >= successes.get(a["name"], 0)
                      for a in accounts)  # fmt: skip
        with contextlib.suppress(Exception):  # a node not yet reachable: not settled
            if settled and drill.outbox_depth() == 0:
                break
        time.sleep(0.5)
    time.sleep(2)  # a late double charge would land here
    rows = drill.data.query("SELECT user_id, count(*) FROM usage_events GROUP BY user_id")
    ledger = {str(user): int(count) for user, count in rows}
    calls = drill.data.query("SELECT call_id, user_id FROM usage_events ORDER BY call_id")
    (drill.workdir / "ledger.txt").write_text("".join(f"{c} {u}\n" for c, u in calls))
    period = period_of(utcnow())

    def counter(user_id: str) -> int:
        return drill.counter(f"{KEY_PREFIX}usage:{{{user_id}}}:{period}") or 0

    result = {}
    for account in accounts:
        result[account["name"]] = {
            "client_ok": successes.get(account["name"], 0),
            "ledger": ledger.get(account["userId"], 0),
            "counter": counter(account["userId"]),
        }
    if drill.cluster is not None:
        multihost_cluster.reconcile(drill, drill.env, geosvc("admin", "rebuild-counters"))
        for account in accounts:
            result[account["name"]]["reconciled"] = counter(account["userId"])
    return result


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--short", action="store_true", help="the test-sized version")
    parser.add_argument("--partition", type=float, default=None, help="seconds (20)")
    parser.add_argument("--clients", type=int, default=3, help="clients per account")
    parser.add_argument("--think", type=float, default=0.15, help="seconds between calls")
    parser.add_argument("--json", type=Path, default=None, help="write the results here")
    parser.add_argument("--redis", choices=["single", "cluster"], default="single",
                        help="one Redis on the data host, or a 3-master cluster")  # fmt: skip
    args = parser.parse_args(argv)
    if reason := missing():
        raise SystemExit(reason)
    os.chdir(ROOT)
    # SIGTERM (a timeout, a CI cancel) unwinds through the finally below like Ctrl-C
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    started = time.monotonic()
    workdir = Path(tempfile.mkdtemp(prefix="geosvc-multihost-"))
    os.chmod(workdir, 0o755)  # the postgres user reaches its own dir under it
    cluster = args.redis == "cluster"
    net = Network({**HOSTS, **multihost_cluster.REDIS_HOSTS} if cluster else HOSTS)
    try:
        drill = start(net, workdir, cluster)
        print(f"hosts up in {time.monotonic() - started:.0f} s ({net.prefix}-*)", flush=True)
        durations = Durations.of(args.short, args.partition, cluster)
        calls = run(drill, durations, args.clients, args.think)
        records = [json.loads(line) for line in calls.read_text().splitlines() if line]
        table = phase_table(records, drill.marks, drill.events, drill.groups)
        successes: dict[str, int] = {}
        for record in records:
            if record["status"] == 200:
                successes[record["account"]] = successes.get(record["account"], 0) + 1
        ledger = drain(drill, successes, deadline_s=60)
        result = {"redis": args.redis, "phases": table, "ledger": ledger, "notes": drill.notes,
                  "events": {k: round(v - drill.marks["baseline"], 2)
                             for k, v in drill.events.items()},
                  "seconds": round(time.monotonic() - started)}  # fmt: skip
        print_report(result)
        if args.json:
            args.json.write_text(json.dumps(result, indent=2))
        return result
    finally:
        net.close()
        keep = os.environ.get("GEOSVC_DRILL_LOGS")
        if keep:
            with contextlib.suppress(OSError):
                skip = shutil.ignore_patterns("pg", "mnesia", "geodata")
                shutil.copytree(workdir, Path(keep) / workdir.name, ignore=skip)
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
