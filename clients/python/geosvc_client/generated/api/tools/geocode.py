from http import HTTPStatus
from typing import Any, cast

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error import Error
from ...models.geocode_result import GeocodeResult
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    query: str,
    country: str | Unset = UNSET,
    limit: int | Unset = 5,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["query"] = query

    params["country"] = country

    params["limit"] = limit

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/geocode",
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Any | Error | GeocodeResult | None:
    if response.status_code == 200:
        response_200 = GeocodeResult.from_dict(response.json())

        return response_200

    if response.status_code == 304:
        response_304 = cast(Any, None)
        return response_304

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
) -> Response[Any | Error | GeocodeResult]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    query: str,
    country: str | Unset = UNSET,
    limit: int | Unset = 5,
) -> Response[Any | Error | GeocodeResult]:
    """Find places by name

     Coordinates (WGS84) for a place: a postal code ('10115 Berlin', 'SW1A 1AA'; bare digits with
    `country`), a city ('Austin, TX', 'München'), a state or province, a country, an airport ('SFO',
    'Heathrow'). An address resolves to its most precise known part (`kind`, `matched`), `confidence`
    lowered. Sorted by `confidence` (match, then prominence); `warnings` name query parts not used.
    Postal codes of 100 countries. Else NOT_FOUND. Here landmarks, natural features and street addresses
    need the upstream geocoder: UNSUPPORTED, or its town with `warnings`. Costs 1 credit; errors free.

    Args:
        query (str):
        country (str | Unset):
        limit (int | Unset):  Default: 5.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | Error | GeocodeResult]
    """

    kwargs = _get_kwargs(
        query=query,
        country=country,
        limit=limit,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient | Client,
    query: str,
    country: str | Unset = UNSET,
    limit: int | Unset = 5,
) -> Any | Error | GeocodeResult | None:
    """Find places by name

     Coordinates (WGS84) for a place: a postal code ('10115 Berlin', 'SW1A 1AA'; bare digits with
    `country`), a city ('Austin, TX', 'München'), a state or province, a country, an airport ('SFO',
    'Heathrow'). An address resolves to its most precise known part (`kind`, `matched`), `confidence`
    lowered. Sorted by `confidence` (match, then prominence); `warnings` name query parts not used.
    Postal codes of 100 countries. Else NOT_FOUND. Here landmarks, natural features and street addresses
    need the upstream geocoder: UNSUPPORTED, or its town with `warnings`. Costs 1 credit; errors free.

    Args:
        query (str):
        country (str | Unset):
        limit (int | Unset):  Default: 5.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | Error | GeocodeResult
    """

    return sync_detailed(
        client=client,
        query=query,
        country=country,
        limit=limit,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    query: str,
    country: str | Unset = UNSET,
    limit: int | Unset = 5,
) -> Response[Any | Error | GeocodeResult]:
    """Find places by name

     Coordinates (WGS84) for a place: a postal code ('10115 Berlin', 'SW1A 1AA'; bare digits with
    `country`), a city ('Austin, TX', 'München'), a state or province, a country, an airport ('SFO',
    'Heathrow'). An address resolves to its most precise known part (`kind`, `matched`), `confidence`
    lowered. Sorted by `confidence` (match, then prominence); `warnings` name query parts not used.
    Postal codes of 100 countries. Else NOT_FOUND. Here landmarks, natural features and street addresses
    need the upstream geocoder: UNSUPPORTED, or its town with `warnings`. Costs 1 credit; errors free.

    Args:
        query (str):
        country (str | Unset):
        limit (int | Unset):  Default: 5.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | Error | GeocodeResult]
    """

    kwargs = _get_kwargs(
        query=query,
        country=country,
        limit=limit,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    query: str,
    country: str | Unset = UNSET,
    limit: int | Unset = 5,
) -> Any | Error | GeocodeResult | None:
    """Find places by name

     Coordinates (WGS84) for a place: a postal code ('10115 Berlin', 'SW1A 1AA'; bare digits with
    `country`), a city ('Austin, TX', 'München'), a state or province, a country, an airport ('SFO',
    'Heathrow'). An address resolves to its most precise known part (`kind`, `matched`), `confidence`
    lowered. Sorted by `confidence` (match, then prominence); `warnings` name query parts not used.
    Postal codes of 100 countries. Else NOT_FOUND. Here landmarks, natural features and street addresses
    need the upstream geocoder: UNSUPPORTED, or its town with `warnings`. Costs 1 credit; errors free.

    Args:
        query (str):
        country (str | Unset):
        limit (int | Unset):  Default: 5.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | Error | GeocodeResult
    """

    return (
        await asyncio_detailed(
            client=client,
            query=query,
            country=country,
            limit=limit,
        )
    ).parsed
