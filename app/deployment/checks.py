"""Every reason a deployment would refuse to start, collected at once.

The processes refuse one way each: Settings refuses its fields and the production rules
(app/kit/production.py), `geosvc api`/`worker` a missing metrics token, `geosvc flower` a
missing password, nginx a missing certificate. `geosvc check-config` asks all of them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from cryptography import x509
from pydantic import ValidationError

from app.kit.config import Settings
from app.kit.production import ProductionRefused

# A certificate that ends sooner than this is reported (renewal is due; the alert rule
# in deploy/alerts.yml says the same from the outside).
CERTIFICATE_MARGIN = timedelta(days=14)
TLS_FILES = ("fullchain.pem", "privkey.pem")


def validation_problems(exc: ValidationError) -> tuple[list[str], set[str], bool]:
    """(problems, names of the fields that failed, whether the production rules refused)."""
    problems: list[str] = []
    fields: set[str] = set()
    refused = False
    for error in exc.errors():
        production = (error.get("ctx") or {}).get("error")
        if isinstance(production, ProductionRefused):
            problems.extend(production.problems)
            refused = True
            continue
        field = str(error["loc"][0]) if error["loc"] else ""
        fields.add(field)
        message = str(error["msg"]).removeprefix("Value error, ")
        name = f"GEOSVC_{field.upper()}" if field else "settings"
        problems.append(message if name in message else f"{name}: {message}")
    return problems, fields, refused


def settings_problems(overrides: dict[str, Any]) -> tuple[Settings | None, list[str]]:
    """Settings from the environment (and .env), and everything they refuse. A field that
    fails is replaced by its default, so the production rules are judged too; then the
    settings are built once more without those rules, for the processes' own checks."""
    try:
        return Settings(**overrides), []
    except ValidationError as exc:
        problems, fields, refused = validation_problems(exc)
    defaults = {name: Settings.model_fields[name].default for name in fields if name}
    if not refused:
        try:
            return Settings(**overrides, **defaults), problems
        except ValidationError as exc:
            more, _, refused = validation_problems(exc)
            problems += [problem for problem in more if problem not in problems]
    try:
        relaxed = Settings(**{**overrides, **defaults, "env": "development"})
    except ValidationError:
        return None, problems
    return relaxed.model_copy(update={"env": "production"}), problems


def process_problems(settings: Settings) -> list[str]:
    """Refusals the processes make themselves, outside Settings."""
    if settings.is_development:
        return []
    problems = []
    # as app/observability/exposition.py judges it (not imported: it reads get_settings())
    if settings.metrics_token is None or not settings.metrics_token.get_secret_value():
        problems.append(
            "GEOSVC_METRICS_TOKEN must be set in production: `geosvc api` and `geosvc worker` "
            "refuse to serve /metrics without it"
        )
    if settings.flower_auth is None or not settings.flower_auth.get_secret_value():
        problems.append(
            "GEOSVC_FLOWER_AUTH (user:password) must be set in production: `geosvc flower` "
            "refuses to start without it (Flower shows users' tool arguments and results)"
        )
    return problems


def tls_problems(directory: Path, now: datetime | None = None) -> list[str]:
    """The certificate nginx loads (deploy/nginx.conf): present, readable, not ending soon."""
    missing = [name for name in TLS_FILES if not (directory / name).is_file()]
    if missing:
        return [
            f"{directory}/{name} is missing: the proxy (nginx) refuses to start without it "
            "(docs/DEPLOYMENT.md, TLS)"
            for name in missing
        ]
    try:
        certificate = x509.load_pem_x509_certificate((directory / "fullchain.pem").read_bytes())
    except (OSError, ValueError) as exc:
        return [f"{directory}/fullchain.pem is not a PEM certificate: {exc}"]
    ends = certificate.not_valid_after_utc
    left = ends - (now or datetime.now(UTC))
    if left < CERTIFICATE_MARGIN:
        return [f"{directory}/fullchain.pem ends {ends:%Y-%m-%d %H:%M} UTC: renew it"]
    return []


def deployment_problems(*, production: bool, tls_dir: Path | None) -> list[str]:
    settings, problems = settings_problems({"env": "production"} if production else {})
    if settings is not None:
        problems += process_problems(settings)
    if tls_dir is not None:
        problems += tls_problems(tls_dir)
    return problems
