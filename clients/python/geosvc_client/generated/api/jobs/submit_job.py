from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error import Error
from ...models.job import Job
from ...models.job_submission import JobSubmission
from ...models.submit_job_tool import SubmitJobTool
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    body: JobSubmission,
    tool: SubmitJobTool | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    params: dict[str, Any] = {}

    json_tool: str | Unset = UNSET
    if not isinstance(tool, Unset):
        json_tool = tool.value

    params["tool"] = json_tool

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/jobs",
        "params": params,
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Error | Job | None:
    if response.status_code == 202:
        response_202 = Job.from_dict(response.json())

        return response_202

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

    if response.status_code == 413:
        response_413 = Error.from_dict(response.json())

        return response_413

    if response.status_code == 429:
        response_429 = Error.from_dict(response.json())

        return response_429

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[Error | Job]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: JobSubmission,
    tool: SubmitJobTool | Unset = UNSET,
) -> Response[Error | Job]:
    """Run a tool over many rows in the background

     JSON `{tool, items}`, or a CSV (`Content-Type: text/csv`, `?tool=`) whose header row names the
    tool's arguments, up to 100,000 rows and GEOSVC_JOB_BODY_MAX_BYTES. 1 credit per row with data,
    charged once.

    Args:
        tool (SubmitJobTool | Unset):
        body (JobSubmission):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | Job]
    """

    kwargs = _get_kwargs(
        body=body,
        tool=tool,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient | Client,
    body: JobSubmission,
    tool: SubmitJobTool | Unset = UNSET,
) -> Error | Job | None:
    """Run a tool over many rows in the background

     JSON `{tool, items}`, or a CSV (`Content-Type: text/csv`, `?tool=`) whose header row names the
    tool's arguments, up to 100,000 rows and GEOSVC_JOB_BODY_MAX_BYTES. 1 credit per row with data,
    charged once.

    Args:
        tool (SubmitJobTool | Unset):
        body (JobSubmission):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | Job
    """

    return sync_detailed(
        client=client,
        body=body,
        tool=tool,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: JobSubmission,
    tool: SubmitJobTool | Unset = UNSET,
) -> Response[Error | Job]:
    """Run a tool over many rows in the background

     JSON `{tool, items}`, or a CSV (`Content-Type: text/csv`, `?tool=`) whose header row names the
    tool's arguments, up to 100,000 rows and GEOSVC_JOB_BODY_MAX_BYTES. 1 credit per row with data,
    charged once.

    Args:
        tool (SubmitJobTool | Unset):
        body (JobSubmission):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | Job]
    """

    kwargs = _get_kwargs(
        body=body,
        tool=tool,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    body: JobSubmission,
    tool: SubmitJobTool | Unset = UNSET,
) -> Error | Job | None:
    """Run a tool over many rows in the background

     JSON `{tool, items}`, or a CSV (`Content-Type: text/csv`, `?tool=`) whose header row names the
    tool's arguments, up to 100,000 rows and GEOSVC_JOB_BODY_MAX_BYTES. 1 credit per row with data,
    charged once.

    Args:
        tool (SubmitJobTool | Unset):
        body (JobSubmission):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | Job
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
            tool=tool,
        )
    ).parsed
