"""Billing tasks (queue `billing`): the usage ledger."""

from __future__ import annotations
