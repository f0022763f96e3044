"""The multi-host drill (bench/multihost_drill.py, issue 43 item 3), short version: hosts
as network namespaces on a bridge, an api host and a worker host SIGKILLed, a worker host
partitioned from the data host. Root only (`ip netns`): skipped elsewhere; as root with
REQUIRE_SERVICES=1 a missing binary fails instead.

Opt-in (`make multihost-drill`, which sets GEOSVC_MULTIHOST_DRILL=1): it takes 3-4 minutes
on two cores, most of it starting RabbitMQ and six Python hosts, and one of its runs failed
`test_no_credit_lost` for a cause not yet found (issue 43), so it is kept out of the suite
CI gates on until that is understood."""

from __future__ import annotations

from typing import Any

import pytest

from tests.drills.multihost_run import phase, run_drill

pytestmark = pytest.mark.drill


@pytest.fixture(scope="module")
def drill(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("multihost") / "result.json"
    return run_drill(out, "multihost-drill")


def test_the_proxy_moves_traffic_to_the_surviving_api(drill: dict[str, Any]) -> None:
    row = phase(drill, "api-kill")
    assert row["ok"] > 0
    # a call that failed because api1 died did so within a few seconds of the kill
    assert row["last_failure_s"] is None or row["last_failure_s"] < 5, row
    assert row["first_ok_s"] is not None, row
    assert row["first_ok_s"] < 5, row


def test_calls_a_killed_worker_held_are_answered_or_retryable(drill: dict[str, Any]) -> None:
    row = phase(drill, "worker-kill")
    assert row["ok"] > 0
    assert set(row["in_flight"]) <= {"ok", "retryable"}, row
    assert row["other"] == 0, row["codes"]


def test_no_credit_lost(drill: dict[str, Any]) -> None:
    assert len(drill["ledger"]) == 3
    for account, row in drill["ledger"].items():
        assert row["client_ok"] > 0, account
        assert row["ledger"] >= row["client_ok"], (account, row)
        assert row["counter"] == row["ledger"], (account, row)


@pytest.mark.xfail(
    reason="a call committed on the killed api host whose answer had begun to reach the "
    "client: nginx cannot retry it, the client sees a dropped connection and the call is "
    "charged (bench/RESULTS.md, multi-host drill). A retried one is charged once now "
    "(tests/v1/test_proxy_retry.py)",
    strict=False,
)
def test_no_credit_charged_twice(drill: dict[str, Any]) -> None:
    for account, row in drill["ledger"].items():
        assert row["ledger"] == row["client_ok"], (account, row)


def test_the_partitioned_worker_recovers_by_itself(drill: dict[str, Any]) -> None:
    assert phase(drill, "recovery")["worker2_back_s"] is not None, drill["notes"]
    assert not any("exited" in note for note in drill["notes"]), drill["notes"]
