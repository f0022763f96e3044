"""The /v1/jobs operations in the OpenAPI document (`app.v1.openapi`): bulk jobs
(`app.v1.jobs`, `app.jobs`)."""

from __future__ import annotations

from typing import Any

from app.geodata.catalogue import BATCH_FORMS
from app.kit.config import Settings

REF = "#/components/schemas/{model}"
ERROR = {"$ref": REF.format(model="Error")}
JOB_ID = {
    "name": "job_id",
    "in": "path",
    "required": True,
    "schema": {"type": "string", "pattern": "^[A-Za-z0-9_]{1,40}$"},
}


def _errors(*statuses: int) -> dict[str, Any]:
    return {str(status): {"$ref": f"#/components/responses/{status}"} for status in statuses}


# A job id with control characters is refused at the edge (app/http/guards.py).
PATH_REFUSED = {
    "422": {
        "description": "The path holds control characters (INVALID_ARGUMENT)",
        "content": {"application/json": {"schema": ERROR}},
    }
}


def job_schemas(settings: Settings) -> dict[str, Any]:
    count = {"type": "integer", "minimum": 0}
    job = {
        "title": "Job",
        "type": "object",
        "properties": {
            "id": {"type": "string", "description": "The job's id, `job_...`"},
            "tool": {"type": "string", "description": "The tool each row calls"},
            "status": {"type": "string", "enum": ["working", "completed", "cancelled", "failed"]},
            "origin": {
                "type": "string",
                "description": "Where it was submitted: v1, dashboard, mcp",
            },
            "rowsTotal": {**count, "description": "Rows in the job"},
            "rowsDone": {**count, "description": "Rows answered (with data or an error)"},
            "rowsWithData": {**count, "description": "Rows answered with data (each charged)"},
            "rowsWithErrors": {**count, "description": "Rows answered with an error (free)"},
            "credits": {**count, "description": "Credits charged so far"},
            "secondsLeft": {
                "type": ["number", "null"],
                "description": "Estimate of the time left; null when not known or finished",
            },
            "statusMessage": {"type": "string", "description": 'Progress, "1,200 of 10,000 rows"'},
            "createdAt": {"type": "string"},
            "finishedAt": {"type": ["string", "null"]},
            "expiresAt": {
                "type": ["string", "null"],
                "description": "When the results are deleted (set when the job ends)",
            },
            "results": {"type": "string", "description": "The path of its results"},
        },
        "required": ["id", "tool", "status", "rowsTotal", "rowsDone", "credits"],
    }
    submit = {
        "title": "JobSubmission",
        "type": "object",
        "properties": {
            "tool": {"type": "string", "enum": sorted(BATCH_FORMS)},
            "items": {
                "type": "array",
                "minItems": 1,
                "maxItems": settings.job_max_rows,
                "items": {"type": "object"},
                "description": "One call's arguments per row; a row that is not a valid "
                "call is answered INVALID_ARGUMENT in its place, free",
            },
        },
        "required": ["tool", "items"],
        "additionalProperties": False,
    }
    return {"Job": job, "JobSubmission": submit}


def job_paths(settings: Settings) -> dict[str, Any]:
    job_answer = {"application/json": {"schema": {"$ref": REF.format(model="Job")}}}
    rows = (
        "One row per item, in input order: `{row, status, result}` or `{row, status, error}` "
        "(the status and error the call alone would have got; CANCELLED for rows a cancel "
        "stopped). The rows not run yet end the list."
    )
    return {
        "/v1/jobs": {
            "post": {
                "operationId": "submit_job",
                "tags": ["Jobs"],
                "summary": "Run a tool over many rows in the background",
                "description": "JSON `{tool, items}`, or a CSV (`Content-Type: text/csv`, "
                "`?tool=`) whose header row names the tool's arguments, up to "
                f"{settings.job_max_rows:,} rows and GEOSVC_JOB_BODY_MAX_BYTES. 1 credit "
                "per row with data, charged once.",
                "parameters": [
                    {
                        "name": "tool",
                        "in": "query",
                        "required": False,
                        "description": "The tool of a CSV job (a JSON job names it in its "
                        "body; if given too, the same)",
                        "schema": {"type": "string", "enum": sorted(BATCH_FORMS)},
                    }
                ],
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {
                            "schema": {"$ref": REF.format(model="JobSubmission")},
                            "example": {
                                "tool": "get_population",
                                "items": [{"postal_code": "10001"}, {"postal_code": "94103"}],
                            },
                        },
                        "text/csv": {
                            "schema": {"type": "string"},
                            "example": "postal_code\n10001\n94103\n",
                        },
                    },
                },
                "responses": {
                    "202": {
                        "description": "Accepted: the job, at `Location`",
                        "headers": {"Location": {"schema": {"type": "string"}}},
                        "content": job_answer,
                    },
                    **_errors(400, 401, 403, 404, 429),
                    "413": {
                        "description": "The body is over GEOSVC_JOB_BODY_MAX_BYTES",
                        "content": {"application/json": {"schema": ERROR}},
                    },
                },
            },
            "get": {
                "operationId": "list_jobs",
                "tags": ["Jobs"],
                "summary": "The account's jobs, newest first",
                "responses": {
                    "200": {
                        "description": "The jobs",
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "properties": {
                                        "jobs": {
                                            "type": "array",
                                            "items": {"$ref": REF.format(model="Job")},
                                        }
                                    },
                                    "required": ["jobs"],
                                }
                            }
                        },
                    },
                    **_errors(401, 403),
                },
            },
        },
        "/v1/jobs/{job_id}": {
            "get": {
                "operationId": "get_job",
                "tags": ["Jobs"],
                "summary": "A job's status and progress",
                "parameters": [JOB_ID],
                "responses": {
                    "200": {"description": "The job", "content": job_answer},
                    **_errors(401, 403, 404),
                    **PATH_REFUSED,
                },
            },
            "delete": {
                "operationId": "cancel_job",
                "tags": ["Jobs"],
                "summary": "Cancel a job: rows done are kept and charged, nothing after",
                "description": "A finished job is answered as it ended. The job and its "
                "results stay readable until `expiresAt`.",
                "parameters": [JOB_ID],
                "responses": {
                    "200": {"description": "The job", "content": job_answer},
                    **_errors(401, 403, 404),
                    **PATH_REFUSED,
                },
            },
        },
        "/v1/jobs/{job_id}/results": {
            "get": {
                "operationId": "job_results",
                "tags": ["Jobs"],
                "summary": "A job's rows, as JSON lines or CSV (by Accept)",
                "description": rows,
                "parameters": [
                    JOB_ID,
                    *(
                        {
                            "name": name,
                            "in": "query",
                            "required": False,
                            "schema": {"type": "integer", "minimum": 0},
                        }
                        for name in ("offset", "limit")
                    ),
                ],
                "responses": {
                    "200": {
                        "description": rows,
                        "content": {
                            "application/x-ndjson": {"schema": {"type": "string"}},
                            "text/csv": {"schema": {"type": "string"}},
                        },
                    },
                    **_errors(400, 401, 403, 404),
                    **PATH_REFUSED,
                },
            },
        },
    }
