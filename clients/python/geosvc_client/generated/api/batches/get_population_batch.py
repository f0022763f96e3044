from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error import Error
from ...models.get_population_batch_body import GetPopulationBatchBody
from ...models.population_batch_result import PopulationBatchResult
from ...types import Response


def _get_kwargs(
    *,
    body: GetPopulationBatchBody,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/population/batch",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Error | PopulationBatchResult | None:
    if response.status_code == 200:
        response_200 = PopulationBatchResult.from_dict(response.json())

        return response_200

    if response.status_code == 400:
        response_400 = Error.from_dict(response.json())

        return response_400

    if response.status_code == 401:
        response_401 = Error.from_dict(response.json())

        return response_401

    if response.status_code == 403:
        response_403 = Error.from_dict(response.json())

        return response_403

    if response.status_code == 410:
        response_410 = Error.from_dict(response.json())

        return response_410

    if response.status_code == 414:
        response_414 = Error.from_dict(response.json())

        return response_414

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
) -> Response[Error | PopulationBatchResult]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: GetPopulationBatchBody,
) -> Response[Error | PopulationBatchResult]:
    """Population of a US ZIP code, state, county, country or city (batch)

     Up to 100 `get_population` calls; `results[i]` answers `items[i]` as the call alone would have (an
    invalid item: 400 in its place). 1 credit per item with data.

    Args:
        body (GetPopulationBatchBody):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | PopulationBatchResult]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient | Client,
    body: GetPopulationBatchBody,
) -> Error | PopulationBatchResult | None:
    """Population of a US ZIP code, state, county, country or city (batch)

     Up to 100 `get_population` calls; `results[i]` answers `items[i]` as the call alone would have (an
    invalid item: 400 in its place). 1 credit per item with data.

    Args:
        body (GetPopulationBatchBody):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | PopulationBatchResult
    """

    return sync_detailed(
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: GetPopulationBatchBody,
) -> Response[Error | PopulationBatchResult]:
    """Population of a US ZIP code, state, county, country or city (batch)

     Up to 100 `get_population` calls; `results[i]` answers `items[i]` as the call alone would have (an
    invalid item: 400 in its place). 1 credit per item with data.

    Args:
        body (GetPopulationBatchBody):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | PopulationBatchResult]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    body: GetPopulationBatchBody,
) -> Error | PopulationBatchResult | None:
    """Population of a US ZIP code, state, county, country or city (batch)

     Up to 100 `get_population` calls; `results[i]` answers `items[i]` as the call alone would have (an
    invalid item: 400 in its place). 1 credit per item with data.

    Args:
        body (GetPopulationBatchBody):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | PopulationBatchResult
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
        )
    ).parsed
