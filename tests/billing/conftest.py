from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime

import httpx
import pytest
from sqlmodel import Session

from app.db import new_session
from app.models import Subscription
from tests.support.fixtures import Backend


@pytest.fixture
def session(use_backend: Backend) -> Iterator[Session]:
    with new_session() as db:
        yield db


def subscribe(client: httpx.Client) -> dict:
    """Start a checkout and pay it on the local checkout page (a same-origin form post)."""
    started = client.post("/subscription")
    assert started.status_code in (200, 201), started.text
    url = started.json()["checkoutUrl"]
    origin = str(client.base_url).rstrip("/")
    paid = client.post(url, headers={"Origin": origin})
    assert paid.status_code == 303, paid.text
    body = client.get("/subscription").json()
    assert body["status"] == "active", body
    return dict(body)


def move_period_end(session: Session, user_id: str, end: datetime) -> None:
    """As if time had passed: the current period ends at `end`."""
    subscription = session.get(Subscription, user_id)
    assert subscription is not None
    subscription.current_period_end = end
    session.add(subscription)
    session.commit()
