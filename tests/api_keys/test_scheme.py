"""What a bearer credential is, the same for the api as for the proxy in front (issue 51,
item 1): the scheme in any case, then spaces or tabs, then the credential
(app/kit/credentials.py; deploy/nginx-limits.conf keys its per-credential limit on the same
shape, tests/test_proxy.py drives it). A header that nginx's map would not read, such as
a no-break space that Python's str.strip() takes for whitespace, is no credential here
either: otherwise it would reach the api past the proxy's per-credential limit."""

from __future__ import annotations

import httpx
import pytest

from app.tool_calls.images import IMAGES_PATH
from tests.api_keys.conftest import create_key
from tests.support.factories import mcp_initialize, sign_up
from tests.support.live_server import LiveServer

pytestmark = pytest.mark.parametrize("backend", ["sqlite"], indirect=True)

# Every spelling the proxy's map files under the key (tests/test_proxy.py sends these).
SPELLINGS = ["Bearer {}", "BEARER {}", "bearer {}", "Bearer  {}", "Bearer\t{}", "bEaReR \t {}"]
# Whitespace that str.strip() and str.split() know but HTTP and nginx do not.
NOT_CREDENTIALS = [b"Bearer \xa0{}", b"Bearer\xa0{}", b"Bearer \x85{}", b"Bearer {}\xa0"]
# An image no call drew: a caller whose key verifies is told 404, any other 401.
NO_SUCH_IMAGE = IMAGES_PATH + "/img_" + "0" * 24


@pytest.fixture
def key(http: httpx.Client) -> str:
    sign_up(http)
    return str(create_key(http)["plaintext"])


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_every_spelling_of_the_scheme_signs_in(
    live_server: LiveServer, http: httpx.Client, key: str, spelling: str
) -> None:
    authorization = spelling.format(key)
    v1 = http.get(NO_SUCH_IMAGE, headers={"Authorization": authorization})
    assert v1.status_code == 404, v1.text  # signed in: the image is what is missing
    assert mcp_initialize(live_server.url, authorization=authorization).status_code == 200


@pytest.mark.parametrize("spelling", NOT_CREDENTIALS)
def test_whitespace_nginx_does_not_know_is_no_separator(
    live_server: LiveServer, http: httpx.Client, key: str, spelling: bytes
) -> None:
    authorization = spelling.replace(b"{}", key.encode())
    v1 = http.get(NO_SUCH_IMAGE, headers={"Authorization": authorization})
    assert v1.status_code == 401, v1.text
    assert v1.json()["error"]["code"] == "UNAUTHENTICATED"
    assert mcp_initialize(live_server.url, authorization=authorization).status_code == 401
