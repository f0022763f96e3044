from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error import Error
from ...models.static_map_json import StaticMapJson
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    center: str | Unset = UNSET,
    zoom: int | Unset = UNSET,
    bbox: str | Unset = UNSET,
    markers: list[str] | Unset = UNSET,
    path: str | Unset = UNSET,
    path_color: str | Unset = "blue",
    path_width: int | Unset = 3,
    width: int | Unset = 600,
    height: int | Unset = 400,
    choropleth: str | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["center"] = center

    params["zoom"] = zoom

    params["bbox"] = bbox

    json_markers: list[str] | Unset = UNSET
    if not isinstance(markers, Unset):
        json_markers = markers

    params["markers"] = json_markers

    params["path"] = path

    params["path_color"] = path_color

    params["path_width"] = path_width

    params["width"] = width

    params["height"] = height

    params["choropleth"] = choropleth

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/static-map",
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Error | StaticMapJson | None:
    if response.status_code == 200:
        response_200 = StaticMapJson.from_dict(response.json())

        return response_200

    if response.status_code == 400:
        response_400 = Error.from_dict(response.json())

        return response_400

    if response.status_code == 401:
        response_401 = Error.from_dict(response.json())

        return response_401

    if response.status_code == 402:
        response_402 = Error.from_dict(response.json())

        return response_402

    if response.status_code == 403:
        response_403 = Error.from_dict(response.json())

        return response_403

    if response.status_code == 404:
        response_404 = Error.from_dict(response.json())

        return response_404

    if response.status_code == 410:
        response_410 = Error.from_dict(response.json())

        return response_410

    if response.status_code == 414:
        response_414 = Error.from_dict(response.json())

        return response_414

    if response.status_code == 422:
        response_422 = Error.from_dict(response.json())

        return response_422

    if response.status_code == 429:
        response_429 = Error.from_dict(response.json())

        return response_429

    if response.status_code == 503:
        response_503 = Error.from_dict(response.json())

        return response_503

    if response.status_code == 504:
        response_504 = Error.from_dict(response.json())

        return response_504

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[Error | StaticMapJson]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    center: str | Unset = UNSET,
    zoom: int | Unset = UNSET,
    bbox: str | Unset = UNSET,
    markers: list[str] | Unset = UNSET,
    path: str | Unset = UNSET,
    path_color: str | Unset = "blue",
    path_width: int | Unset = 3,
    width: int | Unset = 600,
    height: int | Unset = 400,
    choropleth: str | Unset = UNSET,
) -> Response[Error | StaticMapJson]:
    """Draw a map

     A PNG map (Web Mercator): borders, place labels (no streets), markers, a path, a choropleth. Give
    `center` and `zoom` (0 world - 12 town), or `markers`, `path`, `bbox` to fit. Costs 1 credit; errors
    free. Answers the PNG image, or, with `Accept: application/json`, the result with the image in
    base64 (`pngBase64`).

    Args:
        center (str | Unset):
        zoom (int | Unset):
        bbox (str | Unset):
        markers (list[str] | Unset):
        path (str | Unset):
        path_color (str | Unset):  Default: 'blue'.
        path_width (int | Unset):  Default: 3.
        width (int | Unset):  Default: 600.
        height (int | Unset):  Default: 400.
        choropleth (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | StaticMapJson]
    """

    kwargs = _get_kwargs(
        center=center,
        zoom=zoom,
        bbox=bbox,
        markers=markers,
        path=path,
        path_color=path_color,
        path_width=path_width,
        width=width,
        height=height,
        choropleth=choropleth,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient | Client,
    center: str | Unset = UNSET,
    zoom: int | Unset = UNSET,
    bbox: str | Unset = UNSET,
    markers: list[str] | Unset = UNSET,
    path: str | Unset = UNSET,
    path_color: str | Unset = "blue",
    path_width: int | Unset = 3,
    width: int | Unset = 600,
    height: int | Unset = 400,
    choropleth: str | Unset = UNSET,
) -> Error | StaticMapJson | None:
    """Draw a map

     A PNG map (Web Mercator): borders, place labels (no streets), markers, a path, a choropleth. Give
    `center` and `zoom` (0 world - 12 town), or `markers`, `path`, `bbox` to fit. Costs 1 credit; errors
    free. Answers the PNG image, or, with `Accept: application/json`, the result with the image in
    base64 (`pngBase64`).

    Args:
        center (str | Unset):
        zoom (int | Unset):
        bbox (str | Unset):
        markers (list[str] | Unset):
        path (str | Unset):
        path_color (str | Unset):  Default: 'blue'.
        path_width (int | Unset):  Default: 3.
        width (int | Unset):  Default: 600.
        height (int | Unset):  Default: 400.
        choropleth (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | StaticMapJson
    """

    return sync_detailed(
        client=client,
        center=center,
        zoom=zoom,
        bbox=bbox,
        markers=markers,
        path=path,
        path_color=path_color,
        path_width=path_width,
        width=width,
        height=height,
        choropleth=choropleth,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    center: str | Unset = UNSET,
    zoom: int | Unset = UNSET,
    bbox: str | Unset = UNSET,
    markers: list[str] | Unset = UNSET,
    path: str | Unset = UNSET,
    path_color: str | Unset = "blue",
    path_width: int | Unset = 3,
    width: int | Unset = 600,
    height: int | Unset = 400,
    choropleth: str | Unset = UNSET,
) -> Response[Error | StaticMapJson]:
    """Draw a map

     A PNG map (Web Mercator): borders, place labels (no streets), markers, a path, a choropleth. Give
    `center` and `zoom` (0 world - 12 town), or `markers`, `path`, `bbox` to fit. Costs 1 credit; errors
    free. Answers the PNG image, or, with `Accept: application/json`, the result with the image in
    base64 (`pngBase64`).

    Args:
        center (str | Unset):
        zoom (int | Unset):
        bbox (str | Unset):
        markers (list[str] | Unset):
        path (str | Unset):
        path_color (str | Unset):  Default: 'blue'.
        path_width (int | Unset):  Default: 3.
        width (int | Unset):  Default: 600.
        height (int | Unset):  Default: 400.
        choropleth (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | StaticMapJson]
    """

    kwargs = _get_kwargs(
        center=center,
        zoom=zoom,
        bbox=bbox,
        markers=markers,
        path=path,
        path_color=path_color,
        path_width=path_width,
        width=width,
        height=height,
        choropleth=choropleth,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    center: str | Unset = UNSET,
    zoom: int | Unset = UNSET,
    bbox: str | Unset = UNSET,
    markers: list[str] | Unset = UNSET,
    path: str | Unset = UNSET,
    path_color: str | Unset = "blue",
    path_width: int | Unset = 3,
    width: int | Unset = 600,
    height: int | Unset = 400,
    choropleth: str | Unset = UNSET,
) -> Error | StaticMapJson | None:
    """Draw a map

     A PNG map (Web Mercator): borders, place labels (no streets), markers, a path, a choropleth. Give
    `center` and `zoom` (0 world - 12 town), or `markers`, `path`, `bbox` to fit. Costs 1 credit; errors
    free. Answers the PNG image, or, with `Accept: application/json`, the result with the image in
    base64 (`pngBase64`).

    Args:
        center (str | Unset):
        zoom (int | Unset):
        bbox (str | Unset):
        markers (list[str] | Unset):
        path (str | Unset):
        path_color (str | Unset):  Default: 'blue'.
        path_width (int | Unset):  Default: 3.
        width (int | Unset):  Default: 600.
        height (int | Unset):  Default: 400.
        choropleth (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | StaticMapJson
    """

    return (
        await asyncio_detailed(
            client=client,
            center=center,
            zoom=zoom,
            bbox=bbox,
            markers=markers,
            path=path,
            path_color=path_color,
            path_width=path_width,
            width=width,
            height=height,
            choropleth=choropleth,
        )
    ).parsed
