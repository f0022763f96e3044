"""The fake Stripe's invoices: Stripe's invoice object and `GET /v1/invoices` (newest
first, `customer`, `limit` 1-100 with 10 by default, `starting_after`, a list object)."""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

from starlette.responses import JSONResponse, Response

from tests.fakes.stripe_wire import new_id, stripe_error

MONTH_S = 30 * 24 * 3600


def make_invoice(
    base_url: str,
    customer: str,
    total: int,
    *,
    number: int,
    status: str = "paid",
    period: tuple[int, int] | None = None,
    created: int | None = None,
    currency: str = "usd",
) -> dict[str, Any]:
    """An invoice object; a draft has no number and no documents yet. Its own
    period_start/end are when items were added (its creation), the service period is on
    its line, as at Stripe."""
    created = int(time.time()) if created is None else created
    start, end = period or (created, created + MONTH_S)
    invoice_id = new_id("in_")
    final = status != "draft"
    return {
        "id": invoice_id,
        "object": "invoice",
        "amount_due": total,
        "amount_paid": total if status == "paid" else 0,
        "amount_remaining": 0 if status == "paid" else total,
        "created": created,
        "currency": currency,
        "customer": customer,
        "hosted_invoice_url": f"{base_url}/i/acct_test/{invoice_id}" if final else None,
        "invoice_pdf": f"{base_url}/i/acct_test/{invoice_id}/pdf" if final else None,
        "lines": {
            "object": "list",
            "data": [
                {
                    "id": new_id("il_"),
                    "object": "line_item",
                    "amount": total,
                    "currency": currency,
                    "period": {"start": start, "end": end},
                }
            ],
            "has_more": False,
            "url": f"/v1/invoices/{invoice_id}/lines",
        },
        "livemode": False,
        "number": f"GEO-{number:04d}" if final else None,
        "period_start": created,
        "period_end": created,
        "status": status,
        "total": total,
    }


def list_invoices(invoices: Iterable[dict[str, Any]], params: dict[str, Any]) -> Response:
    limit = str(params.get("limit", "10"))
    if not limit.isdigit() or not 1 <= int(limit) <= 100:
        return stripe_error(400, "Invalid integer: limit", param="limit")
    customer = params.get("customer")
    mine = [invoice for invoice in invoices if customer in (None, invoice["customer"])]
    mine.sort(key=lambda invoice: (invoice["created"], invoice["id"]), reverse=True)
    if after := params.get("starting_after"):
        ids = [invoice["id"] for invoice in mine]
        if after not in ids:
            return stripe_error(400, f"No such invoice: '{after}'", param="starting_after")
        mine = mine[ids.index(after) + 1 :]
    page = mine[: int(limit)]
    body = {"object": "list", "data": page, "has_more": len(mine) > len(page)}
    return JSONResponse({**body, "url": "/v1/invoices"})
