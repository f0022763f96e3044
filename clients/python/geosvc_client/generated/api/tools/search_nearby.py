from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error import Error
from ...models.search_nearby_category import SearchNearbyCategory
from ...models.search_nearby_order import SearchNearbyOrder
from ...models.search_nearby_result import SearchNearbyResult
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    lat: float,
    lon: float,
    radius_m: float | Unset = 5000.0,
    category: SearchNearbyCategory | Unset = SearchNearbyCategory.CITY,
    limit: int | Unset = 10,
    order: SearchNearbyOrder | Unset = SearchNearbyOrder.PROMINENCE,
    cursor: str | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["lat"] = lat

    params["lon"] = lon

    params["radius_m"] = radius_m

    json_category: str | Unset = UNSET
    if not isinstance(category, Unset):
        json_category = category.value

    params["category"] = json_category

    params["limit"] = limit

    json_order: str | Unset = UNSET
    if not isinstance(order, Unset):
        json_order = order.value

    params["order"] = json_order

    params["cursor"] = cursor

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/nearby",
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Error | SearchNearbyResult | None:
    if response.status_code == 200:
        response_200 = SearchNearbyResult.from_dict(response.json())

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
) -> Response[Error | SearchNearbyResult]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    lat: float,
    lon: float,
    radius_m: float | Unset = 5000.0,
    category: SearchNearbyCategory | Unset = SearchNearbyCategory.CITY,
    limit: int | Unset = 10,
    order: SearchNearbyOrder | Unset = SearchNearbyOrder.PROMINENCE,
    cursor: str | Unset = UNSET,
) -> Response[Error | SearchNearbyResult]:
    """Places near a point

     Places of one `category` within `radius_m` of a point, with `distanceM`, most prominent first
    (`order` "distance": nearest first). Categories here: city, airport, postal_code. NOT_FOUND when
    none is in range. Costs 1 credit; errors free.

    Args:
        lat (float):
        lon (float):
        radius_m (float | Unset):  Default: 5000.0.
        category (SearchNearbyCategory | Unset):  Default: SearchNearbyCategory.CITY.
        limit (int | Unset):  Default: 10.
        order (SearchNearbyOrder | Unset):  Default: SearchNearbyOrder.PROMINENCE.
        cursor (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | SearchNearbyResult]
    """

    kwargs = _get_kwargs(
        lat=lat,
        lon=lon,
        radius_m=radius_m,
        category=category,
        limit=limit,
        order=order,
        cursor=cursor,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient | Client,
    lat: float,
    lon: float,
    radius_m: float | Unset = 5000.0,
    category: SearchNearbyCategory | Unset = SearchNearbyCategory.CITY,
    limit: int | Unset = 10,
    order: SearchNearbyOrder | Unset = SearchNearbyOrder.PROMINENCE,
    cursor: str | Unset = UNSET,
) -> Error | SearchNearbyResult | None:
    """Places near a point

     Places of one `category` within `radius_m` of a point, with `distanceM`, most prominent first
    (`order` "distance": nearest first). Categories here: city, airport, postal_code. NOT_FOUND when
    none is in range. Costs 1 credit; errors free.

    Args:
        lat (float):
        lon (float):
        radius_m (float | Unset):  Default: 5000.0.
        category (SearchNearbyCategory | Unset):  Default: SearchNearbyCategory.CITY.
        limit (int | Unset):  Default: 10.
        order (SearchNearbyOrder | Unset):  Default: SearchNearbyOrder.PROMINENCE.
        cursor (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | SearchNearbyResult
    """

    return sync_detailed(
        client=client,
        lat=lat,
        lon=lon,
        radius_m=radius_m,
        category=category,
        limit=limit,
        order=order,
        cursor=cursor,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    lat: float,
    lon: float,
    radius_m: float | Unset = 5000.0,
    category: SearchNearbyCategory | Unset = SearchNearbyCategory.CITY,
    limit: int | Unset = 10,
    order: SearchNearbyOrder | Unset = SearchNearbyOrder.PROMINENCE,
    cursor: str | Unset = UNSET,
) -> Response[Error | SearchNearbyResult]:
    """Places near a point

     Places of one `category` within `radius_m` of a point, with `distanceM`, most prominent first
    (`order` "distance": nearest first). Categories here: city, airport, postal_code. NOT_FOUND when
    none is in range. Costs 1 credit; errors free.

    Args:
        lat (float):
        lon (float):
        radius_m (float | Unset):  Default: 5000.0.
        category (SearchNearbyCategory | Unset):  Default: SearchNearbyCategory.CITY.
        limit (int | Unset):  Default: 10.
        order (SearchNearbyOrder | Unset):  Default: SearchNearbyOrder.PROMINENCE.
        cursor (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | SearchNearbyResult]
    """

    kwargs = _get_kwargs(
        lat=lat,
        lon=lon,
        radius_m=radius_m,
        category=category,
        limit=limit,
        order=order,
        cursor=cursor,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    lat: float,
    lon: float,
    radius_m: float | Unset = 5000.0,
    category: SearchNearbyCategory | Unset = SearchNearbyCategory.CITY,
    limit: int | Unset = 10,
    order: SearchNearbyOrder | Unset = SearchNearbyOrder.PROMINENCE,
    cursor: str | Unset = UNSET,
) -> Error | SearchNearbyResult | None:
    """Places near a point

     Places of one `category` within `radius_m` of a point, with `distanceM`, most prominent first
    (`order` "distance": nearest first). Categories here: city, airport, postal_code. NOT_FOUND when
    none is in range. Costs 1 credit; errors free.

    Args:
        lat (float):
        lon (float):
        radius_m (float | Unset):  Default: 5000.0.
        category (SearchNearbyCategory | Unset):  Default: SearchNearbyCategory.CITY.
        limit (int | Unset):  Default: 10.
        order (SearchNearbyOrder | Unset):  Default: SearchNearbyOrder.PROMINENCE.
        cursor (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | SearchNearbyResult
    """

    return (
        await asyncio_detailed(
            client=client,
            lat=lat,
            lon=lon,
            radius_m=radius_m,
            category=category,
            limit=limit,
            order=order,
            cursor=cursor,
        )
    ).parsed
