"""The official MCP conformance suite against our server: every scenario that applies to a
server of tools passes (issue 22, item 7).

Both pinned suites (tests/support/conformance_suite.py) run every server scenario they
have, through a proxy that adds the API key. Each scenario is either one that applies,
where no check may fail (but those listed, which call a diagnostic tool of the suite's
reference server), or one that does not apply, with the reason. A scenario the suite
gains in a new version is in neither list, and the test says so: decide, then add it.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from app.geodata.catalogue import TOOL_SPECS
from tests.mcp.conftest import Account, Stack
from tests.support import conformance_suite
from tests.support.conformance_suite import Scenario
from tests.support.header_proxy import HeaderProxy
from tests.support.services import REQUIRE_SERVICES

pytestmark = [pytest.mark.conformance, pytest.mark.timeout(60, func_only=True)]

SUITE_TOOL = "calls a diagnostic tool of the suite's reference server, which we do not ship"
TASK_FIXTURE = (
    "calls a fixture tool of the suite (greet, slow_compute, failing_job, confirm_delete), "
    "or needs the task it makes; tests/mcp/test_tasks.py checks ours"
)

# scenario -> its checks that cannot run against a server without the suite's own tools
APPLIES: dict[str, dict[str, str]] = {
    "server-initialize": {},
    "ping": {},
    "tools-list": {},
    "dns-rebinding-protection": {},
    "http-header-validation": {},  # 2026-07-28: Mcp-Method / Mcp-Name routing headers
    "server-stateless": {  # 2026-07-28: server/discover, the per-request _meta envelope
        "sep-2575-server-rejects-undeclared-capability": SUITE_TOOL,
        "sep-2575-missing-capability-http-400": SUITE_TOOL,
        "sep-2575-http-server-no-independent-requests-on-stream": SUITE_TOOL,
        "sep-2575-server-no-log-without-loglevel": SUITE_TOOL,
    },
    "caching": {  # 2026-07-28: ttlMs and cacheScope on tools/list
        "sep-2549-prompts-list-caching-hints": "we serve no prompts",
        "sep-2549-resources-list-caching-hints": "we serve no resources",
        "sep-2549-resources-templates-list-caching-hints": "we serve no resources",
    },
    "input-required-result-unsupported-methods": {},
    "input-required-result-validate-input": {},
    # The tasks extension (SEP-2663), which we declare: its checks that need no fixture
    # tool pass (the extension in server/discover and not `capabilities.tasks`; tasks/*
    # refused -32021 without it; tasks/result and tasks/list -32601; an unknown task
    # -32602). The others call a fixture tool of the suite's server.
    "tasks-lifecycle": dict.fromkeys(
        [
            "tasks-sync-tool-call",
            "sep-2663-result-type-task-on-create",
            "sep-2663-tasks-get-status-working",
            "sep-2663-tasks-get-status-completed",
            "sep-2663-tool-error-uses-completed-status",
            "sep-2663-tasks-get-status-failed",
            "sep-2663-cancel-ack-empty-result",
            "tasks-cancel-terminal-idempotent-ack",
        ],
        TASK_FIXTURE,
    ),
    "tasks-capability-negotiation": dict.fromkeys(
        ["sep-2663-server-rejects-undeclared-client", "tasks-per-request-meta-opt-in"],
        TASK_FIXTURE,
    ),
    "tasks-wire-fields": dict.fromkeys(
        [
            "tasks-wire-field-renames",
            "tasks-no-early-ttl-expiry",
            "tasks-no-related-task-meta-on-inlined-result",
        ],
        TASK_FIXTURE,
    ),
    "tasks-request-state-removal": {"tasks-request-state-removal-setup": TASK_FIXTURE},
    "tasks-mrtr-input": dict.fromkeys(
        [
            "sep-2663-tasks-get-status-input-required",
            "tasks-mrtr-tasks-update-resumes",
            "tasks-mrtr-partial-fulfillment",
        ],
        TASK_FIXTURE,
    ),
    "tasks-request-headers": dict.fromkeys(
        [
            "tasks-headers-tolerate-mcp-method-on-tools-call",
            "sep-2663-routing-headers-accepted-on-tasks-get",
            "sep-2663-server-rejects-mismatched-mcp-name-on-tasks-get",
        ],
        TASK_FIXTURE,
    ),
    "tasks-dispatch-and-envelope": dict.fromkeys(
        [
            "tasks-server-directed-creation-no-hint",
            "sep-2663-legacy-task-param-ignored",
            "tasks-immediate-result-shortcut",
            "tasks-result-type-complete-on-non-task-responses",
            "sep-2663-durable-create-strong-consistency",
        ],
        TASK_FIXTURE,
    ),
    "tasks-required-task-error": {
        "sep-2663-server-returns-missing-capability-when-required": (
            "a fixture tool with taskSupport required; ours are optional (the unknown tool "
            "is -32602)"
        )
    },
    "tasks-mrtr-composition": {"sep-2663-mrtr-synchronous-before-task-creation": TASK_FIXTURE},
}

FIXTURE_TOOLS = (
    "calls a tool of the suite's reference server (test_simple_text, test_image_content, "
    "...) that our catalogue does not have; it answers JSON-RPC -32602"
)
NO_PROMPTS_OR_RESOURCES = "we declare neither prompts nor resources: -32601 is the answer"
NOT_STATEFUL = "sessions and server-sent streams: ours is stateless with JSON responses"
NO_SERVER_REQUESTS = (
    "needs requests from server to client (sampling, elicitation, roots), which a stateless "
    "JSON-response server cannot send, and a fixture tool of the suite"
)
EXTENSION = "an optional extension we do not declare (skills)"

DOES_NOT_APPLY: dict[str, str] = {
    "logging-set-level": "we declare no logging capability (-32601): no stream to log on",
    "tasks-status-notifications": (
        "no check runs without the suite's fixture tools (ours send notifications/tasks on "
        "subscriptions/listen: tests/mcp/test_tasks.py)"
    ),
    "completion-complete": "completions are for prompt and resource-template arguments",
    **dict.fromkeys(
        [
            "tools-call-simple-text",
            "tools-call-image",
            "tools-call-audio",
            "tools-call-embedded-resource",
            "tools-call-mixed-content",
            "tools-call-error",
            "json-schema-2020-12",
        ],
        FIXTURE_TOOLS,
    ),
    "tools-call-with-logging": "a fixture tool sending log notifications; no logging here",
    "tools-call-with-progress": "a fixture tool streaming progress; ours answer in one JSON",
    **dict.fromkeys(
        [
            "tools-call-sampling",
            "tools-call-elicitation",
            "elicitation-sep1034-defaults",
            "elicitation-sep1330-enums",
        ],
        NO_SERVER_REQUESTS,
    ),
    **dict.fromkeys(
        [
            "resources-list",
            "resources-read-text",
            "resources-read-binary",
            "resources-templates-read",
            "resources-subscribe",
            "resources-unsubscribe",
            "sep-2164-resource-not-found",
            "prompts-list",
            "prompts-get-simple",
            "prompts-get-with-args",
            "prompts-get-embedded-resource",
            "prompts-get-with-image",
        ],
        NO_PROMPTS_OR_RESOURCES,
    ),
    **dict.fromkeys(
        ["server-sse-polling", "server-sse-multiple-streams", "server-session-lifecycle"],
        NOT_STATEFUL,
    ),
    "http-custom-header-server-validation": (
        "needs a tool that mirrors an argument into a header (x-mcp-header); ours declare none"
    ),
    **{
        f"input-required-result-{name}": NO_SERVER_REQUESTS
        for name in (
            "basic-elicitation",
            "basic-sampling",
            "basic-list-roots",
            "request-state",
            "multiple-input-requests",
            "multi-round",
            "missing-input-response",
            "non-tool-request",
            "result-type",
            "tampered-state",
            "capability-check",
            "ignore-extra-params",
        )
    },
    **{
        name: EXTENSION
        for name in (
            "sep-2640-skills-directory",
            "sep-2640-skills-enumeration",
            "sep-2640-skills-manifest",
        )
    },
}


@pytest.fixture(scope="session")
def suites() -> None:
    try:
        conformance_suite.install()
        conformance_suite.node()
    except conformance_suite.NodeUnavailable as exc:
        if REQUIRE_SERVICES:
            pytest.fail(f"{exc} (REQUIRE_SERVICES=1)")
        pytest.skip(str(exc))


@pytest.fixture
def keyed_mcp_url(stack: Stack, account: Account) -> Iterator[str]:
    """The server's /mcp behind a proxy that adds the account's key to every request."""
    with HeaderProxy(stack.server.url, {"Authorization": f"Bearer {account.api_key}"}) as proxy:
        yield f"{proxy.url}/mcp"


def unexpected_failures(scenarios: dict[str, Scenario]) -> list[str]:
    failures = []
    for name, scenario in scenarios.items():
        if name in DOES_NOT_APPLY:
            continue
        if name not in APPLIES:
            failures.append(f"{name}: a new scenario; put it in APPLIES or DOES_NOT_APPLY")
            continue
        if not scenario.passed():
            failures.append(f"{name}: no check passed")
        failures += [
            f"{name} / {check.id}: {check.message}"
            for check in scenario.failed()
            if check.id not in APPLIES[name]
        ]
    return failures


@pytest.mark.parametrize("alias", list(conformance_suite.SUITES))
def test_every_scenario_that_applies_passes(suites: None, keyed_mcp_url: str, alias: str) -> None:
    scenarios = conformance_suite.run(alias, keyed_mcp_url)

    assert unexpected_failures(scenarios) == [], conformance_suite.summary(scenarios)
    assert {"server-initialize", "ping", "tools-list", "dns-rebinding-protection"} <= set(scenarios)
    # Item 7's other parts, as the suite sees them: the catalogue's order, -32602 for a
    # tool we do not have.
    listed = next(check for check in scenarios["tools-list"].checks if check.id == "tools-list")
    assert listed.details["tools"] == list(TOOL_SPECS)
    fixture_call = scenarios["tools-call-simple-text"].failed()[0].message
    assert "Unknown tool 'test_simple_text'" in fixture_call, fixture_call
    if alias == "conformance-stable":
        assert "-32602" in fixture_call
