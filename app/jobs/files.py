"""A job's rows as files: a CSV in (a header row naming the tool's arguments, each line
read as the query string of `GET /v1/<tool>` is), CSV or JSON lines out (a row per item,
in input order, each with the answer or its error). /v1/jobs and the dashboard use them."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from typing import Any

from starlette.datastructures import QueryParams

from app.geodata.query import query_arguments
from app.jobs import service as jobs
from app.kit.db import new_session
from app.kit.errors import AppError, InvalidArgument

# Rows read from the database at a time while results stream.
RESULTS_PAGE = 2_000


def csv_rows(tool: str, text: str) -> list[Any]:
    """One item per CSV line after the header: the arguments its cells name (read as the
    query string of `GET /v1/<tool>` is), or the InvalidArgument of a line that cannot be
    read (a cell count unlike the header's, an unknown column), answered in its place."""
    reader = csv.reader(io.StringIO(text))
    header = next(reader, None)
    if not header or not any(name.strip() for name in header):
        raise InvalidArgument("The CSV needs a header row naming the tool's arguments")
    names = [name.strip() for name in header]
    items: list[Any] = []
    for line in reader:
        if not line:
            continue  # a blank line is no row
        if len(line) != len(names):
            items.append(
                InvalidArgument(f"This line has {len(line)} cells; the header has {len(names)}")
            )
            continue
        cells = [(name, value.strip()) for name, value in zip(names, line, strict=True)]
        try:
            items.append(query_arguments(tool, QueryParams([c for c in cells if c[1]])))
        except AppError as exc:
            items.append(exc)
    return items


def csv_items(tool: str, raw: bytes) -> list[Any]:
    """`csv_rows` of an uploaded body (UTF-8, with or without a byte order mark)."""
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InvalidArgument("The CSV must be UTF-8") from None
    return csv_rows(tool, text)


CSV_COLUMNS = ["row", "status", "error_code", "error_message", "result"]


def result_lines(
    user_id: str, job_id: str, offset: int, limit: int, *, as_csv: bool
) -> Iterator[str]:
    """The rows a page at a time (a sync generator: Starlette runs it in a thread)."""
    if as_csv:
        yield ",".join(CSV_COLUMNS) + "\r\n"
    end = offset + limit
    start = offset
    while start < end:
        asked = min(RESULTS_PAGE, end - start)
        with new_session() as session:
            page = jobs.job_rows(session, user_id, job_id, offset=start, limit=asked)
        for row in page:
            yield _csv_line(row) if as_csv else _json_line(row)
        if len(page) < asked:
            return  # the end, or the rows not run yet begin here
        start += asked


def _json_line(row: jobs.JobRow) -> str:
    if row.error is None:
        item: dict[str, Any] = {"row": row.row, "status": 200, "result": row.result}
    else:
        item = {"row": row.row, "status": jobs.row_status(row.error), "error": row.error}
    return json.dumps(item, ensure_ascii=False, separators=(",", ":")) + "\n"


def _csv_line(row: jobs.JobRow) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    if row.error is None:
        result = json.dumps(row.result, ensure_ascii=False, separators=(",", ":"))
        writer.writerow([row.row, 200, "", "", result])
    else:
        status = jobs.row_status(row.error)
        writer.writerow([row.row, status, row.error.get("code"), row.error.get("message"), ""])
    return out.getvalue()
