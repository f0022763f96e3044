"""The jobs page in a real browser (Debian's chromium), at desktop and phone widths: upload
a CSV of a few rows, see the cost, start, watch the progress bar to the end, download the
results and read their rows; start a long job and cancel it. A real server and worker
with a slow free bulk pace (2 rows/s, one row a chunk), so progress is seen moving."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.dashboard.conftest import FREE_QUOTA, Shot, look, new_page, sign_up
from tests.mcp.conftest import Stack, start_stack
from tests.support.live_server import TEST_RUN_PREFIX, service_env

PLACES = ["Paris", "Austin, TX", "Berlin", "Tokyo", "Nairobi", "Lima"]
NOWHERE = "Qxzzyv Qqxzw"  # matches no place: NOT_FOUND, free
ROWS_PER_S = 2


@pytest.fixture(scope="module")
def jobs_dashboard(
    redis_url: str, geodata_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Stack]:
    logs = tmp_path_factory.mktemp("dashboard-jobs")
    env = service_env(
        database_url=f"sqlite:///{logs / 'geosvc.db'}",
        redis_url=redis_url,
        data_dir=geodata_dir,
        GEOSVC_REDIS_KEY_PREFIX=f"{TEST_RUN_PREFIX}dashboard-jobs:",
        GEOSVC_FREE_QUOTA=str(FREE_QUOTA),
        GEOSVC_JOB_CHUNK_ROWS="1",
        GEOSVC_FREE_JOB_ROWS_PER_S=str(ROWS_PER_S),
    )
    stack = start_stack(env, logs)
    yield stack
    stack.server.stop()
    stack.worker.stop(wait=False)


@pytest.fixture
def jobs_page(browser: Browser, jobs_dashboard: Stack, viewport: str) -> Iterator[Page]:
    with new_page(browser, jobs_dashboard.server.url, viewport) as opened:
        yield opened


def csv_file(queries: list[str]) -> dict[str, object]:
    lines = "query,limit\r\n" + "".join(f'"{query}",1\r\n' for query in queries)
    return {"name": "places.csv", "mimeType": "text/csv", "buffer": lines.encode()}


def upload(page: Page, queries: list[str]) -> None:
    page.goto("/dashboard/jobs")
    page.get_by_label("Tool").select_option("geocode")
    page.set_input_files("#file", files=[csv_file(queries)])  # type: ignore[list-item]
    page.get_by_role("button", name="Check the cost").click()


def test_upload_watch_download_and_cancel(jobs_page: Page, shot: Shot) -> None:
    page = jobs_page
    sign_up(page, shot, "Jo")
    page.goto("/dashboard/jobs")
    expect(page.get_by_test_id("no-jobs")).to_be_visible()
    look(page, shot, "jobs-empty")

    # The cost before the start: rows, credits, the month, the pace.
    upload(page, [*PLACES, NOWHERE, ""])
    estimate = page.get_by_test_id("estimate")
    expect(estimate.get_by_test_id("rows")).to_contain_text("8 (1 invalid")
    expect(estimate.get_by_test_id("credits")).to_contain_text("at most 7")
    expect(estimate.get_by_test_id("credits")).to_contain_text("are not charged")
    expect(estimate.get_by_test_id("quota")).to_contain_text(f"0 of {FREE_QUOTA} credits used")
    expect(estimate.get_by_test_id("pace")).to_have_text(
        f"{ROWS_PER_S} rows/s on the free plan: about 4 s"
    )
    look(page, shot, "jobs-estimate")

    # Start: the job's page, its bar moving to the end on its own (the page polls).
    page.get_by_role("button", name="Start the job").click()
    expect(page.get_by_role("heading", name="Upload: geocode")).to_be_visible()
    job_url = page.url
    bar = page.locator("[data-testid=job] progress")
    expect(bar).to_have_attribute("max", "8")
    look(page, shot, "job-working")
    expect(page.get_by_test_id("job-status")).to_have_text("completed", timeout=30_000)
    assert bar.evaluate("bar => [bar.value, bar.max]") == [8, 8]
    expect(page.get_by_test_id("rows-with-data")).to_have_text("6")
    expect(page.get_by_test_id("job-credits")).to_have_text("6")
    look(page, shot, "job-completed")

    # The results, downloaded through the session: a row per line, in input order.
    with page.expect_download() as download_info:
        page.get_by_test_id("download-csv").click()
    rows = list(csv.DictReader(io.StringIO(Path(download_info.value.path()).read_text())))
    assert [row["status"] for row in rows] == ["200"] * 6 + ["404", "400"]
    assert [json.loads(row["result"])["query"] for row in rows[:6]] == PLACES
    with page.expect_download() as download_info:
        page.get_by_test_id("download-jsonl").click()
    lines = Path(download_info.value.path()).read_text().splitlines()
    assert [json.loads(line)["row"] for line in lines] == list(range(8))

    # A long job (200 rows at 2 rows/s), cancelled from its page after a confirmation.
    upload(page, [NOWHERE] * 200)
    expect(page.get_by_test_id("pace")).to_contain_text("about 2 min")
    page.get_by_role("button", name="Start the job").click()
    expect(page.get_by_test_id("job-status")).to_have_text("working")
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Cancel the job").click()
    expect(page.get_by_role("status")).to_contain_text("The job is cancelled")
    expect(page.get_by_test_id("job-status")).to_have_text("cancelled")
    done = int(page.get_by_test_id("rows-done").inner_text())
    assert done < 200
    expect(page.get_by_role("button", name="Cancel the job")).to_have_count(0)
    look(page, shot, "job-cancelled")

    # Both in the one table, newest first.
    page.goto("/dashboard/jobs")
    table = page.get_by_test_id("jobs")
    statuses = table.get_by_test_id("job-status")
    expect(statuses).to_have_text(["cancelled", "completed"])
    expect(table.locator("tbody tr").first.get_by_role("link")).to_have_text("Upload")
    expect(table.locator(f"a[href='{urlsplit(job_url).path}']")).to_have_count(1)
    look(page, shot, "jobs-list")
