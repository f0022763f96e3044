"""What production refuses to start with: each check raises ValueError naming the
setting (Settings runs them, in this order, after validating the fields)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from app.config import Settings

MIN_PEPPER_BYTES = 32
# A sender no real mail server should accept: production must name its own.
DEFAULT_MAIL_FROM = "Geospatial Data Service <no-reply@localhost>"


def check(settings: Settings) -> None:
    upstream_contact_in_production(settings)
    refuse_incomplete_stripe_in_production(settings)
    refuse_trusting_every_forwarder_in_production(settings)
    refuse_unsafe_production(settings)


def upstream_contact_in_production(settings: Settings) -> None:
    uses_upstream = bool(settings.upstream_tools) or any(
        chosen != "embedded" for chosen in settings.tool_providers.values()
    )
    if settings.env == "production" and uses_upstream and not settings.upstream_contact:
        raise ValueError(
            "GEOSVC_UPSTREAM_CONTACT must be set in production when GEOSVC_UPSTREAM_TOOLS "
            "or GEOSVC_TOOL_PROVIDERS sends a tool upstream: the upstream providers' usage "
            "policies require a contact (e-mail or URL) in our User-Agent"
        )


def refuse_incomplete_stripe_in_production(settings: Settings) -> None:
    if settings.env != "production" or settings.payment_provider != "stripe":
        return
    required = {
        "GEOSVC_STRIPE_SECRET_KEY": settings.stripe_secret_key,
        "GEOSVC_STRIPE_WEBHOOK_SECRET": settings.stripe_webhook_secret,
        "GEOSVC_STRIPE_STANDARD_PRICE": settings.stripe_standard_price,
        "GEOSVC_STRIPE_METER_EVENT": settings.stripe_meter_event,
    }
    missing = [name for name, value in required.items() if not value]
    if missing:
        raise ValueError(f"GEOSVC_PAYMENT_PROVIDER=stripe in production needs {', '.join(missing)}")


def refuse_trusting_every_forwarder_in_production(settings: Settings) -> None:
    trusted = [part.strip() for part in settings.forwarded_allow_ips.split(",")]
    if settings.env == "production" and "*" in trusted:
        raise ValueError(
            'GEOSVC_FORWARDED_ALLOW_IPS="*" is refused with GEOSVC_ENV=production: every '
            "client could then set its own X-Forwarded-For and escape the per-address "
            "sign-in limits. Set it to the reverse proxy's address(es)."
        )


def refuse_unsafe_production(settings: Settings) -> None:
    """Settings that are fine on a laptop but unsafe when serving the public."""
    if settings.env != "production":
        return
    if settings.payment_provider == "local":
        raise ValueError(
            "GEOSVC_PAYMENT_PROVIDER=local is refused with GEOSVC_ENV=production: its "
            "checkout takes no money (one click upgrades any account). Set "
            "GEOSVC_PAYMENT_PROVIDER=stripe."
        )
    pepper = settings.secret_pepper.get_secret_value().encode() if settings.secret_pepper else b""
    if len(pepper) < MIN_PEPPER_BYTES:
        raise ValueError(
            f"GEOSVC_SECRET_PEPPER must be at least {MIN_PEPPER_BYTES} bytes with "
            f"GEOSVC_ENV=production (it has {len(pepper)}); e.g. `openssl rand -hex 32`."
        )
    oauth_key = (
        settings.oauth_signing_key.get_secret_value().encode()
        if settings.oauth_signing_key
        else b""
    )
    if len(oauth_key) < MIN_PEPPER_BYTES:
        raise ValueError(
            f"GEOSVC_OAUTH_SIGNING_KEY must be at least {MIN_PEPPER_BYTES} bytes with "
            f"GEOSVC_ENV=production (it has {len(oauth_key)}): it hashes OAuth tokens and "
            "signs the consent form; e.g. `openssl rand -hex 32`."
        )
    if settings.oauth_cimd_allow_loopback:
        raise ValueError(
            "GEOSVC_OAUTH_CIMD_ALLOW_LOOPBACK is refused with GEOSVC_ENV=production: any "
            "client could then make the service fetch addresses on its own network."
        )
    embedded = [
        name
        for name, value in (
            ("GEOSVC_REDIS_URL", settings.redis_url),
            ("GEOSVC_DATABASE_URL", settings.database_url),
        )
        if not value
    ]
    if embedded:
        raise ValueError(
            f"{' and '.join(embedded)} must be set with GEOSVC_ENV=production: without "
            "them each process would keep quotas, limits and accounts in its own "
            "in-process Redis and SQLite file."
        )
    mail = [
        name
        for name, missing in (
            ("GEOSVC_SMTP_URL", settings.smtp_url is None),
            ("GEOSVC_MAIL_FROM", settings.mail_from == DEFAULT_MAIL_FROM),
        )
        if missing
    ]
    if mail:
        raise ValueError(
            f"{' and '.join(mail)} must be set with GEOSVC_ENV=production: sign-up "
            "confirmation, password resets and usage alerts are sent by e-mail (without "
            "an SMTP server they would only be written to the log)."
        )
    if settings.reservation_ttl_s < 2 * settings.tool_deadline_s:
        raise ValueError(
            f"GEOSVC_RESERVATION_TTL_S ({settings.reservation_ttl_s}) must be at least twice "
            f"GEOSVC_TOOL_DEADLINE_S ({settings.tool_deadline_s:g}) with GEOSVC_ENV=production: "
            "a reservation that expires while its call still runs frees its credit and "
            "its concurrency slot for another call."
        )
