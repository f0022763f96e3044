"""The shapes settings must have, and the settings that need each other: checked when
Settings is validated (app/kit/config.py), in every environment. What production alone
refuses is app/kit/production.py."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

from pydantic import SecretStr


def proxy_addresses(value: str) -> str:
    """GEOSVC_FORWARDED_ALLOW_IPS: "*" or IP addresses and CIDRs, comma-separated."""
    for part in (part.strip() for part in value.split(",") if part.strip()):
        if part != "*":
            try:
                ipaddress.ip_network(part, strict=False)
            except ValueError:
                raise ValueError(f"{part!r} is not an IP address or CIDR") from None
    return value


def smtp_url(value: SecretStr | None) -> SecretStr | None:
    # The message never repeats the URL: it holds the SMTP password.
    if value is not None:
        parts = urlsplit(value.get_secret_value())
        if parts.scheme not in ("smtp", "smtps") or not parts.hostname:
            raise ValueError(
                "GEOSVC_SMTP_URL must look like smtp://user:password@host:587 (STARTTLS) "
                "or smtps://user:password@host:465 (TLS)"
            )
    return value


def sentinel_addresses(value: str) -> list[tuple[str, int]]:
    """GEOSVC_REDIS_SENTINELS as (host, port) pairs."""
    addresses = []
    for item in filter(None, (part.strip() for part in value.split(","))):
        host, _, port = item.rpartition(":")
        if not host or not port.isdigit():
            raise ValueError(f"GEOSVC_REDIS_SENTINELS: {item!r} is not host:port")
        addresses.append((host.strip("[]"), int(port)))
    return addresses


def check_redis_topology(
    *, cluster: bool, redis_url: str | None, broker_url: str | None, sentinels: str
) -> None:
    """Celery's Redis broker and `geosvc dev`'s embedded Redis speak no Cluster (nor
    follow Sentinel here): the broker is RabbitMQ (or a Redis of its own)."""
    if cluster and (redis_url is None or broker_url in (None, redis_url)):
        raise ValueError(
            "GEOSVC_REDIS_CLUSTER=true needs GEOSVC_REDIS_URL (a node of the cluster) and "
            "GEOSVC_BROKER_URL (RabbitMQ, amqp://...): Celery's Redis broker cannot use "
            "a cluster"
        )
    if sentinels:
        sentinel_addresses(sentinels)  # refuses a malformed list
        if cluster or redis_url is None or broker_url is None:
            raise ValueError(
                "GEOSVC_REDIS_SENTINELS needs GEOSVC_REDIS_URL (its database and password), "
                "GEOSVC_BROKER_URL (RabbitMQ, amqp://...) and no GEOSVC_REDIS_CLUSTER"
            )
