"""A real SMTP server on 127.0.0.1 (aiosmtpd) that keeps what it receives: the outside
world's mail server, for the e-mail tests.

It can offer STARTTLS with a throw-away certificate (`self_signed_tls`, made by the
`openssl` command; trust it with SSL_CERT_FILE), require a login, and answer every
message with a fault code (451: try later; 550: never) to test retries. Messages are
parsed as the recipient would see them; `link` and `token` read a dashboard link and
the one-time token in its fragment.
"""

from __future__ import annotations

import re
import shutil
import ssl
import subprocess
import threading
import time
from dataclasses import dataclass
from email import message_from_bytes, policy
from email.message import EmailMessage
from pathlib import Path
from typing import Any

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP, AuthResult, Envelope, LoginPassword, Session

from app.kit.embedded_redis import free_port

MAIL_FROM = "Geospatial Data Service <no-reply@geosvc.test>"
_LINK = re.compile(r"https?://\S+")


@dataclass(frozen=True)
class Received:
    mail_from: str
    rcpt_tos: list[str]
    message: EmailMessage
    over_tls: bool
    authenticated: bool

    @property
    def subject(self) -> str:
        return str(self.message["Subject"])

    @property
    def text(self) -> str:
        part = self.message.get_body(("plain",))
        assert part is not None
        return str(part.get_content()).replace("\r\n", "\n")  # type: ignore[attr-defined]

    def links(self) -> list[str]:
        return _LINK.findall(self.text)

    def link(self, path: str) -> str:
        """The first link to `path` (e.g. /dashboard/confirm-email)."""
        found = [url for url in self.links() if path in url]
        assert found, f"no link to {path} in:\n{self.text}"
        return found[0]

    def token(self, path: str) -> str:
        """The one-time token in the fragment of the link to `path`."""
        url = self.link(path)
        assert "#t=" in url, url
        assert "?" not in url, url  # never in a query parameter
        return url.split("#t=", 1)[1]


class _Keeper:
    def __init__(self, smtp: FakeSmtp) -> None:
        self.smtp = smtp

    async def handle_DATA(self, _server: SMTP, session: Session, envelope: Envelope) -> str:
        if self.smtp.fault is not None:
            with self.smtp.lock:
                self.smtp.refused += 1
            return f"{self.smtp.fault} fault injected by the test"
        content = envelope.content if isinstance(envelope.content, bytes) else b""
        message = message_from_bytes(content, policy=policy.default)
        assert isinstance(message, EmailMessage)
        received = Received(
            mail_from=str(envelope.mail_from),
            rcpt_tos=[str(to) for to in envelope.rcpt_tos],
            message=message,
            over_tls=session.ssl is not None,
            authenticated=bool(session.authenticated),
        )
        with self.smtp.lock:
            self.smtp.received.append(received)
        return "250 OK"


class FakeSmtp:
    def __init__(
        self, *, tls: ssl.SSLContext | None = None, login: tuple[str, str] | None = None
    ) -> None:
        self.port = free_port()
        self.login = login
        self.received: list[Received] = []
        self.lock = threading.Lock()
        self.fault: int | None = None  # answer every message with this code
        self.refused = 0  # messages answered with the fault
        options: dict[str, Any] = {}
        if tls is not None:
            options["tls_context"] = tls
        if login is not None:
            options["authenticator"] = self._authenticate
            options["auth_require_tls"] = tls is not None
        self._controller = Controller(
            _Keeper(self), hostname="127.0.0.1", port=self.port, ready_timeout=10, **options
        )

    def _authenticate(
        self, _server: SMTP, _session: Session, _envelope: Envelope, _mechanism: str, data: Any
    ) -> AuthResult:
        ok = isinstance(data, LoginPassword) and self.login == (
            data.login.decode(),
            data.password.decode(),
        )
        return AuthResult(success=ok, handled=False)  # the server answers 235 or 535

    def start(self) -> FakeSmtp:
        self._controller.start()
        return self

    def stop(self) -> None:
        self._controller.stop()

    @property
    def url(self) -> str:
        auth = f"{self.login[0]}:{self.login[1]}@" if self.login else ""
        return f"smtp://{auth}127.0.0.1:{self.port}"

    def env(self) -> dict[str, str]:
        return {"GEOSVC_SMTP_URL": self.url, "GEOSVC_MAIL_FROM": MAIL_FROM}

    def messages(self, to: str | None = None) -> list[Received]:
        with self.lock:
            return [m for m in self.received if to is None or to in m.rcpt_tos]

    def wait_for(
        self, to: str, subject: str = "", *, count: int = 1, deadline_s: float = 30.0
    ) -> Received:
        """The `count`-th message to `to` whose subject contains `subject` (polls)."""
        deadline = time.monotonic() + deadline_s
        while True:
            found = [m for m in self.messages(to) if subject in m.subject]
            if len(found) >= count:
                return found[count - 1]
            if time.monotonic() > deadline:
                subjects = [m.subject for m in self.messages(to)]
                raise AssertionError(f"no message {subject!r} #{count} to {to}: {subjects}")
            time.sleep(0.05)


def self_signed_tls(directory: Path) -> tuple[ssl.SSLContext, Path] | None:
    """A server context with a certificate for 127.0.0.1 and the certificate's path (for
    SSL_CERT_FILE), or None without the `openssl` command."""
    openssl = shutil.which("openssl")
    if openssl is None:
        return None
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(
        [openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"]
        + ["-keyout", str(key), "-out", str(cert), "-subj", "/CN=127.0.0.1"]
        + ["-addext", "subjectAltName=IP:127.0.0.1"],
        check=True,
        capture_output=True,
    )
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    return context, cert
