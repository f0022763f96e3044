from http import HTTPStatus
from typing import Any, cast

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.demographics_result import DemographicsResult
from ...models.error import Error
from ...models.get_demographics_topics_item import GetDemographicsTopicsItem
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    postal_code: str | Unset = UNSET,
    area: str | Unset = UNSET,
    around: str | Unset = UNSET,
    within: str | Unset = UNSET,
    topics: list[GetDemographicsTopicsItem] | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["postal_code"] = postal_code

    params["area"] = area

    params["around"] = around

    params["within"] = within

    json_topics: list[str] | Unset = UNSET
    if not isinstance(topics, Unset):
        json_topics = []
        for topics_item_data in topics:
            topics_item = topics_item_data.value
            json_topics.append(topics_item)

    params["topics"] = json_topics

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/demographics",
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Any | DemographicsResult | Error | None:
    if response.status_code == 200:
        response_200 = DemographicsResult.from_dict(response.json())

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
) -> Response[Any | DemographicsResult | Error]:
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
    topics: list[GetDemographicsTopicsItem] | Unset = UNSET,
) -> Response[Any | DemographicsResult | Error]:
    """Demographic profile of a US ZIP code or area

     ACS 5-year profile of a US ZIP code, an `area`, an `around` circle or `within` shape (US; an
    estimate: read `warnings`) by `topics`: measures with `unit`, `of` (universe). Here: ZIPs only (no
    margins); areas UNSUPPORTED. Costs 1 credit; errors free.

    Args:
        postal_code (str | Unset):
        area (str | Unset):
        around (str | Unset):
        within (str | Unset):
        topics (list[GetDemographicsTopicsItem] | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | DemographicsResult | Error]
    """

    kwargs = _get_kwargs(
        postal_code=postal_code,
        area=area,
        around=around,
        within=within,
        topics=topics,
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
    topics: list[GetDemographicsTopicsItem] | Unset = UNSET,
) -> Any | DemographicsResult | Error | None:
    """Demographic profile of a US ZIP code or area

     ACS 5-year profile of a US ZIP code, an `area`, an `around` circle or `within` shape (US; an
    estimate: read `warnings`) by `topics`: measures with `unit`, `of` (universe). Here: ZIPs only (no
    margins); areas UNSUPPORTED. Costs 1 credit; errors free.

    Args:
        postal_code (str | Unset):
        area (str | Unset):
        around (str | Unset):
        within (str | Unset):
        topics (list[GetDemographicsTopicsItem] | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | DemographicsResult | Error
    """

    return sync_detailed(
        client=client,
        postal_code=postal_code,
        area=area,
        around=around,
        within=within,
        topics=topics,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    postal_code: str | Unset = UNSET,
    area: str | Unset = UNSET,
    around: str | Unset = UNSET,
    within: str | Unset = UNSET,
    topics: list[GetDemographicsTopicsItem] | Unset = UNSET,
) -> Response[Any | DemographicsResult | Error]:
    """Demographic profile of a US ZIP code or area

     ACS 5-year profile of a US ZIP code, an `area`, an `around` circle or `within` shape (US; an
    estimate: read `warnings`) by `topics`: measures with `unit`, `of` (universe). Here: ZIPs only (no
    margins); areas UNSUPPORTED. Costs 1 credit; errors free.

    Args:
        postal_code (str | Unset):
        area (str | Unset):
        around (str | Unset):
        within (str | Unset):
        topics (list[GetDemographicsTopicsItem] | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | DemographicsResult | Error]
    """

    kwargs = _get_kwargs(
        postal_code=postal_code,
        area=area,
        around=around,
        within=within,
        topics=topics,
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
    topics: list[GetDemographicsTopicsItem] | Unset = UNSET,
) -> Any | DemographicsResult | Error | None:
    """Demographic profile of a US ZIP code or area

     ACS 5-year profile of a US ZIP code, an `area`, an `around` circle or `within` shape (US; an
    estimate: read `warnings`) by `topics`: measures with `unit`, `of` (universe). Here: ZIPs only (no
    margins); areas UNSUPPORTED. Costs 1 credit; errors free.

    Args:
        postal_code (str | Unset):
        area (str | Unset):
        around (str | Unset):
        within (str | Unset):
        topics (list[GetDemographicsTopicsItem] | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | DemographicsResult | Error
    """

    return (
        await asyncio_detailed(
            client=client,
            postal_code=postal_code,
            area=area,
            around=around,
            within=within,
            topics=topics,
        )
    ).parsed
