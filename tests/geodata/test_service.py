from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from app.geodata import service

CALLS = [
    ("geocode", {"query": "Austin, TX"}),
    ("reverse_geocode", {"lat": 48.8566, "lon": 2.3522}),
    ("search_nearby", {"lat": 40.64, "lon": -73.78, "category": "airport", "radius_m": 20000}),
    ("get_population", {"postal_code": "10001"}),
    ("get_average_income", {"postal_code": "78701"}),
    ("static_map", {"center": {"lat": 30.0, "lon": -97.0}, "zoom": 6, "width": 200, "height": 150}),
]


class TestExecute:
    def test_threads_get_the_same_answers(self, geodata_dir: Path) -> None:
        expected = [service.execute(name, args) for name, args in CALLS]
        with ThreadPoolExecutor(max_workers=8) as pool:
            results = list(pool.map(lambda call: service.execute(*call), CALLS * 20))
        for index, result in enumerate(results):
            assert result == expected[index % len(CALLS)]

    def test_only_static_map_returns_a_png(self, geodata_dir: Path) -> None:
        for name, args in CALLS:
            result = service.execute(name, args)
            assert (result.png is not None) == (name == "static_map")
            assert "source" in result.structured

    def test_validate_arguments_output_is_accepted_again(self, geodata_dir: Path) -> None:
        for name, args in CALLS:
            normalised = service.validate_arguments(name, args)
            assert service.execute(name, normalised) == service.execute(name, args)
