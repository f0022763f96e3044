"""The order test files are handed out in under pytest-xdist (`make test`: --dist loadfile
--no-loadscope-reorder): the longest first.

A process takes the next file when it is nearly done with its own. xdist's default order
(most tests first) hands out last the files that have few tests but run a minute each
(a `geosvc dev` per test, the fault drills, the contract runs), and the run then waits on
one process while the others are idle. LONGEST are the files that took about 30 s or more
of one process in a full run (the junit report's times, index build aside), longest
first; every other file keeps its place after them. A file missing here or gone from the
tree changes only how well the processes finish together, never what runs.
"""

from __future__ import annotations

import pytest

LONGEST = (
    "tests/jobs/test_endpoints.py",
    "tests/jobs/test_faults.py",
    "tests/test_devserver.py",
    "tests/drills/test_drills.py",
    "tests/drills/test_pg_failover.py",
    "tests/drills/test_cluster_failover.py",
    "tests/contract/test_openapi.py",
    "tests/oauth/test_document_fetch_limits.py",
    "tests/test_hardening.py",
    "tests/billing/test_stripe_breaker.py",
    "tests/users/test_address_change.py",
    "tests/dashboard/test_account_browser.py",
    "tests/api_keys/test_endpoints.py",
    "tests/mcp/test_tenancy.py",
    "tests/v1/test_limits.py",
    "tests/users/test_mail_flows.py",
    "tests/dashboard/test_browser_keys_and_calls.py",
    "tests/users/test_account_backoff.py",
    "tests/drills/test_redis_broker_restarts.py",
    "tests/metering/test_tasks.py",
    "tests/dashboard/test_browser.py",
    "tests/tiles/test_endpoints.py",
    "tests/mcp/test_map_app_host.py",
    "tests/users/test_log_secrets.py",
    "tests/deployment/test_upgrade.py",
)
_RANK = {path: rank for rank, path in enumerate(LONGEST)}


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # stable: each file's tests, and the files not listed, keep their order
    items.sort(key=lambda item: _RANK.get(item.nodeid.split("::", 1)[0], len(LONGEST)))
