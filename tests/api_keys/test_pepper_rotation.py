"""Rotating GEOSVC_SECRET_PEPPER without invalidating the keys in use (issue 38, item 5):
with the old pepper as GEOSVC_SECRET_PEPPER_PREVIOUS a key still verifies and is hashed
again under the new pepper on that use; once the previous pepper is removed, keys used
during the overlap keep working and the others are refused. Real api processes on the
backend's database, restarted as a deployment restarts them."""

from __future__ import annotations

import hashlib
import hmac
import time
from pathlib import Path

import httpx
import pytest
from sqlmodel import Session, create_engine, select

from app.kit.db import normalise_url
from app.models import ApiKey
from tests.support.factories import mcp_initialize, sign_up
from tests.support.fixtures import Backend
from tests.support.live_server import LiveServer, start_live_server

OLD = "pepper-before-the-rotation-32-bytes-long"
NEW = "pepper-after-the-rotation-also-32-bytes-long"


def serve(backend: Backend, tmp_path: Path, name: str, **env: str) -> LiveServer:
    return start_live_server(backend.env(**env), tmp_path / f"{name}.log")


def initialize(server: LiveServer, key: str) -> int:
    return mcp_initialize(server.url, key).status_code


def stored_hash(backend: Backend, key_id: str) -> str:
    engine = create_engine(normalise_url(backend.database_url))
    try:
        with Session(engine) as session:
            return session.exec(select(ApiKey.secret_hash).where(ApiKey.key_id == key_id)).one()
    finally:
        engine.dispose()


def key_id(key: str) -> str:
    return key.removeprefix("svc_live_ak_").split("_", 1)[0]


def digest(pepper: str, key: str) -> str:
    secret = key.rsplit("_", 1)[1]
    return hmac.new(pepper.encode(), secret.encode(), hashlib.sha256).hexdigest()


class TestPepperRotation:
    def test_keys_used_during_the_overlap_survive_it(
        self, backend: Backend, tmp_path: Path
    ) -> None:
        before = serve(backend, tmp_path, "before", GEOSVC_SECRET_PEPPER=OLD)
        try:
            with httpx.Client(base_url=before.url, timeout=30) as http:
                sign_up(http)
                used = http.post("/api-keys", json={"name": "used"}).json()
                idle = http.post("/api-keys", json={"name": "idle"}).json()
        finally:
            before.stop()
        used_key, idle_key = used["plaintext"], idle["plaintext"]
        used_id, idle_id = key_id(used_key), key_id(idle_key)
        assert stored_hash(backend, used_id) == digest(OLD, used_key)

        overlap = serve(
            backend,
            tmp_path,
            "overlap",
            GEOSVC_SECRET_PEPPER=NEW,
            GEOSVC_SECRET_PEPPER_PREVIOUS=OLD,
        )
        try:
            assert initialize(overlap, used_key) == 200
            deadline = time.monotonic() + 15
            while stored_hash(backend, used_id) != digest(NEW, used_key):
                assert time.monotonic() < deadline, "the used key was not re-hashed"
                time.sleep(0.05)
            assert initialize(overlap, used_key) == 200
        finally:
            overlap.stop()
        assert stored_hash(backend, idle_id) == digest(OLD, idle_key)  # never used

        after = serve(backend, tmp_path, "after", GEOSVC_SECRET_PEPPER=NEW)
        try:
            assert initialize(after, used_key) == 200
            assert initialize(after, idle_key) in (401, 403)  # the documented cost
        finally:
            after.stop()

    @pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
    def test_a_wrong_secret_is_refused_under_either_pepper(
        self, backend: Backend, tmp_path: Path
    ) -> None:
        server = serve(
            backend, tmp_path, "wrong", GEOSVC_SECRET_PEPPER=NEW, GEOSVC_SECRET_PEPPER_PREVIOUS=OLD
        )
        try:
            with httpx.Client(base_url=server.url, timeout=30) as http:
                sign_up(http)
                key = http.post("/api-keys", json={"name": "k"}).json()["plaintext"]
            assert initialize(server, key) == 200
            assert initialize(server, key[:-1] + ("A" if key[-1] != "A" else "B")) in (401, 403)
        finally:
            server.stop()
