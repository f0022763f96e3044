from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error import Error
from ...types import UNSET, Response, Unset


def _get_kwargs(
    z: str,
    x: str,
    y: str,
    *,
    account: str | Unset = UNSET,
    expires: str | Unset = UNSET,
    signature: str | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["account"] = account

    params["expires"] = expires

    params["signature"] = signature

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/tiles/{z}/{x}/{y}.png".format(
            z=quote(str(z), safe=""),
            x=quote(str(x), safe=""),
            y=quote(str(y), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Any | Error | None:
    if response.status_code == 304:
        response_304 = cast(Any, None)
        return response_304

    if response.status_code == 400:
        response_400 = Error.from_dict(response.json())

        return response_400

    if response.status_code == 401:
        response_401 = Error.from_dict(response.json())

        return response_401

    if response.status_code == 403:
        response_403 = Error.from_dict(response.json())

        return response_403

    if response.status_code == 404:
        response_404 = Error.from_dict(response.json())

        return response_404

    if response.status_code == 422:
        response_422 = Error.from_dict(response.json())

        return response_422

    if response.status_code == 429:
        response_429 = Error.from_dict(response.json())

        return response_429

    if response.status_code == 503:
        response_503 = Error.from_dict(response.json())

        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[Any | Error]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    z: str,
    x: str,
    y: str,
    *,
    client: AuthenticatedClient,
    account: str | Unset = UNSET,
    expires: str | Unset = UNSET,
    signature: str | Unset = UNSET,
) -> Response[Any | Error]:
    """A map tile

     A 256x256 Web Mercator PNG of the static maps' basemap (coast, lakes, rivers, borders, place names),
    zoom 0 to 12, for any XYZ map client. With a key, or with the `account`, `expires` and `signature`
    of the URL template a map call's MCP result carries in `_meta["geosvc/tiles"]` (no key needed until
    it expires). Costs no credit; limited to GEOSVC_TILE_FETCHES_PER_ACCOUNT per account and
    GEOSVC_TILE_FETCHES_PER_IP per client address per GEOSVC_TILE_FETCH_WINDOW_S (429 RATE_LIMITED over
    either). `Cache-Control: public` and an `ETag` (If-None-Match: 304).

    Args:
        z (str):
        x (str):
        y (str):
        account (str | Unset):
        expires (str | Unset):
        signature (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | Error]
    """

    kwargs = _get_kwargs(
        z=z,
        x=x,
        y=y,
        account=account,
        expires=expires,
        signature=signature,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    z: str,
    x: str,
    y: str,
    *,
    client: AuthenticatedClient,
    account: str | Unset = UNSET,
    expires: str | Unset = UNSET,
    signature: str | Unset = UNSET,
) -> Any | Error | None:
    """A map tile

     A 256x256 Web Mercator PNG of the static maps' basemap (coast, lakes, rivers, borders, place names),
    zoom 0 to 12, for any XYZ map client. With a key, or with the `account`, `expires` and `signature`
    of the URL template a map call's MCP result carries in `_meta["geosvc/tiles"]` (no key needed until
    it expires). Costs no credit; limited to GEOSVC_TILE_FETCHES_PER_ACCOUNT per account and
    GEOSVC_TILE_FETCHES_PER_IP per client address per GEOSVC_TILE_FETCH_WINDOW_S (429 RATE_LIMITED over
    either). `Cache-Control: public` and an `ETag` (If-None-Match: 304).

    Args:
        z (str):
        x (str):
        y (str):
        account (str | Unset):
        expires (str | Unset):
        signature (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | Error
    """

    return sync_detailed(
        z=z,
        x=x,
        y=y,
        client=client,
        account=account,
        expires=expires,
        signature=signature,
    ).parsed


async def asyncio_detailed(
    z: str,
    x: str,
    y: str,
    *,
    client: AuthenticatedClient,
    account: str | Unset = UNSET,
    expires: str | Unset = UNSET,
    signature: str | Unset = UNSET,
) -> Response[Any | Error]:
    """A map tile

     A 256x256 Web Mercator PNG of the static maps' basemap (coast, lakes, rivers, borders, place names),
    zoom 0 to 12, for any XYZ map client. With a key, or with the `account`, `expires` and `signature`
    of the URL template a map call's MCP result carries in `_meta["geosvc/tiles"]` (no key needed until
    it expires). Costs no credit; limited to GEOSVC_TILE_FETCHES_PER_ACCOUNT per account and
    GEOSVC_TILE_FETCHES_PER_IP per client address per GEOSVC_TILE_FETCH_WINDOW_S (429 RATE_LIMITED over
    either). `Cache-Control: public` and an `ETag` (If-None-Match: 304).

    Args:
        z (str):
        x (str):
        y (str):
        account (str | Unset):
        expires (str | Unset):
        signature (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | Error]
    """

    kwargs = _get_kwargs(
        z=z,
        x=x,
        y=y,
        account=account,
        expires=expires,
        signature=signature,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    z: str,
    x: str,
    y: str,
    *,
    client: AuthenticatedClient,
    account: str | Unset = UNSET,
    expires: str | Unset = UNSET,
    signature: str | Unset = UNSET,
) -> Any | Error | None:
    """A map tile

     A 256x256 Web Mercator PNG of the static maps' basemap (coast, lakes, rivers, borders, place names),
    zoom 0 to 12, for any XYZ map client. With a key, or with the `account`, `expires` and `signature`
    of the URL template a map call's MCP result carries in `_meta["geosvc/tiles"]` (no key needed until
    it expires). Costs no credit; limited to GEOSVC_TILE_FETCHES_PER_ACCOUNT per account and
    GEOSVC_TILE_FETCHES_PER_IP per client address per GEOSVC_TILE_FETCH_WINDOW_S (429 RATE_LIMITED over
    either). `Cache-Control: public` and an `ETag` (If-None-Match: 304).

    Args:
        z (str):
        x (str):
        y (str):
        account (str | Unset):
        expires (str | Unset):
        signature (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | Error
    """

    return (
        await asyncio_detailed(
            z=z,
            x=x,
            y=y,
            client=client,
            account=account,
            expires=expires,
            signature=signature,
        )
    ).parsed
