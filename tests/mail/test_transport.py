"""The SMTP client against a real SMTP server on 127.0.0.1 (aiosmtpd), and the log sink
used without one."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import SecretStr

from app.kit.config import Settings
from app.kit.embedded_redis import free_port
from app.mail import transport
from app.mail.transport import MailDeferred, MailRefused, Message, parse_smtp_url
from tests.fakes.smtp import MAIL_FROM, FakeSmtp, self_signed_tls
from tests.support.services import REQUIRE_SERVICES

MESSAGE = Message(
    to="ada@example.com", subject="Hello", text="A line.\nhttps://x.test/p#t=abc\n", kind="test"
)


def settings_for(url: str | None) -> Settings:
    return Settings(smtp_url=SecretStr(url) if url else None, mail_from=MAIL_FROM)


@pytest.fixture
def smtp() -> Iterator[FakeSmtp]:
    server = FakeSmtp().start()
    yield server
    server.stop()


class TestPlainServer:
    def test_delivers_the_message_as_written(self, smtp: FakeSmtp) -> None:
        transport.send(MESSAGE, settings_for(smtp.url))

        received = smtp.wait_for("ada@example.com")
        assert received.mail_from == "no-reply@geosvc.test"
        assert received.message["From"] == MAIL_FROM
        assert received.subject == "Hello"
        assert received.message["Auto-Submitted"] == "auto-generated"
        assert received.message["Message-ID"].endswith("@geosvc.test>")
        assert received.text == MESSAGE.text
        assert received.over_tls is False

    def test_a_4xx_answer_is_retried_later(self, smtp: FakeSmtp) -> None:
        smtp.fault = 451
        with pytest.raises(MailDeferred, match="451"):
            transport.send(MESSAGE, settings_for(smtp.url))

    def test_a_5xx_answer_is_final(self, smtp: FakeSmtp) -> None:
        smtp.fault = 550
        with pytest.raises(MailRefused, match="550"):
            transport.send(MESSAGE, settings_for(smtp.url))

    def test_no_server_listening_is_retried_later(self) -> None:
        with pytest.raises(MailDeferred):
            transport.send(MESSAGE, settings_for(f"smtp://127.0.0.1:{free_port()}"))


class TestLogin:
    def test_logs_in_on_a_loopback_server_without_tls(self) -> None:
        server = FakeSmtp(login=("mailer", "s3cret p@ss")).start()
        try:
            url = f"smtp://mailer:s3cret%20p%40ss@127.0.0.1:{server.port}"
            transport.send(MESSAGE, settings_for(url))
            assert server.wait_for("ada@example.com").authenticated is True
        finally:
            server.stop()

    def test_a_wrong_password_is_final_and_not_repeated(self) -> None:
        server = FakeSmtp(login=("mailer", "right")).start()
        try:
            with pytest.raises(MailRefused) as refused:
                transport.send(
                    MESSAGE, settings_for(f"smtp://mailer:wrong@127.0.0.1:{server.port}")
                )
            assert "wrong" not in str(refused.value)
            assert server.messages() == []
        finally:
            server.stop()

    def test_never_sends_a_password_in_clear_to_a_remote_server(self) -> None:
        remote = parse_smtp_url("smtp://u:p@mail.example.com")
        assert (remote.port, remote.is_loopback) == (587, False)
        assert parse_smtp_url("smtps://u:p@127.0.0.1").port == 465
        assert parse_smtp_url("smtp://u:p@localhost:25").is_loopback


class TestStartTls:
    def test_upgrades_when_offered_and_logs_in_over_tls(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        made = self_signed_tls(tmp_path)
        if made is None:
            if REQUIRE_SERVICES:
                pytest.fail("the openssl command is missing (REQUIRE_SERVICES=1)")
            pytest.skip("the openssl command is missing")
        context, cert = made
        monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # trust the throw-away certificate
        server = FakeSmtp(tls=context, login=("mailer", "pw")).start()
        try:
            transport.send(MESSAGE, settings_for(f"smtp://mailer:pw@127.0.0.1:{server.port}"))
            received = server.wait_for("ada@example.com")
        finally:
            server.stop()
        assert received.over_tls is True
        assert received.authenticated is True

    def test_an_untrusted_certificate_is_not_used(self, tmp_path: Path) -> None:
        made = self_signed_tls(tmp_path)
        if made is None:
            pytest.skip("the openssl command is missing")
        server = FakeSmtp(tls=made[0]).start()
        try:
            with pytest.raises(MailDeferred, match="SSL"):
                transport.send(MESSAGE, settings_for(server.url))
            assert server.messages() == []
        finally:
            server.stop()


class TestLogSink:
    def test_without_smtp_the_whole_message_goes_to_the_log(
        self, caplog: pytest.LogCaptureFixture
    ) -> None:
        with caplog.at_level(logging.WARNING, logger="app.mail.transport"):
            transport.send(MESSAGE, settings_for(None))
        (record,) = caplog.records
        assert record.levelno == logging.WARNING
        assert "no GEOSVC_SMTP_URL" in record.getMessage()
        assert "https://x.test/p#t=abc" in record.getMessage()
        assert "To: ada@example.com" in record.getMessage()

    def test_start_up_line_says_where_mail_goes_without_the_password(self) -> None:
        assert "written to the worker's log" in transport.startup_line(settings_for(None))
        line = transport.startup_line(settings_for("smtp://mailer:hunter22@smtp.test:2525"))
        assert "smtp://smtp.test:2525" in line
        assert "hunter22" not in line
        assert "mailer" not in line
