"""Fair work (issue 20): what a call weighs and which queue runs it."""

from __future__ import annotations

import pytest

from app.geodata.catalogue import validate_arguments
from app.plans import Plan
from app.queue.celery import QUEUES
from app.tool_calls.routing import call_weight, queue_for
from app.worker_start import ALL_QUEUES, default_niceness, runs_idle


def weight(name: str, arguments: dict[str, object]) -> int:
    return call_weight(name, validate_arguments(name, arguments))


class TestWeight:
    def test_lookups_weigh_one(self) -> None:
        assert weight("geocode", {"query": "Paris"}) == 1
        assert weight("get_population", {"postal_code": "94103"}) == 1

    @pytest.mark.parametrize(
        ("width", "height", "expected"),
        [(64, 64, 1), (600, 400, 1), (601, 400, 2), (800, 600, 2), (1280, 1280, 7)],
    )
    def test_a_map_weighs_one_per_default_map_area(
        self, width: int, height: int, expected: int
    ) -> None:
        arguments = {"center": {"lat": 0, "lon": 0}, "zoom": 1, "width": width, "height": height}
        assert weight("static_map", arguments) == expected


class TestQueue:
    def test_paying_light_calls_have_the_tools_queue_to_themselves(self) -> None:
        assert queue_for(Plan.STANDARD, 1) == "tools"
        assert queue_for(Plan.FREE, 1) == "tools.free"

    def test_heavy_calls_of_every_plan_go_to_the_heavy_queue(self) -> None:
        assert queue_for(Plan.STANDARD, 7) == "tools.heavy"
        assert queue_for(Plan.FREE, 2) == "tools.heavy"


class TestWorkers:
    def test_a_default_worker_takes_every_queue(self) -> None:
        assert set(ALL_QUEUES.split(",")) == set(QUEUES)

    @pytest.mark.parametrize(
        ("queues", "nice"),
        [
            ("tools.free,tools.heavy", 10),
            ("tools.free", 10),
            ("tools.free,tools.heavy,billing", 10),
            ("tools", 0),
            ("tools,billing", 0),
            ("billing", 0),
            (ALL_QUEUES, 0),  # one pool for everything: paying calls must not wait
        ],
    )
    def test_only_a_bulk_pool_yields_the_cpu(self, queues: str, nice: int) -> None:
        assert default_niceness(queues) == nice

    @pytest.mark.parametrize(
        ("queues", "idle"),
        [
            ("jobs", True),
            ("tools.free,tools.heavy,billing", False),
            ("jobs,billing", False),  # someone waits on the drain: niced, not idle
            ("tools,jobs", False),
            (ALL_QUEUES, False),
        ],
    )
    def test_only_a_pool_of_jobs_alone_runs_idle(self, queues: str, idle: bool) -> None:
        assert runs_idle(queues) is idle
