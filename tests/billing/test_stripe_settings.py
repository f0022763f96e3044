"""Production refuses to start with Stripe selected and a required Stripe setting missing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from app.kit.config import Settings
from app.kit.embedded_redis import free_port
from tests.fakes.stripe import FakeStripe
from tests.support.fixtures import Backend

REQUIRED = {
    "stripe_secret_key": "GEOSVC_STRIPE_SECRET_KEY",
    "stripe_webhook_secret": "GEOSVC_STRIPE_WEBHOOK_SECRET",
    "stripe_standard_price": "GEOSVC_STRIPE_STANDARD_PRICE",
    "stripe_meter_event": "GEOSVC_STRIPE_METER_EVENT",
}
COMPLETE = {
    "stripe_secret_key": "sk_live_never_shown",
    "stripe_webhook_secret": "whsec_x",
    "stripe_standard_price": "price_x",
    "stripe_meter_event": "overage",
    "secret_pepper": "0123456789abcdef0123456789abcdef",  # production needs >= 32 bytes
    "redis_url": "redis://:9c2e7f4a1b@redis:6379/0",  # its own Redis (with a password)
    "database_url": "postgresql+psycopg://db/geosvc",
    "smtp_url": "smtp://mailer:5d8e1a7c3f@smtp.example.com:587",  # production sends mail
    "mail_from": "no-reply@example.com",
    "oauth_signing_key": "fedcba9876543210fedcba9876543210",  # OAuth tokens' HMAC key
}


@pytest.mark.parametrize("missing", sorted(REQUIRED))
def test_each_missing_setting_is_named(missing: str) -> None:
    given = {k: v for k, v in COMPLETE.items() if k != missing}
    with pytest.raises(ValidationError) as refused:
        Settings(env="production", payment_provider="stripe", **given)  # type: ignore[arg-type]
    message = str(refused.value)
    assert REQUIRED[missing] in message
    assert "sk_live_never_shown" not in message


def test_complete_settings_and_development_are_accepted() -> None:
    Settings(env="production", payment_provider="stripe", **COMPLETE)  # type: ignore[arg-type]
    Settings(env="development", payment_provider="stripe")


def test_the_api_process_refuses_to_start(
    backend: Backend, fake_stripe: FakeStripe, tmp_path: Path
) -> None:
    env = backend.env(**fake_stripe.env(), GEOSVC_ENV="production")
    del env["GEOSVC_STRIPE_WEBHOOK_SECRET"]
    command = [sys.executable, "-m", "uvicorn", "app.main:create_app", "--factory"]
    started = subprocess.run(
        [*command, "--host", "127.0.0.1", "--port", str(free_port())],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,  # no .env file from the checkout
    )
    assert started.returncode != 0
    assert "GEOSVC_STRIPE_WEBHOOK_SECRET" in started.stderr + started.stdout
