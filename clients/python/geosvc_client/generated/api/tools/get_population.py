from http import HTTPStatus
from typing import Any, cast

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error import Error
from ...models.population_result import PopulationResult
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    postal_code: str | Unset = UNSET,
    area: str | Unset = UNSET,
    around: str | Unset = UNSET,
    within: str | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["postal_code"] = postal_code

    params["area"] = area

    params["around"] = around

    params["within"] = within

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/population",
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Any | Error | PopulationResult | None:
    if response.status_code == 200:
        response_200 = PopulationResult.from_dict(response.json())

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
) -> Response[Any | Error | PopulationResult]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    postal_code: str | Unset = UNSET,
    area: str | Unset = UNSET,
    around: str | Unset = UNSET,
    within: str | Unset = UNSET,
) -> Response[Any | Error | PopulationResult]:
    """Population of a US ZIP code, state, county, country or city

     Residents of a US ZIP code (`postal_code`) or an `area`: US state ('TX', USPS first), county
    ('Travis County, TX' or FIPS), country ('VN') or city ('Lyon, France'), or `around` a circle or
    `within` a shape (an estimate: read `warnings`); `level`, `name` say what matched, other readings
    `candidates`. Here: ZIPs ACS 5-year or 2010 Census; states, counties Census estimates 2019;
    countries World Bank 2019; cities GeoNames (no year). Costs 1 credit; errors free.

    Args:
        postal_code (str | Unset):
        area (str | Unset):
        around (str | Unset):
        within (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | Error | PopulationResult]
    """

    kwargs = _get_kwargs(
        postal_code=postal_code,
        area=area,
        around=around,
        within=within,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient | Client,
    postal_code: str | Unset = UNSET,
    area: str | Unset = UNSET,
    around: str | Unset = UNSET,
    within: str | Unset = UNSET,
) -> Any | Error | PopulationResult | None:
    """Population of a US ZIP code, state, county, country or city

     Residents of a US ZIP code (`postal_code`) or an `area`: US state ('TX', USPS first), county
    ('Travis County, TX' or FIPS), country ('VN') or city ('Lyon, France'), or `around` a circle or
    `within` a shape (an estimate: read `warnings`); `level`, `name` say what matched, other readings
    `candidates`. Here: ZIPs ACS 5-year or 2010 Census; states, counties Census estimates 2019;
    countries World Bank 2019; cities GeoNames (no year). Costs 1 credit; errors free.

    Args:
        postal_code (str | Unset):
        area (str | Unset):
        around (str | Unset):
        within (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | Error | PopulationResult
    """

    return sync_detailed(
        client=client,
        postal_code=postal_code,
        area=area,
        around=around,
        within=within,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    postal_code: str | Unset = UNSET,
    area: str | Unset = UNSET,
    around: str | Unset = UNSET,
    within: str | Unset = UNSET,
) -> Response[Any | Error | PopulationResult]:
    """Population of a US ZIP code, state, county, country or city

     Residents of a US ZIP code (`postal_code`) or an `area`: US state ('TX', USPS first), county
    ('Travis County, TX' or FIPS), country ('VN') or city ('Lyon, France'), or `around` a circle or
    `within` a shape (an estimate: read `warnings`); `level`, `name` say what matched, other readings
    `candidates`. Here: ZIPs ACS 5-year or 2010 Census; states, counties Census estimates 2019;
    countries World Bank 2019; cities GeoNames (no year). Costs 1 credit; errors free.

    Args:
        postal_code (str | Unset):
        area (str | Unset):
        around (str | Unset):
        within (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | Error | PopulationResult]
    """

    kwargs = _get_kwargs(
        postal_code=postal_code,
        area=area,
        around=around,
        within=within,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    postal_code: str | Unset = UNSET,
    area: str | Unset = UNSET,
    around: str | Unset = UNSET,
    within: str | Unset = UNSET,
) -> Any | Error | PopulationResult | None:
    """Population of a US ZIP code, state, county, country or city

     Residents of a US ZIP code (`postal_code`) or an `area`: US state ('TX', USPS first), county
    ('Travis County, TX' or FIPS), country ('VN') or city ('Lyon, France'), or `around` a circle or
    `within` a shape (an estimate: read `warnings`); `level`, `name` say what matched, other readings
    `candidates`. Here: ZIPs ACS 5-year or 2010 Census; states, counties Census estimates 2019;
    countries World Bank 2019; cities GeoNames (no year). Costs 1 credit; errors free.

    Args:
        postal_code (str | Unset):
        area (str | Unset):
        around (str | Unset):
        within (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | Error | PopulationResult
    """

    return (
        await asyncio_detailed(
            client=client,
            postal_code=postal_code,
            area=area,
            around=around,
            within=within,
        )
    ).parsed
