"""What a call weighs and where it runs: the fair-work half of tenant isolation.

A call's weight is the number of rate tokens it takes: 1, except a static map larger
than `heavy_map_pixels` (600x400, the default size), which takes one token per that many
pixels: a 1280x1280 map takes 7 (it has 6.8 times the pixels and PNG bytes, and took
2.7-4 times the CPU of a 600x400 one; docs/OPERATIONS.md, "Tenant isolation"). Heavy calls
of any plan run on `tools.heavy`, free accounts' calls on `tools.free`, paying calls on
`tools`; a deployment gives `tools` its own worker pool, so a free backlog or a run of
big maps never delays a paying call.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.geodata.catalogue import spec_for
from app.kit.config import get_settings
from app.plans import Plan
from app.queue.celery import FREE_TOOLS_QUEUE, HEAVY_TOOLS_QUEUE, TOOLS_QUEUE


def call_weight(name: str, arguments: Mapping[str, Any]) -> int:
    """Rate tokens one call takes (its arguments already validated): the tool's `weight`."""
    return spec_for(name).weight(arguments, get_settings())


def queue_for(plan: Plan, weight: int) -> str:
    if weight > 1:
        return HEAVY_TOOLS_QUEUE
    return FREE_TOOLS_QUEUE if plan is Plan.FREE else TOOLS_QUEUE
