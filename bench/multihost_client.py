"""The clients of bench/multihost_drill.py, run on the drill's client host (inside its
namespace, so their traffic to the proxy stays on the drill's bridge).

    python bench/multihost_client.py setup PROXY_URL OUT.json    three accounts and keys
                                                                 (more if OUT exists)
    python bench/multihost_client.py load CONFIG.json OUT.jsonl  calls until STOP exists
    python bench/multihost_client.py probe URL SECONDS           until URL answers 200

One JSON line per call: account, start and end (time.monotonic, the same clock in every
process of the machine), HTTP status, error code and whether the answer said retryable.
"""

from __future__ import annotations

import asyncio
import json
import random
import secrets
import sys
import time
from pathlib import Path

import httpx

CALLS = [
    ("/v1/geocode", {"query": "Austin, TX", "limit": "1"}),
    ("/v1/reverse-geocode", {"lat": "30.27", "lon": "-97.74"}),
    ("/v1/population", {"postal_code": "94103"}),
]
PLANS = ["standard", "standard", "free"]


def setup(proxy: str, out: Path) -> None:
    accounts = json.loads(out.read_text()) if out.exists() else []
    for number, plan in enumerate(PLANS, start=len(accounts) + 1):
        with httpx.Client(base_url=proxy, verify=False, timeout=60) as http:
            email = f"drill-{number}-{secrets.token_hex(3)}@example.com"
            me = http.post("/auth/signup", json={"email": email, "password": "drill-password"})
            me.raise_for_status()
            if plan == "standard":
                checkout = http.post("/subscription").json()["checkoutUrl"]
                paid = http.post(checkout, headers={"Origin": proxy})
                assert paid.status_code < 400, paid.text  # a 303 to the dashboard
            answer = http.post("/api-keys", json={"name": "drill"})
            answer.raise_for_status()
            accounts.append(
                {
                    "name": f"acct{number}-{plan}",
                    "userId": str(me.json()["userId"]),
                    "key": answer.json()["plaintext"],
                }  # fmt: skip
            )
    out.write_text(json.dumps(accounts))


async def client(proxy: str, account: dict[str, str], seed: int, think_s: float,
                 stop: Path, out: list[str]) -> None:  # fmt: skip
    rng = random.Random(seed)
    headers = {"Authorization": f"Bearer {account['key']}"}
    async with httpx.AsyncClient(base_url=proxy, verify=False, headers=headers,
                                 timeout=35) as http:  # fmt: skip
        while not stop.exists():
            path, params = rng.choice(CALLS)
            started = time.monotonic()
            record: dict[str, object] = {"account": account["name"], "path": path}
            try:
                answer = await http.get(path, params=params)
                record["status"] = answer.status_code
                if answer.status_code != 200:
                    try:
                        error = answer.json().get("error", {})
                        record["code"] = error.get("code", "?")
                        record["retryable"] = bool(error.get("retryable"))
                    except ValueError:  # nginx's own HTML page (502, 504)
                        record["code"] = f"proxy-{answer.status_code}"
                        record["retryable"] = False
            except httpx.HTTPError as exc:
                record["status"] = 0
                record["code"] = f"client:{type(exc).__name__}"
                record["retryable"] = False
            record["start"], record["end"] = started, time.monotonic()
            out.append(json.dumps(record))
            await asyncio.sleep(think_s * rng.uniform(0.5, 1.5))


async def load(config_path: Path, out_path: Path) -> None:
    config = json.loads(config_path.read_text())
    stop = Path(config["stop"])
    lines: list[str] = []
    tasks = [
        client(
            config["proxy"],
            account,
            seed=index * 100 + n,
            think_s=config["think_s"],
            stop=stop,
            out=lines,
        )  # fmt: skip
        for index, account in enumerate(config["accounts"])
        for n in range(config["clients_per_account"])
    ]
    with out_path.open("a") as out:
        writer = asyncio.create_task(flush(lines, out))
        await asyncio.gather(*tasks)  # every call in flight at the stop is answered first
        writer.cancel()
        write(lines, out)


def write(lines: list[str], out: object) -> None:
    batch, lines[:] = lines[:], []
    out.write("".join(line + "\n" for line in batch))  # type: ignore[attr-defined]
    out.flush()  # type: ignore[attr-defined]


async def flush(lines: list[str], out: object) -> None:
    while True:
        write(lines, out)
        await asyncio.sleep(0.5)


def probe(url: str, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if httpx.get(url, verify=False, timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    raise SystemExit(f"{url}: no 200 within {seconds:g} s")


if __name__ == "__main__":
    mode, *rest = sys.argv[1:]
    if mode == "setup":
        setup(rest[0], Path(rest[1]))
    elif mode == "load":
        asyncio.run(load(Path(rest[0]), Path(rest[1])))
    else:
        probe(rest[0], float(rest[1]))
