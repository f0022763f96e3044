"""Ring studies over /v1 (issue 54): `around=LAT,LON,RADIUS_M` on /v1/population and
/v1/average-income, circles in a batch, and a bad circle refused by rule, free."""

from __future__ import annotations

from tests.v1.conftest import Client, assert_documented


class TestRingsOverV1:
    def test_population_around_a_point_states_its_method(self, client: Client) -> None:
        response = client.api.get("/v1/population", params={"around": "39.7392,-104.9903,5000"})

        assert response.status_code == 200, response.text
        assert_documented(response)
        answer = response.json()
        assert (answer["level"], answer["method"]) == ("circle", "zcta_area_share")
        assert answer["population"] > 100_000
        assert any("Typical error in the US" in w for w in answer["warnings"])

    def test_income_around_a_point_is_not_called_a_median(self, client: Client) -> None:
        response = client.api.get("/v1/average-income", params={"around": "39.7392,-104.9903,5000"})

        assert response.status_code == 200, response.text
        assert response.json()["measure"] == "household_weighted_mean_of_zip_medians"

    def test_a_radius_over_the_limit_is_refused_by_rule(self, client: Client) -> None:
        response = client.api.get("/v1/population", params={"around": "39.7,-104.9,200000"})

        assert response.status_code == 400, response.text
        error = response.json()["error"]
        assert error["code"] == "INVALID_ARGUMENT"
        assert "around.radius_m: must be at most 100000" in error["message"]

    def test_a_batch_of_circles_answers_each(self, client: Client) -> None:
        items = [
            {"around": {"lat": 39.7392, "lon": -104.9903, "radius_m": 5000}},
            {"around": {"lat": 30.0, "lon": -40.0, "radius_m": 5000}},
            {"around": {"lat": 30.0, "lon": -40.0, "radius_m": 0}},
        ]
        response = client.api.post("/v1/population/batch", json={"items": items})

        assert response.status_code == 200, response.text
        results = response.json()["results"]
        assert results[0]["result"]["population"] > 100_000
        assert results[1]["result"]["population"] == 0  # open ocean: 0, not an error
        assert results[2]["error"]["code"] == "INVALID_ARGUMENT"

    def test_demographics_around_a_point(self, client: Client) -> None:
        response = client.api.get(
            "/v1/demographics", params={"around": "39.7392,-104.9903,5000", "topics": "age"}
        )

        assert response.status_code == 200, response.text
        names = [m["name"] for m in response.json()["measures"]]
        assert names == ["weighted_mean_of_zip_median_age", "share_under_18", "share_65_and_over"]

    def test_a_batch_of_circles_for_demographics(self, client: Client) -> None:
        items = [
            {"around": {"lat": 39.7392, "lon": -104.9903, "radius_m": 5000}, "topics": ["age"]},
            {"around": {"lat": 39.7392, "lon": -104.9903, "radius_m": -5}},
        ]
        response = client.api.post("/v1/demographics/batch", json={"items": items})

        assert response.status_code == 200, response.text
        results = response.json()["results"]
        names = [m["name"] for m in results[0]["result"]["measures"]]
        assert names[0] == "weighted_mean_of_zip_median_age"
        assert results[1]["error"]["code"] == "INVALID_ARGUMENT"
        assert response.json()["credits"] == 1

    def test_within_a_bbox_and_a_polygon_in_the_query(self, client: Client) -> None:
        box = client.api.get("/v1/population", params={"within": "-105.05,39.7,-104.95,39.8"})
        polygon = client.api.get(
            "/v1/demographics",
            params={"within": "-105.05,39.7|-104.95,39.7|-104.95,39.8", "topics": "age"},
        )

        assert box.status_code == polygon.status_code == 200, box.text + polygon.text
        assert_documented(box)
        assert (box.json()["level"], box.json()["method"]) == ("shape", "zcta_area_share")
        assert box.json()["population"] > 100_000
        assert polygon.json()["name"].startswith("polygon of 3 vertices")

    def test_a_bad_shape_is_refused_by_rule(self, client: Client) -> None:
        crossing = client.api.get(
            "/v1/population", params={"within": "-105,39.7|-104.9,39.8|-104.9,39.7|-105,39.8"}
        )
        garbled = client.api.get("/v1/population", params={"within": "-105,39.7,-104.9"})

        assert crossing.status_code == garbled.status_code == 400
        assert "polygon crosses itself" in crossing.json()["error"]["message"]
        assert "within: must be WEST,SOUTH,EAST,NORTH" in garbled.json()["error"]["message"]
