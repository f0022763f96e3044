"""What a credential looks like outside its header, for the parts that refuse or redact it:
the API key's prefix and the query-parameter names that carry secrets."""

from __future__ import annotations

API_KEY_PREFIX = "svc_live_ak_"

# Refused in any URL (app.http.guards) and redacted from any logged URL (logs).
CREDENTIAL_PARAMS = frozenset(
    {"api_key", "apikey", "api-key", "key", "token", "access_token", "auth", "authorization"}
    | {"password", "secret", "session", "svc_session"}
)
