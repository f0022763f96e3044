"""Sending one message: SMTP from `GEOSVC_SMTP_URL`, or the log without it.

`smtp://user:password@host:587` connects in plain text and upgrades with STARTTLS when
the server offers it; `smtps://...:465` speaks TLS from the start. A password is never
sent over a connection that is not encrypted, except to a loopback address (a relay on
the same host). Without `GEOSVC_SMTP_URL` (development only: production refuses to
start) the whole message, links included, is written to the log at WARNING, which is
what `make run` shows.

Failures are sorted for the Celery task's retries: a connection problem, a timeout or a
4xx answer is `MailDeferred` (try again later); a 5xx answer (an address the server
will never accept) is `MailRefused`, not retried. Nothing here logs an address's local
part, a link or a password.
"""

from __future__ import annotations

import ipaddress
import logging
import smtplib
import ssl
from dataclasses import dataclass
from email.message import EmailMessage
from email.utils import formatdate, make_msgid, parseaddr
from urllib.parse import unquote, urlsplit

from app.kit.config import Settings, get_settings

logger = logging.getLogger(__name__)

DEFAULT_PORTS = {"smtp": 587, "smtps": 465}


class MailDeferred(Exception):
    """The message may go through later (server down or busy, 4xx); retried."""


class MailRefused(Exception):
    """The server will not take this message (5xx); retrying would not help."""


@dataclass(frozen=True)
class Message:
    to: str
    subject: str
    text: str
    kind: str  # what it is (e.g. "password_reset"), for the log line


@dataclass(frozen=True)
class SmtpServer:
    scheme: str
    host: str
    port: int
    username: str | None
    password: str | None

    @property
    def is_loopback(self) -> bool:
        if self.host == "localhost":
            return True
        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return False


def parse_smtp_url(url: str) -> SmtpServer:
    """`smtp[s]://[user[:password]@]host[:port]` (user and password percent-encoded)."""
    parts = urlsplit(url)
    if parts.scheme not in DEFAULT_PORTS or not parts.hostname:
        raise ValueError("GEOSVC_SMTP_URL must look like smtp://user:password@host:587 or smtps://")
    return SmtpServer(
        scheme=parts.scheme,
        host=parts.hostname,
        port=parts.port or DEFAULT_PORTS[parts.scheme],
        username=unquote(parts.username) if parts.username else None,
        password=unquote(parts.password) if parts.password else None,
    )


def startup_line(settings: Settings) -> str:
    """What the processes say at start-up about mail (never the password)."""
    if settings.smtp_url is None:
        return (
            "mail: no GEOSVC_SMTP_URL, so e-mails are written to the worker's log instead "
            "of sent, and sign-ups are verified at once (no confirmation link)"
        )
    server = parse_smtp_url(settings.smtp_url.get_secret_value())
    return (
        f"mail: sent through {server.scheme}://{server.host}:{server.port}; new accounts "
        "confirm their e-mail address before their keys make data calls"
    )


def build(message: Message, sender: str) -> EmailMessage:
    email = EmailMessage()
    email["From"] = sender
    email["To"] = message.to
    email["Subject"] = message.subject
    email["Date"] = formatdate(usegmt=True)
    domain = parseaddr(sender)[1].rpartition("@")[2] or None
    email["Message-ID"] = make_msgid(domain=domain)
    email["Auto-Submitted"] = "auto-generated"  # RFC 3834: no vacation replies to us
    email.set_content(message.text)
    return email


def send(message: Message, settings: Settings | None = None) -> None:
    settings = settings or get_settings()
    email = build(message, settings.mail_from)
    if settings.smtp_url is None:
        logger.warning(
            "mail not sent (no GEOSVC_SMTP_URL); this is it:\n%s",
            email.as_string(),
            extra={"event": "mail_logged", "kind": message.kind},
        )
        return
    server = parse_smtp_url(settings.smtp_url.get_secret_value())
    try:
        _deliver(server, email, settings.smtp_timeout_s)
    except smtplib.SMTPResponseException as exc:
        raise _classified(exc.smtp_code, message.kind) from None
    except smtplib.SMTPRecipientsRefused as exc:
        codes = [code for code, _text in exc.recipients.values()]
        raise _classified(min(codes, default=550), message.kind) from None
    except (smtplib.SMTPException, OSError) as exc:  # refused, reset, timed out, TLS failed
        raise MailDeferred(f"{message.kind}: {type(exc).__name__}") from None
    logger.info("mail sent: %s", message.kind, extra={"event": "mail_sent", "kind": message.kind})


def _classified(code: int, kind: str) -> MailDeferred | MailRefused:
    """Only the status code: a server's text may quote the address."""
    if 400 <= code < 500:
        return MailDeferred(f"{kind}: the server answered {code}")
    return MailRefused(f"{kind}: the server answered {code}")


def _deliver(server: SmtpServer, email: EmailMessage, timeout_s: float) -> None:
    tls = ssl.create_default_context()
    client: smtplib.SMTP
    if server.scheme == "smtps":
        client = smtplib.SMTP_SSL(server.host, server.port, timeout=timeout_s, context=tls)
    else:
        client = smtplib.SMTP(server.host, server.port, timeout=timeout_s)
    with client:
        client.ehlo()
        encrypted = server.scheme == "smtps"
        if not encrypted and client.has_extn("starttls"):
            client.starttls(context=tls)
            client.ehlo()
            encrypted = True
        if server.username is not None:
            if not encrypted and not server.is_loopback:
                raise MailRefused(
                    "the SMTP server offers no STARTTLS: not sending the password in clear "
                    "(use smtps:// or a server with STARTTLS)"
                )
            client.login(server.username, server.password or "")
        client.send_message(email)
