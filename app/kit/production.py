"""What production refuses to start with. Each check yields one problem per setting, so
`geosvc check-config` lists them all at once; Settings runs `check` after validating the
fields and refuses with every problem named (app/cli.py prints them)."""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

from pydantic import SecretStr

if TYPE_CHECKING:
    from app.kit.config import Settings

MIN_PEPPER_BYTES = 32
# A sender no real mail server should accept: production must name its own.
DEFAULT_MAIL_FROM = "Geospatial Data Service <no-reply@localhost>"
# Passwords that ship in images, tutorials and this repository's old docker-compose.yml.
WELL_KNOWN_PASSWORDS = frozenset({"geosvc", "guest", "postgres", "password", "changeme", "redis"})
LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})
# What the example files (deploy/kubernetes/secrets.env.example, the overlays' config.env)
# and tutorials put where a real value goes: a value holding one is still a placeholder.
PLACEHOLDER_MARKERS = ("replace", "change-me", "changeme", "change_me", "placeholder")
# A random secret (hex or base64 of 16 bytes or more) has far more distinct characters;
# fewer than this is "0000...", "aaaa..." or "abab...": a value anyone would guess.
MIN_DISTINCT_SECRET_CHARACTERS = 6


# The secret settings each process reads (issue 51, item 6): Kubernetes gives each
# workload only its own (deploy/kubernetes), and production refuses a process that lacks
# one it reads. A secret it does not read may be absent; one given must still be safe.
# The `geosvc` commands say which process they are in PROCESS_VARIABLE (inherited by
# uvicorn's and Celery's children); anything else (check-config, a shell) needs them all.
PROCESS_VARIABLE = "GEOSVC_PROCESS"
_DATA = frozenset({"GEOSVC_DATABASE_URL", "GEOSVC_REDIS_URL", "GEOSVC_BROKER_URL"})
SECRETS_READ_BY: dict[str, frozenset[str]] = {
    "api": _DATA
    | {"GEOSVC_SECRET_PEPPER", "GEOSVC_OAUTH_SIGNING_KEY", "GEOSVC_METRICS_TOKEN"}
    | {"GEOSVC_STRIPE_SECRET_KEY", "GEOSVC_STRIPE_WEBHOOK_SECRET"},
    "worker": _DATA | {"GEOSVC_METRICS_TOKEN"},
    # a worker taking `billing`: Stripe's meter reports and the mail (workers/billing.py,
    # workers/mail.py)
    "worker-billing": _DATA
    | {"GEOSVC_METRICS_TOKEN", "GEOSVC_STRIPE_SECRET_KEY", "GEOSVC_SMTP_URL"},
    # Celery's broker and its result backend (Redis)
    "beat": frozenset({"GEOSVC_REDIS_URL", "GEOSVC_BROKER_URL"}),
    "flower": frozenset({"GEOSVC_REDIS_URL", "GEOSVC_BROKER_URL", "GEOSVC_FLOWER_AUTH"}),
    "migrate": frozenset({"GEOSVC_DATABASE_URL"}),
    "data": frozenset(),  # `geosvc data build`: the installed dataset packages only
    # `geosvc admin backup`: pg_dump of the database, its time recorded in Redis
    "backup": frozenset({"GEOSVC_DATABASE_URL", "GEOSVC_REDIS_URL"}),
}

# Read when given, never required: a rotation's previous value, an optional upstream key.
OPTIONAL_SECRETS_READ_BY: dict[str, frozenset[str]] = {
    "api": frozenset({"GEOSVC_SECRET_PEPPER_PREVIOUS", "GEOSVC_METRICS_PREVIOUS_TOKEN"}),
    "worker": frozenset({"GEOSVC_METRICS_PREVIOUS_TOKEN", "GEOSVC_CENSUS_API_KEY"}),
    "worker-billing": frozenset({"GEOSVC_METRICS_PREVIOUS_TOKEN"}),
}

_EVERY_SECRET = frozenset().union(*SECRETS_READ_BY.values(), *OPTIONAL_SECRETS_READ_BY.values())


def serve_as(process: str) -> None:
    """Name this process (a key of SECRETS_READ_BY) before its Settings are read."""
    assert process in SECRETS_READ_BY, process
    os.environ[PROCESS_VARIABLE] = process


@contextmanager
def serving_as(process: str) -> Iterator[None]:
    """serve_as for a command that may run inside another process (tests run `geosvc
    data build` in theirs): the name is put back afterwards."""
    before = os.environ.get(PROCESS_VARIABLE)
    serve_as(process)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(PROCESS_VARIABLE, None)
        else:
            os.environ[PROCESS_VARIABLE] = before


def reads(name: str) -> bool:
    """Whether this process reads the setting `name`: every one but the secrets other
    processes read (and every secret too when the process is unnamed)."""
    process = os.environ.get(PROCESS_VARIABLE)
    if process not in SECRETS_READ_BY or name not in _EVERY_SECRET:
        return True
    return name in SECRETS_READ_BY[process]


class ProductionRefused(ValueError):
    """Every reason production refuses these settings, one setting per problem."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


def check(settings: Settings) -> None:
    found = problems(settings)
    if found:
        raise ProductionRefused(found)


def problems(settings: Settings) -> list[str]:
    if settings.env != "production":
        return []
    return [
        *upstream_contact(settings),
        *incomplete_stripe(settings),
        *trusting_every_forwarder(settings),
        *unsafe_payments_and_secrets(settings),
        *embedded_services(settings),
        *default_credentials(settings),
        *placeholders(settings),
        *insecure_base_url(settings),
        *no_mail(settings),
        *short_reservations(settings),
    ]


def upstream_contact(settings: Settings) -> Iterator[str]:
    uses_upstream = bool(settings.upstream_tools) or any(
        chosen != "embedded" for chosen in settings.tool_providers.values()
    )
    if uses_upstream and not settings.upstream_contact:
        yield (
            "GEOSVC_UPSTREAM_CONTACT must be set in production when GEOSVC_UPSTREAM_TOOLS "
            "or GEOSVC_TOOL_PROVIDERS sends a tool upstream: the upstream providers' usage "
            "policies require a contact (e-mail or URL) in our User-Agent"
        )


def incomplete_stripe(settings: Settings) -> Iterator[str]:
    """Production takes payments through Stripe (`local` is refused): name what it needs."""
    required = {
        "GEOSVC_STRIPE_SECRET_KEY": settings.stripe_secret_key,
        "GEOSVC_STRIPE_WEBHOOK_SECRET": settings.stripe_webhook_secret,
        "GEOSVC_STRIPE_STANDARD_PRICE": settings.stripe_standard_price,
        "GEOSVC_STRIPE_METER_EVENT": settings.stripe_meter_event,
    }
    for name, value in required.items():
        if not value and not reads(name):
            continue  # a secret this process does not read
        if not value or (hasattr(value, "get_secret_value") and not value.get_secret_value()):
            yield f"{name} must be set with GEOSVC_ENV=production: payments go through Stripe"


def trusting_every_forwarder(settings: Settings) -> Iterator[str]:
    if "*" in [part.strip() for part in settings.forwarded_allow_ips.split(",")]:
        yield (
            'GEOSVC_FORWARDED_ALLOW_IPS="*" is refused with GEOSVC_ENV=production: every '
            "client could then set its own X-Forwarded-For and escape the per-address "
            "sign-in limits. Set it to the reverse proxy's address(es)."
        )


def unsafe_payments_and_secrets(settings: Settings) -> Iterator[str]:
    """Settings that are fine on a laptop but unsafe when serving the public."""
    if settings.payment_provider == "local":
        yield (
            "GEOSVC_PAYMENT_PROVIDER=local is refused with GEOSVC_ENV=production: its "
            "checkout takes no money (one click upgrades any account). Set "
            "GEOSVC_PAYMENT_PROVIDER=stripe."
        )
    pepper = settings.secret_pepper.get_secret_value().encode() if settings.secret_pepper else b""
    if len(pepper) < MIN_PEPPER_BYTES and (pepper or reads("GEOSVC_SECRET_PEPPER")):
        yield (
            f"GEOSVC_SECRET_PEPPER must be at least {MIN_PEPPER_BYTES} bytes with "
            f"GEOSVC_ENV=production (it has {len(pepper)}); e.g. `openssl rand -hex 32`."
        )
    secret = settings.oauth_signing_key
    key = secret.get_secret_value().encode() if secret else b""
    if len(key) < MIN_PEPPER_BYTES and (key or reads("GEOSVC_OAUTH_SIGNING_KEY")):
        yield (
            f"GEOSVC_OAUTH_SIGNING_KEY must be at least {MIN_PEPPER_BYTES} bytes with "
            f"GEOSVC_ENV=production (it has {len(key)}): it hashes OAuth tokens and "
            "signs the consent form; e.g. `openssl rand -hex 32`."
        )
    if settings.oauth_cimd_allow_loopback:
        yield (
            "GEOSVC_OAUTH_CIMD_ALLOW_LOOPBACK is refused with GEOSVC_ENV=production: any "
            "client could then make the service fetch addresses on its own network."
        )


def embedded_services(settings: Settings) -> Iterator[str]:
    for name, value in (
        ("GEOSVC_REDIS_URL", settings.redis_url),
        ("GEOSVC_DATABASE_URL", settings.database_url),
    ):
        if not value and reads(name):
            yield (
                f"{name} must be set with GEOSVC_ENV=production: without it each process "
                "would keep quotas, limits and accounts in its own in-process Redis and "
                "SQLite file."
            )


def default_credentials(settings: Settings) -> Iterator[str]:
    """A well-known password, or a Redis anyone on its network may use, is refused."""
    for name, url in (
        ("GEOSVC_DATABASE_URL", settings.database_url),
        ("GEOSVC_REDIS_URL", settings.redis_url),
        ("GEOSVC_BROKER_URL", settings.broker_url),
    ):
        if not url:
            continue
        parts = urlsplit(url)
        password = unquote(parts.password or "")
        if password.lower() in WELL_KNOWN_PASSWORDS:
            yield (
                f"{name} uses a well-known password with GEOSVC_ENV=production: set a "
                "random one (e.g. `openssl rand -hex 24`; docs/DEPLOYMENT.md, Secrets)."
            )
        elif (
            parts.scheme in ("redis", "rediss")
            and not password
            and parts.hostname not in LOOPBACK_HOSTS
        ):
            yield (
                f"{name} names a Redis on another host without a password with "
                "GEOSVC_ENV=production: start Redis with --requirepass and put the "
                "password in the URL (redis://:PASSWORD@host:6379/0)."
            )


def no_mail(settings: Settings) -> Iterator[str]:
    for name, missing in (
        ("GEOSVC_SMTP_URL", settings.smtp_url is None and reads("GEOSVC_SMTP_URL")),
        ("GEOSVC_MAIL_FROM", settings.mail_from == DEFAULT_MAIL_FROM),
    ):
        if missing:
            yield (
                f"{name} must be set with GEOSVC_ENV=production: sign-up confirmation, "
                "password resets and usage alerts are sent by e-mail (without an SMTP "
                "server they would only be written to the log)."
            )


def short_reservations(settings: Settings) -> Iterator[str]:
    if settings.reservation_ttl_s < 2 * settings.tool_deadline_s:
        yield (
            f"GEOSVC_RESERVATION_TTL_S ({settings.reservation_ttl_s}) must be at least twice "
            f"GEOSVC_TOOL_DEADLINE_S ({settings.tool_deadline_s:g}) with GEOSVC_ENV=production: "
            "a reservation that expires while its call still runs frees its credit and "
            "its concurrency slot for another call."
        )


def _secret_parts(settings: Settings) -> Iterator[tuple[str, str]]:
    """(setting, the part of it that is a secret) for every secret setting that is set:
    the SecretStr values, the password of a user:password or of a URL."""
    for field, value in settings:
        name = f"GEOSVC_{field.upper()}"
        if isinstance(value, SecretStr):
            secret = value.get_secret_value()
            if field == "flower_auth":
                secret = secret.partition(":")[2]
            elif "://" in secret:
                secret = unquote(urlsplit(secret).password or "")
        elif isinstance(value, str) and field.endswith("_url") and "://" in value:
            secret = unquote(urlsplit(value).password or "")
        else:
            continue
        if secret:
            yield name, secret


def placeholders(settings: Settings) -> Iterator[str]:
    """A value left as the example files ship it, or a secret anyone could guess.
    The message names the setting, never its value."""
    flagged: set[str] = set()
    for field, value in settings:
        text = value.get_secret_value() if isinstance(value, SecretStr) else value
        if isinstance(text, str) and any(m in text.lower() for m in PLACEHOLDER_MARKERS):
            flagged.add(f"GEOSVC_{field.upper()}")
            yield (
                f"GEOSVC_{field.upper()} still holds a placeholder (REPLACE..., CHANGE-ME...) "
                "with GEOSVC_ENV=production: set the real value (random secrets: "
                "`openssl rand -hex 32`)."
            )
    for name, secret in _secret_parts(settings):
        if name in flagged or secret.lower() in WELL_KNOWN_PASSWORDS:  # said already
            continue
        if len(set(secret.lower())) < MIN_DISTINCT_SECRET_CHARACTERS:
            yield (
                f"{name} holds a secret anyone could guess (too few distinct characters, "
                "e.g. all zeros) with GEOSVC_ENV=production: set a random one "
                "(`openssl rand -hex 32`)."
            )


def insecure_base_url(settings: Settings) -> Iterator[str]:
    """Sign-in cookies, OAuth redirects and the links in mail go to GEOSVC_BASE_URL: over
    plain http anyone on the way reads them. Loopback is exempt: nothing leaves the host."""
    parts = urlsplit(settings.base_url)
    if parts.scheme != "https" and not _is_loopback(parts.hostname or ""):
        yield (
            "GEOSVC_BASE_URL must be an https:// address with GEOSVC_ENV=production: "
            "sign-in cookies, OAuth redirects and the links in e-mails go to it."
        )


def _is_loopback(host: str) -> bool:
    try:
        return host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
