"""What a credential looks like outside its header, for the parts that refuse or redact it:
the prefixes of the secrets the service issues and the query-parameter names that carry
secrets."""

from __future__ import annotations

import re

API_KEY_PREFIX = "svc_live_ak_"
# A test-mode key (`env` "test"): real data, its own counter, never billed.
TEST_API_KEY_PREFIX = "svc_test_ak_"
# A request with two Authorization headers is refused: a proxy in front may have read
# the other one.
ONE_AUTHORIZATION = "Send one Authorization header, not several"
# OAuth secrets the service issues (app/oauth): prefixed like keys, so a URL holding one
# is refused and a log line holding one is redacted wherever it appears.
ACCESS_TOKEN_PREFIX = "svc_at_"
REFRESH_TOKEN_PREFIX = "svc_rt_"
AUTHORIZATION_CODE_PREFIX = "svc_ac_"
SECRET_PREFIXES = (
    API_KEY_PREFIX,
    TEST_API_KEY_PREFIX,
    ACCESS_TOKEN_PREFIX,
    REFRESH_TOKEN_PREFIX,
    AUTHORIZATION_CODE_PREFIX,
)

# What a bearer credential is, for every part that reads one: the api (API keys, OAuth
# access tokens, the metrics token) and the proxy in front (deploy/nginx.conf's map keys
# its per-credential limit on the same shape): the scheme in any case (RFC 9110), then
# spaces or tabs, then the credential (visible ASCII), nothing after it but spaces or
# tabs. ASCII only: str.strip() would also take a no-break space or U+2028 as
# whitespace, which nginx's map does not, and a header the two read differently would
# escape the proxy's per-credential limit.
_BEARER = re.compile(r"[ \t]*bearer[ \t]+([!-~]+)[ \t]*", re.IGNORECASE | re.ASCII)


def bearer_credential(authorization: str | None) -> str | None:
    """The credential of an `Authorization: Bearer <credential>` header value, or None
    for any other value (missing, empty, another scheme, a malformed one)."""
    if authorization is None:
        return None
    match = _BEARER.fullmatch(authorization)
    return match.group(1) if match else None


# Refused in any URL (app.http.guards) and redacted from any logged URL (logs). OAuth's
# secrets go in POST bodies (RFC 6749, OAuth 2.1 forbids tokens in query strings), so
# none of the OAuth endpoints needs one of these in its URL.
CREDENTIAL_PARAMS = frozenset(
    {"api_key", "apikey", "api-key", "key", "token", "access_token", "auth", "authorization"}
    | {"password", "secret", "session", "svc_session"}
    | {"refresh_token", "client_secret", "code_verifier"}
)
# Redacted from logged URLs but not refused: `code` is the authorization code in the
# query of a *client's* redirect URI, and a harmless word in anyone else's.
# `signature`: of a map image's link (app.tool_calls.images), which fetches the image.
REDACTED_PARAMS = CREDENTIAL_PARAMS | {"code", "signature"}
