"""POST /v1/jobs, GET /v1/jobs/{id}, its results, DELETE, GET /v1/jobs: through a real
server and worker (`jobs_stack`), on SQLite and PostgreSQL. Ledger = counter = rows with
data, for every job."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from tests.jobs.conftest import (
    CHUNK_ROWS,
    FREE_QUOTA,
    finished,
    ledger_settles,
    wait_for,
)
from tests.mcp.conftest import Stack
from tests.v1.conftest import Client

PLACES = ["Paris", "Austin, TX", "Berlin", "Tokyo", "Nairobi", "Lima", "Oslo"]
NOWHERE = "Qxzzyv Qqxzw"  # matches no place: NOT_FOUND, free


def lines(response: Any) -> list[dict[str, Any]]:
    return [json.loads(line) for line in response.text.splitlines()]


class TestJsonJob:
    def test_rows_answered_in_order_and_charged_once_each(
        self, jobs_stack: Stack, client: Client
    ) -> None:
        items: list[Any] = [{"query": place, "limit": 1} for place in PLACES * 2]
        items[3] = {"query": NOWHERE}
        items[5] = {"query": "Paris", "colour": "red"}  # unknown argument
        items[8] = {"query": ""}  # over a limit (too short)
        items[9] = "Paris"  # not an object
        response = client.api.post("/v1/jobs", json={"tool": "geocode", "items": items})
        assert response.status_code == 202, response.text
        job_id = response.json()["id"]
        assert response.headers["location"] == f"/v1/jobs/{job_id}"
        assert response.json()["rowsTotal"] == len(items)

        job = finished(client, job_id)
        assert job["status"] == "completed"
        invalid = {5, 8, 9}
        with_data = len(items) - len(invalid) - 1
        assert job["rowsDone"] == len(items)
        assert job["rowsWithData"] == with_data
        assert job["rowsWithErrors"] == len(invalid) + 1
        assert job["credits"] == with_data
        assert job["expiresAt"] is not None

        rows = lines(client.api.get(f"/v1/jobs/{job_id}/results"))
        assert [row["row"] for row in rows] == list(range(len(items)))
        for index, row in enumerate(rows):
            if index in invalid:
                assert (row["status"], row["error"]["code"]) == (400, "INVALID_ARGUMENT")
            elif index == 3:
                assert (row["status"], row["error"]["code"]) == (404, "NOT_FOUND")
            else:
                assert row["status"] == 200
                assert row["result"]["query"] == items[index]["query"]
        # ledger = counter = rows with data
        assert ledger_settles(jobs_stack.database_url, client.user_id, with_data) == with_data
        assert client.usage()["used"] == with_data

    def test_results_paginated(self, client: Client) -> None:
        items = [{"query": place, "limit": 1} for place in PLACES]
        job_id = client.api.post("/v1/jobs", json={"tool": "geocode", "items": items}).json()["id"]
        finished(client, job_id)
        page = lines(client.api.get(f"/v1/jobs/{job_id}/results?offset=3&limit=3"))
        assert [row["row"] for row in page] == [3, 4, 5]
        assert [row["result"]["query"] for row in page] == PLACES[3:6]


class TestCsvJob:
    def test_header_names_the_arguments_and_bad_lines_are_answered_in_place(
        self, jobs_stack: Stack, client: Client
    ) -> None:
        body = (
            "query,limit\r\n"
            "Paris,1\r\n"
            '"Austin, TX",2\r\n'
            "Berlin\r\n"  # one cell: malformed line
            "Tokyo,eleven\r\n"  # not a number
            "Lima,1\r\n"
        )
        response = client.api.post(
            "/v1/jobs?tool=geocode", content=body, headers={"Content-Type": "text/csv"}
        )
        assert response.status_code == 202, response.text
        job = finished(client, response.json()["id"])
        assert (job["rowsTotal"], job["rowsWithData"], job["credits"]) == (5, 3, 3)

        answer = client.api.get(f"/v1/jobs/{job['id']}/results", headers={"Accept": "text/csv"})
        assert answer.headers["content-type"].startswith("text/csv")
        table = list(csv.DictReader(io.StringIO(answer.text)))
        assert [row["status"] for row in table] == ["200", "200", "400", "400", "200"]
        assert [row["error_code"] for row in table][2:4] == ["INVALID_ARGUMENT"] * 2
        austin = json.loads(table[1]["result"])
        assert austin["query"] == "Austin, TX"
        assert len(austin["results"]) <= 2
        assert ledger_settles(jobs_stack.database_url, client.user_id, 3) == 3

    def test_unknown_column_is_invalid_on_every_row_at_no_cost(self, client: Client) -> None:
        body = "query,colour\nParis,red\nBerlin,blue\n"
        response = client.api.post(
            "/v1/jobs?tool=geocode", content=body, headers={"Content-Type": "text/csv"}
        )
        job = finished(client, response.json()["id"])
        assert (job["rowsWithData"], job["rowsWithErrors"], job["credits"]) == (0, 2, 0)
        rows = lines(client.api.get(f"/v1/jobs/{job['id']}/results"))
        assert {row["error"]["code"] for row in rows} == {"INVALID_ARGUMENT"}
        assert "colour" in rows[0]["error"]["message"]
        assert client.usage()["used"] == 0


class TestFreeCap:
    def test_the_cap_stops_the_job_and_the_rest_are_free(
        self, jobs_stack: Stack, client: Client
    ) -> None:
        items = [{"query": PLACES[i % len(PLACES)], "limit": 1} for i in range(FREE_QUOTA + 12)]
        job_id = client.api.post("/v1/jobs", json={"tool": "geocode", "items": items}).json()["id"]
        job = finished(client, job_id)
        assert job["status"] == "completed"
        assert (job["rowsWithData"], job["credits"]) == (FREE_QUOTA, FREE_QUOTA)
        rows = lines(client.api.get(f"/v1/jobs/{job_id}/results"))
        # Chunks are charged as they finish (two at a time), so the rows past the cap are
        # the last to run, give or take a chunk.
        assert all(row["status"] == 200 for row in rows[: FREE_QUOTA - CHUNK_ROWS])
        assert sum(row["status"] == 200 for row in rows) == FREE_QUOTA
        refused = [row for row in rows if row["status"] != 200]
        assert {(row["status"], row["error"]["code"]) for row in refused} == {
            (402, "QUOTA_EXCEEDED")
        }
        assert refused[0]["error"]["quota"] == FREE_QUOTA
        assert ledger_settles(jobs_stack.database_url, client.user_id, FREE_QUOTA) == FREE_QUOTA
        assert client.usage()["used"] == FREE_QUOTA
        # a call after it is refused as any call past the cap is
        assert client.api.get("/v1/geocode", params={"query": "Paris"}).status_code == 402


class TestCancel:
    def test_rows_done_are_kept_and_charged_nothing_after(
        self, jobs_stack: Stack, client: Client
    ) -> None:
        # 5 rows with data, then rows paced at the free plan's 20 rows/s: about 15 s
        items = [{"query": place, "limit": 1} for place in PLACES[:CHUNK_ROWS]]
        items += [{"query": NOWHERE}] * 300
        job_id = client.api.post("/v1/jobs", json={"tool": "geocode", "items": items}).json()["id"]
        wait_for(
            lambda: dict(client.api.get(f"/v1/jobs/{job_id}").json()),
            lambda job: job["rowsDone"] >= CHUNK_ROWS * 2,
            30,
        )
        cancelled = client.api.delete(f"/v1/jobs/{job_id}")
        assert cancelled.status_code == 200
        assert cancelled.json()["status"] == "cancelled"
        done_at_cancel = cancelled.json()["rowsDone"]
        job = client.api.get(f"/v1/jobs/{job_id}").json()
        assert job["status"] == "cancelled"
        # at most the chunks already running finish after it
        assert job["rowsDone"] <= done_at_cancel + 2 * CHUNK_ROWS < len(items)
        rows = lines(client.api.get(f"/v1/jobs/{job_id}/results"))
        assert len(rows) == len(items)
        ran = [row for row in rows if row.get("error", {}).get("code") != "CANCELLED"]
        assert len(ran) >= done_at_cancel
        assert rows[-1]["error"]["code"] == "CANCELLED"
        assert job["credits"] == CHUNK_ROWS
        assert ledger_settles(jobs_stack.database_url, client.user_id, CHUNK_ROWS) == CHUNK_ROWS
        assert client.usage()["used"] == CHUNK_ROWS


class TestRefusals:
    def test_unknown_job_and_another_accounts_job_are_404(
        self, client: Client, other: Client
    ) -> None:
        job_id = client.api.post(
            "/v1/jobs", json={"tool": "geocode", "items": [{"query": "Paris"}]}
        ).json()["id"]
        for path in (f"/v1/jobs/{job_id}", f"/v1/jobs/{job_id}/results", "/v1/jobs/job_nope"):
            response = other.api.get(path)
            assert response.status_code == 404
            assert response.json()["error"]["code"] == "NOT_FOUND"
        assert other.api.delete(f"/v1/jobs/{job_id}").status_code == 404
        assert other.api.get("/v1/jobs").json() == {"jobs": []}
        listed = client.api.get("/v1/jobs").json()["jobs"]
        assert [job["id"] for job in listed] == [job_id]

    def test_malformed_bodies_are_refused_whole(self, client: Client) -> None:
        for body, headers in [
            (b"{not json", {"Content-Type": "application/json"}),
            (b'{"tool": "geocode"}', {"Content-Type": "application/json"}),
            (b'{"tool": "geocode", "items": []}', {"Content-Type": "application/json"}),
            (b'{"tool": "static_map", "items": [{}]}', {"Content-Type": "application/json"}),
            (b"query\nParis\n", {"Content-Type": "text/csv"}),  # no ?tool=
            (b"", {"Content-Type": "text/csv"}),
        ]:
            response = client.api.post("/v1/jobs", content=body, headers=headers)
            assert response.status_code in (400, 404), (body, response.text)
            assert set(response.json()["error"]) >= {"code", "message"}
        assert client.api.get("/v1/jobs").json() == {"jobs": []}

    def test_too_many_rows(self, client: Client) -> None:
        response = client.api.post(
            "/v1/jobs",
            json={"tool": "geocode", "items": [{"query": "x"}] * 100_001},
        )
        assert response.status_code == 400
        assert "100,000" in response.json()["error"]["message"]

    def test_body_over_the_limit_is_refused_before_it_is_read(self, client: Client) -> None:
        def endless() -> Any:
            yield b"query\n"
            while True:
                yield b"Paris\n" * 100_000

        response = client.api.post(
            "/v1/jobs?tool=geocode",
            content=endless(),
            headers={"Content-Type": "text/csv", "Content-Length": str(64 * 1024 * 1024)},
        )
        assert response.status_code == 413
        assert response.json()["error"]["code"] == "PAYLOAD_TOO_LARGE"

    def test_no_key_is_401(self, jobs_stack: Stack) -> None:
        import httpx

        response = httpx.get(f"{jobs_stack.server.url}/v1/jobs")
        assert response.status_code == 401
        assert response.headers["www-authenticate"].startswith("Bearer")
        assert response.json()["error"]["code"] == "UNAUTHENTICATED"

    def test_jobs_per_account_are_limited(self, client: Client) -> None:
        slow = {"tool": "geocode", "items": [{"query": NOWHERE}] * 400}
        first = client.api.post("/v1/jobs", json=slow).json()["id"]
        second = client.api.post("/v1/jobs", json=slow).json()["id"]
        third = client.api.post("/v1/jobs", json=slow)
        assert third.status_code == 429
        assert third.json()["error"]["limit"] == "jobs"
        for job_id in (first, second):
            assert client.api.delete(f"/v1/jobs/{job_id}").json()["status"] == "cancelled"
        assert client.api.post("/v1/jobs", json=slow).status_code == 202
