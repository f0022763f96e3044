"""SingleFlight: concurrent loads of one key share one load (the key and plan caches'
stampede guard, issue 20)."""

from __future__ import annotations

import asyncio

import pytest

from app.kit.ttl_cache import SingleFlight


class Loader:
    def __init__(self) -> None:
        self.calls = 0
        self.release = asyncio.Event()

    async def __call__(self) -> str:
        self.calls += 1
        await self.release.wait()
        return f"value {self.calls}"


async def test_concurrent_loads_of_one_key_share_one_load() -> None:
    flight: SingleFlight[str, str] = SingleFlight()
    loader = Loader()
    waiting = [asyncio.create_task(flight.load("k", loader)) for _ in range(50)]
    other = asyncio.create_task(flight.load("other", loader))
    await asyncio.sleep(0)  # let every task reach its await
    loader.release.set()

    assert set(await asyncio.gather(*waiting)) == {"value 1"}
    assert await other == "value 2"
    assert loader.calls == 2
    assert await flight.load("k", loader) == "value 3"  # done loads are not kept


async def test_a_cancelled_caller_leaves_the_load_to_the_others() -> None:
    flight: SingleFlight[str, str] = SingleFlight()
    loader = Loader()
    first = asyncio.create_task(flight.load("k", loader))
    second = asyncio.create_task(flight.load("k", loader))
    await asyncio.sleep(0)
    first.cancel()
    loader.release.set()

    assert await second == "value 1"
    assert first.cancelled()


async def test_every_caller_gets_the_error() -> None:
    flight: SingleFlight[str, str] = SingleFlight()

    async def failing() -> str:
        await asyncio.sleep(0)
        raise LookupError("database down")

    outcomes = await asyncio.gather(
        *(flight.load("k", failing) for _ in range(3)), return_exceptions=True
    )
    assert [type(outcome) for outcome in outcomes] == [LookupError] * 3
    with pytest.raises(LookupError):
        await flight.load("k", failing)
