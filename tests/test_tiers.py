"""tests/support/tiers.py: what makes a test slow is found from what it reaches."""

from __future__ import annotations

import pytest

from tests.mcp.conftest import start_stack
from tests.support import tiers
from tests.support.celery_worker import start_celery_worker
from tests.support.factories import sign_up
from tests.support.live_server import service_env, start_live_server
from tests.support.services import redis_url_for_tests


def test_starting_a_server_is_slow_however_deep() -> None:
    assert tiers._slow_reason(start_live_server) == "launch_live_server starts a process"
    # start_stack -> launch_live_server -> subprocess.Popen
    assert tiers._slow_reason(start_stack) is not None
    assert tiers._slow_reason(start_celery_worker) is not None


def test_plain_helpers_and_fakeredis_are_not() -> None:
    assert tiers._slow_reason(sign_up) is None
    assert tiers._slow_reason(service_env) is None
    assert tiers._slow_reason(redis_url_for_tests) is None


def test_this_test_is_fast_and_every_collected_server_test_is_slow(
    request: pytest.FixtureRequest,
) -> None:
    assert request.node.get_closest_marker("slow") is None
    for item in request.session.items:
        names = getattr(item, "fixturenames", ())
        if {"live_server", "celery_worker", "backend"} & set(names):
            assert item.get_closest_marker("slow"), item.nodeid


def test_every_sqlite_only_path_exists() -> None:
    for prefix in [*tiers.SQLITE_ONLY, *tiers.BOTH_DATABASES]:
        assert (tiers.ROOT / prefix.split("::")[0]).exists(), prefix
