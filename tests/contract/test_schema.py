"""The control plane's OpenAPI document itself (no server): every error answer a route
documents is the spec's envelope, and the session cookie is a security scheme."""

from __future__ import annotations

from typing import Any

import pytest

from app.kit.errors import ERROR_ENVELOPE_SCHEMA
from app.main import create_app

pytestmark = pytest.mark.contract


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    return create_app().openapi()


def operations(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        f"{method.upper()} {path}": operation
        for path, methods in document["paths"].items()
        for method, operation in methods.items()
    }


def test_every_error_answer_is_the_envelope(document: dict[str, Any]) -> None:
    not_the_envelope = {
        (name, status)
        for name, operation in operations(document).items()
        for status, answer in operation["responses"].items()
        if int(status) >= 400
        and answer["content"]["application/json"]["schema"]
        != {"$ref": "#/components/schemas/ErrorResponse"}
    }

    assert not_the_envelope == set()
    assert "HTTPValidationError" not in document["components"]["schemas"]
    # one envelope for every surface: the tools' error results and /v1 use it too
    assert document["components"]["schemas"]["ErrorResponse"] == ERROR_ENVELOPE_SCHEMA


def test_signed_in_operations_declare_the_session_and_its_401(document: dict[str, Any]) -> None:
    assert document["components"]["securitySchemes"]["session"] == {
        "type": "apiKey",
        "in": "cookie",
        "name": "svc_session",
        "description": "The dashboard session, set by POST /auth/signin or /auth/signup",
    }
    signed_in = {
        name for name, operation in operations(document).items() if operation.get("security")
    }
    public = {  # an account's entry points, and links followed from an e-mail
        "POST /auth/signup",
        "POST /auth/signin",
        "POST /auth/signout",
        "POST /auth/password-reset",
        "POST /auth/password-reset/confirm",
        "POST /auth/email/confirm",
    }
    assert signed_in == set(operations(document)) - public
    assert all("401" in operations(document)[name]["responses"] for name in signed_in)


def test_statuses_of_the_spec_are_documented(document: dict[str, Any]) -> None:
    """spec/interface-spec.md: 204 on revoke, 404 unknown key and no subscription to
    cancel, 409 a subscription already active; and POST /subscription's pending 200."""
    documented = {name: set(op["responses"]) for name, op in operations(document).items()}

    assert {"204", "404"} <= documented["DELETE /api-keys/{key_id}"]
    assert {"200", "201", "409"} <= documented["POST /subscription"]
    assert {"200", "404"} <= documented["DELETE /subscription"]
