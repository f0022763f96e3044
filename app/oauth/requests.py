"""Authlib's request and response types over a plain description of an HTTP request:
Authlib has no integration for our framework, so the edge reads a request into an
`HttpRequest` and turns an `OAuthResponse` back into a Starlette response."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from authlib.oauth2.rfc6749 import OAuth2Request
from authlib.oauth2.rfc6749.requests import JsonPayload, OAuth2Payload


@dataclass(frozen=True)
class HttpRequest:
    """What the edge read of a request: the query (GET) or form body (POST) as pairs."""

    method: str
    uri: str
    headers: Mapping[str, str]
    pairs: list[tuple[str, str]] = field(default_factory=list)
    json_body: dict[str, Any] | None = None


@dataclass
class OAuthResponse:
    status: int
    body: Any
    headers: list[tuple[str, str]]

    @property
    def location(self) -> str | None:
        return next((v for k, v in self.headers if k.lower() == "location"), None)

    @location.setter
    def location(self, value: str) -> None:  # RFC 9207's extension adds `iss` here
        self.headers = [(k, v) for k, v in self.headers if k.lower() != "location"]
        self.headers.append(("Location", value))


class _Payload(OAuth2Payload):
    def __init__(self, pairs: list[tuple[str, str]]) -> None:
        datalist: defaultdict[str, list[str]] = defaultdict(list)
        for name, value in pairs:
            datalist[name].append(value)
        self._datalist = datalist
        self._data = {name: values[0] for name, values in datalist.items()}

    @property
    def data(self) -> dict[str, str]:
        return self._data

    @property
    def datalist(self) -> defaultdict[str, list[str]]:
        return self._datalist


class Request(OAuth2Request):
    def __init__(self, http: HttpRequest) -> None:
        super().__init__(http.method, http.uri, headers=http.headers)
        self.payload = _Payload(http.pairs)

    @property
    def args(self) -> dict[str, str]:
        return self.payload.data if self.method == "GET" else {}

    @property
    def form(self) -> dict[str, str]:
        return self.payload.data if self.method == "POST" else {}


class JsonRequestPayload(JsonPayload):
    def __init__(self, data: dict[str, Any]) -> None:
        self._data = data

    @property
    def data(self) -> dict[str, Any]:
        return self._data


def unsafe_parameter(pairs: list[tuple[str, str]]) -> str | None:
    """The first parameter (other than `state`, which is only echoed back) holding what no
    OAuth parameter holds: anything but printable ASCII, or a quote or backslash. Authlib
    quotes some values in its error descriptions, which may not contain those."""
    for name, value in pairs:
        if name != "state" and not all(" " <= c <= "~" and c not in '"\\' for c in value):
            return name
    return None
