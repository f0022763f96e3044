from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error import Error
from ...types import UNSET, Response, Unset


def _get_kwargs(
    image_id: str,
    *,
    expires: str | Unset = UNSET,
    signature: str | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["expires"] = expires

    params["signature"] = signature

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/static-map/images/{image_id}".format(
            image_id=quote(str(image_id), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Error | None:
    if response.status_code == 401:
        response_401 = Error.from_dict(response.json())

        return response_401

    if response.status_code == 404:
        response_404 = Error.from_dict(response.json())

        return response_404

    if response.status_code == 422:
        response_422 = Error.from_dict(response.json())

        return response_422

    if response.status_code == 429:
        response_429 = Error.from_dict(response.json())

        return response_429

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[Error]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    image_id: str,
    *,
    client: AuthenticatedClient,
    expires: str | Unset = UNSET,
    signature: str | Unset = UNSET,
) -> Response[Error]:
    """A linked map image

     The PNG of a `static_map` answered over MCP as a `resource_link` (an image larger than the inline
    cap). With the link's `expires` and `signature` it needs no key until it expires; without them, only
    the key of the account that drew it. Costs no credit; limited instead to
    GEOSVC_MAP_LINK_FETCHES_PER_LINK fetches of one link and GEOSVC_MAP_LINK_FETCHES_PER_IP per
    GEOSVC_MAP_LINK_FETCH_WINDOW_S from one client address (429 RATE_LIMITED over either). No answer may
    be stored by a cache (`Cache-Control: private, no-store`).

    Args:
        image_id (str):
        expires (str | Unset):
        signature (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error]
    """

    kwargs = _get_kwargs(
        image_id=image_id,
        expires=expires,
        signature=signature,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    image_id: str,
    *,
    client: AuthenticatedClient,
    expires: str | Unset = UNSET,
    signature: str | Unset = UNSET,
) -> Error | None:
    """A linked map image

     The PNG of a `static_map` answered over MCP as a `resource_link` (an image larger than the inline
    cap). With the link's `expires` and `signature` it needs no key until it expires; without them, only
    the key of the account that drew it. Costs no credit; limited instead to
    GEOSVC_MAP_LINK_FETCHES_PER_LINK fetches of one link and GEOSVC_MAP_LINK_FETCHES_PER_IP per
    GEOSVC_MAP_LINK_FETCH_WINDOW_S from one client address (429 RATE_LIMITED over either). No answer may
    be stored by a cache (`Cache-Control: private, no-store`).

    Args:
        image_id (str):
        expires (str | Unset):
        signature (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error
    """

    return sync_detailed(
        image_id=image_id,
        client=client,
        expires=expires,
        signature=signature,
    ).parsed


async def asyncio_detailed(
    image_id: str,
    *,
    client: AuthenticatedClient,
    expires: str | Unset = UNSET,
    signature: str | Unset = UNSET,
) -> Response[Error]:
    """A linked map image

     The PNG of a `static_map` answered over MCP as a `resource_link` (an image larger than the inline
    cap). With the link's `expires` and `signature` it needs no key until it expires; without them, only
    the key of the account that drew it. Costs no credit; limited instead to
    GEOSVC_MAP_LINK_FETCHES_PER_LINK fetches of one link and GEOSVC_MAP_LINK_FETCHES_PER_IP per
    GEOSVC_MAP_LINK_FETCH_WINDOW_S from one client address (429 RATE_LIMITED over either). No answer may
    be stored by a cache (`Cache-Control: private, no-store`).

    Args:
        image_id (str):
        expires (str | Unset):
        signature (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error]
    """

    kwargs = _get_kwargs(
        image_id=image_id,
        expires=expires,
        signature=signature,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    image_id: str,
    *,
    client: AuthenticatedClient,
    expires: str | Unset = UNSET,
    signature: str | Unset = UNSET,
) -> Error | None:
    """A linked map image

     The PNG of a `static_map` answered over MCP as a `resource_link` (an image larger than the inline
    cap). With the link's `expires` and `signature` it needs no key until it expires; without them, only
    the key of the account that drew it. Costs no credit; limited instead to
    GEOSVC_MAP_LINK_FETCHES_PER_LINK fetches of one link and GEOSVC_MAP_LINK_FETCHES_PER_IP per
    GEOSVC_MAP_LINK_FETCH_WINDOW_S from one client address (429 RATE_LIMITED over either). No answer may
    be stored by a cache (`Cache-Control: private, no-store`).

    Args:
        image_id (str):
        expires (str | Unset):
        signature (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error
    """

    return (
        await asyncio_detailed(
            image_id=image_id,
            client=client,
            expires=expires,
            signature=signature,
        )
    ).parsed
