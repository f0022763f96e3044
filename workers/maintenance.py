"""Beat tasks (queue `billing`): monthly rollover and ledger reconciliation."""

from __future__ import annotations
