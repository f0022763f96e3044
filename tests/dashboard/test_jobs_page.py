"""The dashboard's jobs page over real HTTP (issue 59, item 4): a real server and worker
(`jobs_stack`: chunks of 5 rows, 40 free credits, 20 rows/s free bulk pace, 2 jobs at
once), signed in with the session cookie. Upload, the cost before the start, Start,
progress, Cancel, downloads; the jobs and MCP tasks in one table; only the owner's."""

from __future__ import annotations

import csv
import html
import io
import json
import re
import time
from collections.abc import Iterator
from typing import Any

import httpx

from tests.jobs import conftest as jobs_fixtures
from tests.jobs.conftest import FREE_JOB_ROWS_PER_S, FREE_QUOTA, ledger_settles
from tests.mcp.conftest import Stack
from tests.mcp.test_tasks import Rpc
from tests.v1.conftest import Client

PLACES = ["Paris", "Austin, TX", "Berlin", "Tokyo", "Nairobi", "Lima", "Oslo"]
NOWHERE = "Qxzzyv Qqxzw"  # matches no place: NOT_FOUND, free

# The jobs tests' stack (started once per backend) and its accounts.
jobs_stack = jobs_fixtures.jobs_stack
client = jobs_fixtures.client
other = jobs_fixtures.other


def csv_text(rows: list[list[str]], header: tuple[str, ...] = ("query", "limit")) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue().encode()


def upload(account: Client, data: bytes, tool: str = "geocode") -> httpx.Response:
    files = {"file": ("places.csv", data, "text/csv")}
    return account.control.post("/dashboard/jobs/preview", data={"tool": tool}, files=files)


def shown(page: str, name: str) -> str:
    """The text of the element `data-testid=name`, tags removed, spaces collapsed."""
    found = re.search(rf'<(\w+)[^>]*data-testid="{name}"[^>]*>(.*?)</\1>', page, re.S)
    assert found, f"no {name} in the page"
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", found.group(2))).split())


def token_of(page: str) -> str:
    found = re.search(r'name="token" value="([^"]+)"', page)
    assert found, "no Start form"
    return found.group(1)


def start(account: Client, token: str) -> httpx.Response:
    return account.control.post("/dashboard/jobs/start", data={"token": token})


def started(account: Client, data: bytes, tool: str = "geocode") -> str:
    """Upload and Start; the job's id (from the redirect to its page)."""
    preview = upload(account, data, tool)
    assert preview.status_code == 200, preview.text
    response = start(account, token_of(preview.text))
    assert response.status_code == 303, response.text
    location = response.headers["location"]
    assert re.fullmatch(r"/dashboard/jobs/job_[a-z0-9]{20}", location), location
    return location.rsplit("/", 1)[1]


def progress(account: Client, job_id: str) -> dict[str, Any]:
    response = account.control.get(f"/dashboard/jobs/{job_id}/progress")
    assert response.status_code == 200, response.text
    return dict(response.json())


def ended(account: Client, job_id: str, deadline_s: float = 60) -> dict[str, Any]:
    deadline = time.monotonic() + deadline_s
    while (job := progress(account, job_id))["status"] == "working":
        assert time.monotonic() < deadline, job
        time.sleep(0.05)
    return job


def listed_jobs(account: Client) -> list[dict[str, Any]]:
    return list(account.api.get("/v1/jobs").json()["jobs"])


class TestCostBeforeStart:
    def test_rows_credits_month_and_pace_are_shown_and_nothing_runs(self, client: Client) -> None:
        rows = [[place, "1"] for place in PLACES[:4]] + [["", "1"], ["Paris", "99"]]
        response = upload(client, csv_text(rows))

        assert response.status_code == 200, response.text
        page = response.text
        assert shown(page, "rows").startswith("6 (2 invalid: answered INVALID_ARGUMENT")
        assert shown(page, "credits").startswith("at most 4: one per row that returns data")
        assert "rows that fail (nothing found, an invalid row) are not charged" in page
        assert shown(page, "quota").startswith(f"0 of {FREE_QUOTA} credits used, ok ;")
        assert "after this job at most 4" in shown(page, "quota")
        assert shown(page, "state-after") == "ok"
        assert 'data-testid="refused"' not in page
        assert shown(page, "pace") == f"{FREE_JOB_ROWS_PER_S} rows/s on the free plan: about 1 s"
        assert "row 4: query:" in shown(page, "invalid-rows")
        assert "row 5: limit:" in shown(page, "invalid-rows")
        assert listed_jobs(client) == []  # a preview stores no job, charges nothing
        assert client.usage()["used"] == 0

    def test_rows_past_the_free_quota_are_counted_as_refused(self, client: Client) -> None:
        rows = [[PLACES[i % len(PLACES)], "1"] for i in range(FREE_QUOTA + 5)]
        page = upload(client, csv_text(rows)).text

        assert shown(page, "credits").startswith(f"at most {FREE_QUOTA}:")
        assert shown(page, "refused") == "5 rows would be refused"
        assert f"the free plan stops at {FREE_QUOTA} credits a month" in page
        assert shown(page, "state-after") == "warning"  # 100 %: warning, not over

    def test_bad_uploads_are_refused_plainly(self, client: Client) -> None:
        cases = {
            "not UTF-8": (csv_text([["Zürich", "1"]]).decode().encode("latin-1"), "geocode"),
            "no header": (b"", "geocode"),
            "unknown tool": (csv_text([["Paris", "1"]]), "no_such_tool"),
        }
        messages = {
            "not UTF-8": "The CSV must be UTF-8",
            "no header": "The CSV needs a header row",
            "unknown tool": "Choose a tool: one of",
        }
        for case, (data, tool) in cases.items():
            response = upload(client, data, tool)
            assert response.status_code == 422, (case, response.text)
            assert 'role="alert"' in response.text
            assert messages[case] in html.unescape(response.text), case
            assert 'name="token"' not in response.text, case
        no_file = client.control.post("/dashboard/jobs/preview", data={"tool": "geocode"})
        assert no_file.status_code == 422
        assert "Choose a CSV file to upload" in no_file.text
        assert listed_jobs(client) == []

    def test_unknown_columns_and_short_lines_are_rows_answered_in_place(
        self, client: Client
    ) -> None:
        data = b"query,colour\r\nParis,red\r\nBerlin\r\n"
        page = upload(client, data).text

        assert shown(page, "rows").startswith("2 (2 invalid")
        assert shown(page, "credits").startswith("at most 0:")
        invalid = shown(page, "invalid-rows")
        assert "row 0: colour" in invalid
        assert "row 1: This line has 1 cells; the header has 2" in invalid

    def test_uploads_take_the_api_job_limit_not_the_forms_limit(self, client: Client) -> None:
        """Bigger than the 1 MiB of other forms is fine (a CSV of about 2.4 MB); past the
        jobs' own body limit (16 MiB) the answer is 413, before the body is read."""
        query = "Paris, " + "x" * 110
        big = upload(client, csv_text([[query, "1"]] * 20_000))
        assert big.status_code == 200, big.text[:500]
        assert shown(big.text, "rows") == "20,000"

        def endless() -> Iterator[bytes]:
            yield b'--b\r\nContent-Disposition: form-data; name="file"; filename="a.csv"\r\n\r\n'
            while True:
                yield b"Paris\n" * 100_000

        refused = client.control.post(
            "/dashboard/jobs/preview",
            content=endless(),
            headers={
                "Content-Type": "multipart/form-data; boundary=b",
                "Content-Length": str(64 * 1024 * 1024),
            },
        )
        assert refused.status_code == 413
        assert refused.json()["error"]["code"] == "PAYLOAD_TOO_LARGE"


class TestStartProgressDownload:
    def test_start_runs_the_rows_and_the_results_download_through_the_session(
        self, jobs_stack: Stack, client: Client
    ) -> None:
        rows = [[place, "1"] for place in PLACES] + [[NOWHERE, "1"], ["", "1"]]
        job_id = started(client, csv_text(rows))

        job = ended(client, job_id)
        assert job["status"] == "completed"
        assert (job["rows_total"], job["rows_done"]) == (9, 9)
        assert (job["rows_with_data"], job["rows_with_errors"], job["credits"]) == (7, 2, 7)
        page = client.control.get(f"/dashboard/jobs/{job_id}").text
        assert shown(page, "job-status") == "completed"
        assert shown(page, "job-credits") == "7"

        downloaded = client.control.get(f"/dashboard/jobs/{job_id}/results.csv")
        assert downloaded.headers["content-type"].startswith("text/csv")
        assert "attachment" in downloaded.headers["content-disposition"]
        table = list(csv.DictReader(io.StringIO(downloaded.text)))
        assert [int(row["row"]) for row in table] == list(range(9))
        assert [row["status"] for row in table] == ["200"] * 7 + ["404", "400"]
        assert json.loads(table[1]["result"])["query"] == "Austin, TX"
        lines = client.control.get(f"/dashboard/jobs/{job_id}/results.jsonl").text.splitlines()
        assert [json.loads(line)["status"] for line in lines] == [200] * 7 + [404, 400]
        # the job's credits are the ledger's rows: one per row with data
        assert ledger_settles(jobs_stack.database_url, client.user_id, 7) == 7

    def test_a_start_form_starts_one_job_however_often_it_is_posted(self, client: Client) -> None:
        token = token_of(upload(client, csv_text([["Paris", "1"]])).text)
        first, again = start(client, token), start(client, token)

        assert first.status_code == 303
        assert again.status_code == 303
        assert again.headers["location"] == "/dashboard/jobs?notice=upload_gone"
        assert len(listed_jobs(client)) == 1
        assert start(client, "made-up").headers["location"].endswith("notice=upload_gone")

    def test_cancel_keeps_the_rows_done_and_runs_nothing_after(self, client: Client) -> None:
        # 400 rows at 20 rows/s: about 20 s, so the cancel lands mid-way
        job_id = started(client, csv_text([[NOWHERE, "1"]] * 400))
        cancelled = client.control.post(f"/dashboard/jobs/{job_id}/cancel")

        assert cancelled.status_code == 303
        assert cancelled.headers["location"] == f"/dashboard/jobs/{job_id}?notice=job_cancelled"
        job = progress(client, job_id)
        assert job["status"] == "cancelled"
        assert job["rows_done"] < 400
        lines = client.control.get(f"/dashboard/jobs/{job_id}/results.jsonl").text.splitlines()
        codes = [json.loads(line)["error"]["code"] for line in lines]
        assert len(codes) == 400
        assert codes[-1] == "CANCELLED"
        assert set(codes) <= {"NOT_FOUND", "CANCELLED"}


class TestOneTable:
    def test_uploads_api_jobs_and_mcp_tasks_are_listed_together(
        self, jobs_stack: Stack, client: Client
    ) -> None:
        upload_id = started(client, csv_text([["Paris", "1"]]))
        ended(client, upload_id)
        api = client.api.post("/v1/jobs", json={"tool": "geocode", "items": [{"query": "Oslo"}]})
        assert api.status_code == 202
        ended(client, api.json()["id"])
        task = Rpc(jobs_stack, client.api_key).start("get_population", {"postal_codes": ["10001"]})
        ended(client, task["taskId"])

        page = client.control.get("/dashboard/jobs").text
        row = r'data-job-id="(job_[a-z0-9]+)">\s*<td data-label="Kind"><a[^>]*>([^<]+)<'
        kinds = dict(re.findall(row, page))
        assert kinds == {
            task["taskId"]: "MCP task",
            api.json()["id"]: "API job",
            upload_id: "Upload",
        }
        task_page = client.control.get(f"/dashboard/jobs/{task['taskId']}").text
        assert shown(task_page, "job-status") == "completed"


class TestOnlyTheOwner:
    def test_another_accounts_job_is_not_found_everywhere(
        self, client: Client, other: Client
    ) -> None:
        job_id = started(client, csv_text([[NOWHERE, "1"]] * 200))
        for path in ("", "/progress", "/results.csv", "/results.jsonl"):
            response = other.control.get(f"/dashboard/jobs/{job_id}{path}")
            assert response.status_code == 404, path
            assert 'data-testid="job"' not in response.text
            assert "rows_total" not in response.text
        assert other.control.post(f"/dashboard/jobs/{job_id}/cancel").status_code == 404
        assert progress(client, job_id)["status"] == "working"  # untouched
        client.control.post(f"/dashboard/jobs/{job_id}/cancel")

    def test_another_accounts_upload_token_starts_nothing(
        self, client: Client, other: Client
    ) -> None:
        token = token_of(upload(client, csv_text([["Paris", "1"]])).text)
        refused = start(other, token)
        assert refused.headers["location"].endswith("notice=upload_gone")
        assert listed_jobs(other) == []
        assert start(client, token).status_code == 303  # the owner's upload is still there

    def test_cross_site_posts_are_refused(self, client: Client) -> None:
        token = token_of(upload(client, csv_text([["Paris", "1"]])).text)
        for headers in ({"Origin": "http://evil.example"}, {"Sec-Fetch-Site": "cross-site"}):
            response = client.control.post(
                "/dashboard/jobs/start", data={"token": token}, headers=headers
            )
            assert response.status_code == 403
            files = {"file": ("a.csv", b"query\r\nParis\r\n", "text/csv")}
            preview = client.control.post(
                "/dashboard/jobs/preview", data={"tool": "geocode"}, files=files, headers=headers
            )
            assert preview.status_code == 403
        assert listed_jobs(client) == []

    def test_signed_out_visitors_go_to_sign_in(self, jobs_stack: Stack) -> None:
        with httpx.Client(base_url=jobs_stack.server.url) as anonymous:
            for path in ("/dashboard/jobs", "/dashboard/jobs/job_x/progress"):
                response = anonymous.get(path)
                assert response.status_code == 303
                assert response.headers["location"] == "/dashboard/signin"
            posted = anonymous.post("/dashboard/jobs/start", data={"token": "x"})
            assert posted.status_code == 303
