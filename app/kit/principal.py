"""Who a call acts for, as the edge that authenticated it hands it down: in the bottom
layer, as the key and token verifiers, tool calls, the request log and both edges use it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CallerPrincipal:
    """Who a verified bearer credential acts for: an API key, or an OAuth access token
    (`kind` "oauth"), whose `key_id` is then its connected app's id (`app_...`), so the
    ledger, the rate buckets and the usage reports treat the app as they treat a key."""

    key_id: str
    user_id: str
    scopes: frozenset[str]
    kind: str = "api_key"
    # Where the call came in ("mcp" or "v1"), set by that edge for the request log.
    surface: str | None = None
    # The key's environment: "test" keys are metered on their own counter, never billed.
    env: str = "live"

    @property
    def is_test(self) -> bool:
        return self.env == "test"
