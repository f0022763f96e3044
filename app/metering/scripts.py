"""The Lua scripts behind reserve, commit, release and reconciliation: one call each.

Each script is a file of `lua/` (its KEYS, ARGV and replies described at its top); the
shared parts (`prune.lua`, `buckets.lua`, `claim_alert.lua`) are put before a script's
own file here, once, at import.

`RESERVE` is the whole admission of a call (rate buckets, concurrency, credits) in one
round trip; each refusal says which limit it was.

Reservations live in a per-account sorted set, scored by their expiry in Redis server time
(`TIME`, so api processes with skewed clocks agree). Every script first removes expired
reservations, so an abandoned reservation (its process died between reserve and
commit/release) stops holding credit and its concurrency slot within `reservation_ttl_s`
without any sweeper: the
next script call on that account prunes it, and a reserve is such a call. The set itself
expires with its newest reservation, so nothing is left behind.
"""

from __future__ import annotations

from importlib.resources import files

from app.kit.redis_client import LuaScript

LUA_DIR = files("app.metering") / "lua"


def lua_source(*parts: str) -> str:
    """The files `lua/<part>.lua` joined, without their comment lines: a commit sends
    its script's text with every EVAL, so the comments stay out of it."""
    source = ""
    for part in parts:
        lines = (LUA_DIR / f"{part}.lua").read_text(encoding="utf-8").splitlines(keepends=True)
        source += "\n" + "".join(line for line in lines if not line.lstrip().startswith("--"))
    return source


# RESERVE's first answer.
GRANTED, OVER_CREDITS, NEEDS_COUNTER, KEY_RATE, ACCOUNT_RATE, CONCURRENCY = 1, 0, -1, 2, 3, 4
RESERVE = lua_source("prune", "buckets", "reserve")
RESERVE_BATCH = lua_source("prune", "buckets", "reserve_batch")
RELEASE_MANY = lua_source("prune", "release_many")

# COMMIT's and COMMIT_MANY's alert (`claim_alert.lua`).
ALERT_NONE, ALERT_WARNING, ALERT_QUOTA = 0, 1, 2
COMMIT = lua_source("prune", "claim_alert", "commit")
COMMIT_MANY = lua_source("prune", "claim_alert", "commit_many")
RELEASE = lua_source("prune", "release")
RECONCILE = lua_source("reconcile")
SEED = lua_source("seed")
SNAPSHOT = lua_source("snapshot")


reserve_script = LuaScript(RESERVE)
reserve_batch_script = LuaScript(RESERVE_BATCH)
commit_many_script = LuaScript(COMMIT_MANY)
release_many_script = LuaScript(RELEASE_MANY)
seed_script = LuaScript(SEED)
commit_script = LuaScript(COMMIT)
release_script = LuaScript(RELEASE)
reconcile_script = LuaScript(RECONCILE)
snapshot_script = LuaScript(SNAPSHOT)
