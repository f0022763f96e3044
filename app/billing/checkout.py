"""An open checkout: what every payment provider (app.billing.providers) answers when
asked to start one. Its own module, so `stripe_provider` needs nothing from
`providers`, which loads it only when chosen."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class Checkout:
    """An open checkout, as stored on the subscription row (reads never ask again)."""

    id: str
    url: str  # where the user pays
    expires_at: datetime | None  # None: it never expires
