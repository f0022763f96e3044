"""A fake Stripe API: a real HTTP server on 127.0.0.1 speaking Stripe's wire format for the
endpoints geosvc uses, and a sender of signed webhooks.

Wire format (as in Stripe's OpenAPI spec and fixtures): form-encoded requests with
bracket notation (`line_items[0][price]`, `metadata[user_id]`), `Authorization: Bearer`,
JSON objects with `object` and prefixed ids (`cus_`, `cs_test_`, `sub_`, `si_`, `bps_`,
`evt_`, `in_`), errors as `{"error": {"type", "message", "param"?}}`, `Idempotency-Key`
replays (`Idempotent-Replayed: true`), and a meter event whose identifier was seen before
refused with 400 "An event already exists with identifier ...".

Webhooks are signed like Stripe: `Stripe-Signature: t=<unix>,v1=<hex HMAC-SHA256 of
"<t>.<body>" with the endpoint secret>`. State changes the API makes (a subscription
updated by our server) queue the event Stripe would send; tests deliver them, in any
order, as often as they like.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import anyio.to_thread
import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from app.kit.embedded_redis import free_port
from tests.fakes.stripe_invoices import list_invoices, make_invoice
from tests.fakes.stripe_wire import (
    WEBHOOK_SECRET,
    decode_form,
    make_event,
    new_id,
    public,
    sign,
    stripe_error,
)

SECRET_KEY = "sk_test_fake" + "0" * 20
STANDARD_PRICE = "price_standard_monthly"
OVERAGE_PRICE = "price_overage_metered"
METER_EVENT = "geosvc_overage"
MONTH_S = 30 * 24 * 3600


@dataclass
class Recorded:
    method: str
    path: str
    params: dict[str, Any]
    idempotency_key: str | None


@dataclass
class FakeStripeState:
    customers: dict[str, dict[str, Any]] = field(default_factory=dict)
    sessions: dict[str, dict[str, Any]] = field(default_factory=dict)
    subscriptions: dict[str, dict[str, Any]] = field(default_factory=dict)
    invoices: dict[str, dict[str, Any]] = field(default_factory=dict)
    meter_events: dict[str, dict[str, Any]] = field(default_factory=dict)
    idempotent: dict[str, tuple[int, bytes]] = field(default_factory=dict)
    requests: list[Recorded] = field(default_factory=list)
    queued_events: list[dict[str, Any]] = field(default_factory=list)
    # path prefix -> how many answers to fail with 500 after doing the work
    lose_answers: dict[str, int] = field(default_factory=dict)
    # path prefix -> seconds to wait before doing the work (a slow Stripe)
    slow_answers: dict[str, float] = field(default_factory=dict)
    # an outage of every endpoint: "error" answers 500 doing nothing, "hang" answers
    # nothing until the outage ends (or HANG_LIMIT_S passes)
    outage: str | None = None
    outage_over: threading.Event = field(default_factory=threading.Event)
    lock: threading.RLock = field(default_factory=threading.RLock)


HANG_LIMIT_S = 60.0


def create_fake_app(state: FakeStripeState, base_url: str) -> Starlette:
    async def handle(request: Request) -> Response:
        if request.headers.get("authorization") != f"Bearer {SECRET_KEY}":
            return stripe_error(401, "Invalid API Key provided: sk_test_****")
        body = (await request.body()).decode()
        if request.method == "POST":
            params = decode_form(body)
        else:  # the library sends a GET's or DELETE's parameters in the query string
            params = decode_form(request.url.query)
        key = request.headers.get("idempotency-key")
        path = request.url.path
        with state.lock:
            delay = max((s for p, s in state.slow_answers.items() if path.startswith(p)), default=0)
        if delay:
            await asyncio.sleep(delay)
        with state.lock:
            state.requests.append(Recorded(request.method, path, params, key))
            outage = state.outage
        if outage == "hang":
            await anyio.to_thread.run_sync(state.outage_over.wait, HANG_LIMIT_S)
        if outage is not None:
            return stripe_error(500, "An unknown error occurred", type="api_error")
        with state.lock:
            remembered = f"{request.method} {path} {key}"
            response: Response
            if key is not None and remembered in state.idempotent:
                status, content = state.idempotent[remembered]
                response = Response(content, status, media_type="application/json")
                response.headers["Idempotent-Replayed"] = "true"
            else:
                response = route(request.method, path, params)
                if key is not None and response.status_code < 500:
                    state.idempotent[remembered] = (response.status_code, bytes(response.body))
            for prefix, count in state.lose_answers.items():
                if count and path.startswith(prefix):
                    state.lose_answers[prefix] = count - 1
                    return stripe_error(500, "An unknown error occurred", type="api_error")
            response.headers["Request-Id"] = new_id("req_", 14)
            return response

    def route(method: str, path: str, params: dict[str, Any]) -> Response:
        parts = path.strip("/").split("/")[1:]  # after "v1"
        if method == "POST" and parts == ["customers"]:
            return create_customer(params)
        if method == "POST" and parts == ["checkout", "sessions"]:
            return create_session(params)
        if method == "GET" and parts[:2] == ["checkout", "sessions"] and len(parts) == 3:
            return found(state.sessions, parts[2], "checkout.session")
        if method == "POST" and parts[:2] == ["checkout", "sessions"] and parts[3:] == ["expire"]:
            return expire_session(parts[2])
        if method == "POST" and parts == ["billing_portal", "sessions"]:
            return create_portal(params)
        if parts[:1] == ["subscriptions"] and len(parts) == 2:
            if method == "GET":
                return found(state.subscriptions, parts[1], "subscription")
            if method == "POST":
                return update_subscription(parts[1], params)
            if method == "DELETE":
                return cancel_subscription(parts[1])
        if method == "POST" and parts == ["billing", "meter_events"]:
            return create_meter_event(params)
        if method == "GET" and parts == ["invoices"]:
            return list_invoices(state.invoices.values(), params)
        return stripe_error(404, f"Unrecognized request URL ({method}: {path}).")

    def found(table: dict[str, dict[str, Any]], object_id: str, kind: str) -> Response:
        if object_id not in table:
            return stripe_error(404, f"No such {kind}: '{object_id}'", param="id")
        return JSONResponse(table[object_id])

    def create_customer(params: dict[str, Any]) -> Response:
        customer = {
            "id": new_id("cus_", 14),
            "object": "customer",
            "created": int(time.time()),
            "email": params.get("email"),
            "livemode": False,
            "metadata": params.get("metadata", {}),
        }
        state.customers[customer["id"]] = customer
        return JSONResponse(customer)

    def create_session(params: dict[str, Any]) -> Response:
        if params.get("mode") not in ("payment", "setup", "subscription"):
            return stripe_error(400, "Missing required param: mode.", param="mode")
        customer = params.get("customer")
        if customer is not None and customer not in state.customers:
            return stripe_error(400, f"No such customer: '{customer}'", param="customer")
        items = params.get("line_items") or []
        if not items or not all(isinstance(item, dict) and item.get("price") for item in items):
            return stripe_error(400, "Missing required param: line_items.", param="line_items")
        session_id = new_id("cs_test_", 58)
        checkout = {
            "id": session_id,
            "object": "checkout.session",
            "client_reference_id": params.get("client_reference_id"),
            "created": int(time.time()),
            "customer": customer,
            "expires_at": int(time.time()) + 24 * 3600,
            "livemode": False,
            "metadata": params.get("metadata", {}),
            "mode": params["mode"],
            "payment_status": "unpaid",
            "status": "open",
            "subscription": None,
            "success_url": params.get("success_url"),
            "cancel_url": params.get("cancel_url"),
            "url": f"{base_url}/c/pay/{session_id}",
            "_line_items": items,  # not part of the object: kept to build the subscription
            "_subscription_data": params.get("subscription_data", {}),
        }
        state.sessions[session_id] = checkout
        return JSONResponse(public(checkout))

    def create_portal(params: dict[str, Any]) -> Response:
        customer = params.get("customer")
        if customer not in state.customers:
            return stripe_error(400, f"No such customer: '{customer}'", param="customer")
        portal_id = new_id("bps_")
        portal = {
            "id": portal_id,
            "object": "billing_portal.session",
            "created": int(time.time()),
            "customer": customer,
            "livemode": False,
            "return_url": params.get("return_url"),
            "url": f"{base_url}/p/session/{new_id('test_', 32)}",
        }
        return JSONResponse(portal)

    def update_subscription(subscription_id: str, params: dict[str, Any]) -> Response:
        subscription = state.subscriptions.get(subscription_id)
        if subscription is None:
            return stripe_error(404, f"No such subscription: '{subscription_id}'", param="id")
        if "cancel_at_period_end" in params:
            before = subscription["cancel_at_period_end"]
            subscription["cancel_at_period_end"] = params["cancel_at_period_end"] == "true"
            state.queued_events.append(
                make_event(
                    "customer.subscription.updated",
                    subscription,
                    previous_attributes={"cancel_at_period_end": before},
                )
            )
        return JSONResponse(subscription)

    def cancel_subscription(subscription_id: str) -> Response:
        """DELETE: canceled at once (Stripe's "cancel a subscription"), and its event."""
        subscription = state.subscriptions.get(subscription_id)
        if subscription is None:
            return stripe_error(404, f"No such subscription: '{subscription_id}'", param="id")
        if subscription["status"] == "canceled":
            return stripe_error(400, "A canceled subscription can only update its metadata.")
        now = int(time.time())
        subscription.update(status="canceled", canceled_at=now, ended_at=now)
        state.queued_events.append(make_event("customer.subscription.deleted", subscription))
        return JSONResponse(subscription)

    def expire_session(session_id: str) -> Response:
        checkout = state.sessions.get(session_id)
        if checkout is None:
            return stripe_error(404, f"No such checkout.session: '{session_id}'", param="id")
        if checkout["status"] != "open":
            return stripe_error(400, f"Only open sessions can be expired ({checkout['status']}).")
        checkout.update(status="expired", url=None)
        state.queued_events.append(make_event("checkout.session.expired", public(checkout)))
        return JSONResponse(public(checkout))

    def create_meter_event(params: dict[str, Any]) -> Response:
        payload = params.get("payload") or {}
        for name in ("event_name",):
            if not params.get(name):
                return stripe_error(400, f"Missing required param: {name}.", param=name)
        if payload.get("stripe_customer_id") not in state.customers:
            return stripe_error(400, "No customer for this meter event", param="payload")
        if not str(payload.get("value", "")).isdigit():
            return stripe_error(400, "Invalid payload value", param="payload[value]")
        identifier = params.get("identifier") or new_id("mev_")
        if identifier in state.meter_events:
            return stripe_error(
                400, f"An event already exists with identifier {identifier}.", param="identifier"
            )
        event = {
            "object": "billing.meter_event",
            "created": int(time.time()),
            "event_name": params["event_name"],
            "identifier": identifier,
            "livemode": False,
            "payload": payload,
            "timestamp": int(params.get("timestamp") or time.time()),
        }
        state.meter_events[identifier] = event
        return JSONResponse(event)

    return Starlette(routes=[Route("/v1/{rest:path}", handle, methods=["GET", "POST", "DELETE"])])


class FakeStripe:
    """The fake app under uvicorn in a thread of the test process, plus Stripe's side of
    the story: paying a checkout, failing an invoice, ending a subscription."""

    def __init__(self) -> None:
        self.state = FakeStripeState()
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(
            create_fake_app(self.state, self.url),
            host="127.0.0.1",
            port=self.port,
            log_level="warning",
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, daemon=True, name="fake-stripe")

    def start(self) -> FakeStripe:
        self._thread.start()
        while not self._server.started:
            if not self._thread.is_alive():
                raise RuntimeError("fake stripe failed to start")
            self._thread.join(0.01)
        return self

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(10)

    def env(self) -> dict[str, str]:
        return {
            "GEOSVC_PAYMENT_PROVIDER": "stripe",
            "GEOSVC_STRIPE_SECRET_KEY": SECRET_KEY,
            "GEOSVC_STRIPE_WEBHOOK_SECRET": WEBHOOK_SECRET,
            "GEOSVC_STRIPE_STANDARD_PRICE": STANDARD_PRICE,
            "GEOSVC_STRIPE_OVERAGE_PRICE": OVERAGE_PRICE,
            "GEOSVC_STRIPE_METER_EVENT": METER_EVENT,
            "GEOSVC_STRIPE_API_BASE": self.url,
        }

    # --- what was asked -------------------------------------------------------------
    def requests(self, method: str | None = None, path: str | None = None) -> list[Recorded]:
        with self.state.lock:
            return [
                r
                for r in self.state.requests
                if (method is None or r.method == method) and (path is None or r.path == path)
            ]

    def meter_events(self, customer_id: str) -> list[dict[str, Any]]:
        with self.state.lock:
            return [
                e
                for e in self.state.meter_events.values()
                if e["payload"]["stripe_customer_id"] == customer_id
            ]

    def lose_answers(self, path_prefix: str, count: int) -> None:
        """Do the work of the next `count` matching requests, then answer 500."""
        with self.state.lock:
            self.state.lose_answers[path_prefix] = count

    def slow_answers(self, path_prefix: str, seconds: float) -> None:
        """Wait `seconds` before doing the work of each matching request (0: no wait)."""
        with self.state.lock:
            self.state.slow_answers[path_prefix] = seconds

    def set_outage(self, kind: str | None) -> None:
        """ "error" (500s), "hang" (no answer) or None (answering again)."""
        with self.state.lock:
            self.state.outage = kind
            if kind == "hang":
                self.state.outage_over.clear()
            else:
                self.state.outage_over.set()

    def take_queued_events(self) -> list[dict[str, Any]]:
        with self.state.lock:
            events, self.state.queued_events = self.state.queued_events, []
            return events

    # --- Stripe's side ----------------------------------------------------------------
    def complete_checkout(self, session_id: str) -> list[dict[str, Any]]:
        """The customer paid: a subscription exists. Returns the events Stripe sends."""
        with self.state.lock:
            checkout = self.state.sessions[session_id]
            now = int(time.time())
            subscription_id = new_id("sub_")
            items = [
                {
                    "id": new_id("si_", 14),
                    "object": "subscription_item",
                    "current_period_start": now,
                    "current_period_end": now + MONTH_S,
                    "price": {"id": item["price"], "object": "price"},
                    "quantity": int(item.get("quantity") or 1),
                    "subscription": subscription_id,
                }
                for item in checkout["_line_items"]
            ]
            subscription = {
                "id": subscription_id,
                "object": "subscription",
                "cancel_at_period_end": False,
                "canceled_at": None,
                "created": now,
                "customer": checkout["customer"],
                "ended_at": None,
                "items": {
                    "object": "list",
                    "data": items,
                    "has_more": False,
                    "url": f"/v1/subscription_items?subscription={subscription_id}",
                },
                "livemode": False,
                "metadata": checkout["_subscription_data"].get("metadata", {}),
                "start_date": now,
                "status": "active",
            }
            self.state.subscriptions[subscription_id] = subscription
            self.add_invoice(
                checkout["customer"], 4900, period=(now, now + MONTH_S), created=now
            )  # the first period, paid at checkout
            checkout.update(status="complete", payment_status="paid", subscription=subscription_id)
            return [
                make_event("checkout.session.completed", public(checkout)),
                make_event("customer.subscription.created", subscription),
            ]

    def expire_checkout(self, session_id: str) -> dict[str, Any]:
        """24 hours passed unpaid: the session is expired (and its URL gone)."""
        with self.state.lock:
            checkout = self.state.sessions[session_id]
            checkout.update(status="expired", url=None)
            return make_event("checkout.session.expired", public(checkout))

    def add_invoice(self, customer: str, total: int, **details: Any) -> dict[str, Any]:
        """An invoice of the customer's (`stripe_invoices.make_invoice` for the details)."""
        with self.state.lock:
            number = len(self.state.invoices) + 1
            invoice = make_invoice(self.url, customer, total, number=number, **details)
            self.state.invoices[invoice["id"]] = invoice
        return invoice

    def fail_payment(self, subscription_id: str) -> dict[str, Any]:
        """A renewal was declined: past_due, and the invoice.payment_failed event."""
        with self.state.lock:
            subscription = self.state.subscriptions[subscription_id]
            subscription["status"] = "past_due"
            invoice = {
                "id": new_id("in_"),
                "object": "invoice",
                "customer": subscription["customer"],
                "status": "open",
                "attempt_count": 1,
                "parent": {
                    "type": "subscription_details",
                    "quote_details": None,
                    "subscription_details": {"metadata": {}, "subscription": subscription_id},
                },
            }
            return make_event("invoice.payment_failed", invoice)

    def set_status(self, subscription_id: str, status: str) -> dict[str, Any]:
        with self.state.lock:
            subscription = self.state.subscriptions[subscription_id]
            before = subscription["status"]
            subscription["status"] = status
            return make_event(
                "customer.subscription.updated",
                subscription,
                previous_attributes={"status": before},
            )

    def end_subscription(self, subscription_id: str) -> dict[str, Any]:
        """The period ended after a cancellation: canceled, and the deleted event."""
        with self.state.lock:
            subscription = self.state.subscriptions[subscription_id]
            now = int(time.time())
            subscription.update(status="canceled", canceled_at=now, ended_at=now)
            return make_event("customer.subscription.deleted", subscription)

    def deliver(
        self,
        url: str,
        event: dict[str, Any],
        *,
        secret: str = WEBHOOK_SECRET,
        timestamp: int | None = None,
        signature: str | None = None,  # as given instead of a correct one; "" for none
        headers: dict[str, str] | None = None,
    ) -> httpx.Response:
        """POST an event to a webhook endpoint the way Stripe does."""
        payload = json.dumps(event, indent=2).encode()
        sent = {
            "Content-Type": "application/json; charset=utf-8",
            "User-Agent": "Stripe/1.0 (+https://stripe.com/docs/webhooks)",
            "Stripe-Signature": sign(payload, secret, timestamp)
            if signature is None
            else signature,
            **(headers or {}),
        }
        if not sent["Stripe-Signature"]:
            del sent["Stripe-Signature"]  # signature="" sends none
        return httpx.post(url, content=payload, headers=sent, timeout=30)
