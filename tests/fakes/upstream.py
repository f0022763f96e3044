"""Fake upstream geodata providers: a real HTTP server on 127.0.0.1 speaking the wire
formats of Nominatim (search, reverse), Overpass (interpreter), the US Census ACS API (and
its data profiles: census_profile.py), the Census geocoder (census_geocoder.py) and an XYZ
PNG tile server, with fault injection for retry and outage tests.

Faults are set over HTTP (`POST /_faults`), so a worker in another process sees them too:
`{"service": "census", "status": 503, "count": 2, "retry_after": 0}` fails the next two
census requests; `"hang_s": 10` delays them instead; count -1 means until cleared;
`"status": 200, "body": "<html>..."` answers that body instead (errors inside a 200).
Every request's arrival time and User-Agent are recorded per service (`arrivals`,
`user_agents`), and `latency_s` delays every answer (for load benchmarks; also
`POST /_latency {"seconds": 0.2}`).

`python -m tests.fakes.upstream --port P --latency-ms 200` serves it as its own process.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import threading
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from PIL import Image
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from app.kit.embedded_redis import free_port
from tests.fakes import census_profile
from tests.fakes.census_geocoder import geographies

OSM_LICENCE = "Data © OpenStreetMap contributors, ODbL 1.0. http://osm.org/copyright"

PLACES: list[dict[str, Any]] = [
    {
        "place_id": 1001,
        "osm_type": "relation",
        "osm_id": 113314,
        "lat": "30.2711286",
        "lon": "-97.7436995",
        "category": "boundary",
        "type": "administrative",
        "place_rank": 16,
        "importance": 0.78,
        "addresstype": "city",
        "name": "Austin",
        "display_name": "Austin, Travis County, Texas, United States",
        "address": {
            "city": "Austin",
            "county": "Travis County",
            "state": "Texas",
            "ISO3166-2-lvl4": "US-TX",
            "postcode": "78701",
            "country": "United States",
            "country_code": "us",
        },
        "boundingbox": ["30.0985133", "30.5166255", "-97.9367663", "-97.5605288"],
    },
    {
        "place_id": 1002,
        "osm_type": "relation",
        "osm_id": 71525,
        "lat": "48.8534951",
        "lon": "2.3483915",
        "category": "boundary",
        "type": "administrative",
        "place_rank": 12,
        "importance": 0.88,
        "addresstype": "city",
        "name": "Paris",
        "display_name": "Paris, Île-de-France, France métropolitaine, France",
        "address": {
            "city": "Paris",
            "state": "Île-de-France",
            "ISO3166-2-lvl4": "FR-IDF",
            "postcode": "75004",
            "country": "France",
            "country_code": "fr",
        },
        "boundingbox": ["48.8155755", "48.9021560", "2.2241220", "2.4697602"],
    },
    {
        "place_id": 1003,
        "osm_type": "way",
        "osm_id": 5013364,
        "lat": "48.8582599",
        "lon": "2.2945006",
        "category": "man_made",
        "type": "tower",
        "place_rank": 30,
        "importance": 0.65,
        "addresstype": "man_made",
        "name": "Eiffel Tower",
        "display_name": "Eiffel Tower, Avenue Gustave Eiffel, Paris, Île-de-France, France",
        "address": {
            "man_made": "Eiffel Tower",
            "road": "Avenue Gustave Eiffel",
            "city": "Paris",
            "state": "Île-de-France",
            "ISO3166-2-lvl4": "FR-IDF",
            "postcode": "75007",
            "country": "France",
            "country_code": "fr",
        },
        "boundingbox": ["48.8574753", "48.8590453", "2.2933119", "2.2956897"],
    },
]

CAFES: list[dict[str, Any]] = [
    {
        "type": "node",
        "id": 501,
        "lat": 30.2672,
        "lon": -97.7431,
        "tags": {"amenity": "cafe", "name": "Congress Avenue Coffee"},
    },
    {
        "type": "way",
        "id": 502,
        "center": {"lat": 30.2690, "lon": -97.7400},
        "tags": {"amenity": "cafe", "name": "Sixth Street Espresso"},
    },
    {"type": "node", "id": 503, "lat": 30.3000, "lon": -97.7000, "tags": {"amenity": "cafe"}},
]

# Overpass features by the tag selector a query contains.
FEATURES: dict[str, list[dict[str, Any]]] = {
    '"amenity"="cafe"': CAFES,
    '"amenity"="hospital"': [
        {
            "type": "way",
            "id": 601,
            "center": {"lat": 30.2760, "lon": -97.7340},
            "tags": {"amenity": "hospital", "name": "Dell Seton Medical Center"},
        }
    ],
    '"tourism"="hotel"': [
        {
            "type": "node",
            "id": 701,
            "lat": 30.2650,
            "lon": -97.7440,
            "tags": {"tourism": "hotel", "name": "Driskill Hotel"},
        }
    ],
}

# ACS 5-year rows keyed by ZCTA: population, median household income, per-capita income,
# aggregate household income, households.
ACS: dict[str, tuple[int, int, int, int, int]] = {
    "94103": (34_786, 94_354, 66_102, 3_541_050_300, 17_520),
    "10001": (27_004, 101_409, 92_330, 2_811_021_500, 14_052),
    "99999": (0, -666_666_666, -666_666_666, -666_666_666, 0),  # ACS "no estimate"
}
ACS_VARIABLES = ("B01003_001E", "B19013_001E", "B19301_001E", "B19025_001E", "B11001_001E")
# Larger geographies by (for, in): NAME, then B01003_001E, _001M, B19013_001E, _001M
# (ACS 2019-2023 published figures for these; the fake answers the year asked).
ACS_AREAS: dict[tuple[str, str], tuple[str, int, int, int, int]] = {
    ("us:1", ""): ("United States", 332_387_540, -555_555_555, 78_538, 157),
    ("state:48", ""): ("Texas", 29_640_343, -555_555_555, 76_292, 216),
    ("state:06", ""): ("California", 39_242_785, -555_555_555, 96_334, 233),
    ("county:453", "state:48"): ("Travis County, Texas", 1_305_154, -555_555_555, 97_169, 1_058),
    # a county with too few households for a median: the annotation value
    ("county:301", "state:48"): ("Loving County, Texas", 43, 36, -666_666_666, -222_222_222),
    ("place:05000", "state:48"): ("Austin city, Texas", 967_862, 168, 91_461, 1_048),
}
ACS_PLACES = {
    "48": [
        ("05000", "Austin city, Texas"),
        ("35000", "Houston city, Texas"),
        ("04912", "Austwell city, Texas"),
    ]
}


@dataclass
class Fault:
    status: int = 503
    count: int = 1
    retry_after: str | None = None
    hang_s: float = 0.0
    body: str | None = None
    media_type: str = "text/html"


@dataclass
class FakeState:
    faults: dict[str, Fault] = field(default_factory=dict)
    requests: Counter[str] = field(default_factory=Counter)
    lock: threading.Lock = field(default_factory=threading.Lock)
    # time.monotonic() of each request's arrival, and the User-Agents seen, per service
    arrivals: defaultdict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    user_agents: defaultdict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    latency_s: float = 0.0

    def record(self, service: str, request: Request) -> None:
        with self.lock:
            self.arrivals[service].append(time.monotonic())
            self.user_agents[service].add(request.headers.get("user-agent", ""))

    def take_fault(self, service: str) -> Fault | None:
        with self.lock:
            self.requests[service] += 1
            fault = self.faults.get(service)
            if fault is None:
                return None
            if fault.count > 0:
                fault.count -= 1
                if fault.count == 0:
                    del self.faults[service]
            return fault


def _tile_png(z: int, x: int, y: int) -> bytes:
    shade = (z * 40 + x * 7 + y * 13) % 60
    image = Image.new("RGB", (256, 256), (200 + shade // 3, 220, 235))
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return buffer.getvalue()


def create_fake_app(state: FakeState) -> Starlette:
    async def faulted(service: str, request: Request) -> Response | None:
        state.record(service, request)
        if state.latency_s:
            await asyncio.sleep(state.latency_s)
        fault = state.take_fault(service)
        if fault is None:
            return None
        if fault.hang_s:
            await asyncio.sleep(fault.hang_s)
            return None
        if fault.body is not None:
            return Response(fault.body, fault.status, media_type=fault.media_type)
        headers = {"Retry-After": fault.retry_after} if fault.retry_after is not None else {}
        return JSONResponse({"error": "injected fault"}, fault.status, headers=headers)

    async def search(request: Request) -> Response:
        if failure := await faulted("nominatim", request):
            return failure
        query = request.query_params.get("q", "").lower()
        countries = request.query_params.get("countrycodes", "")
        limit = int(request.query_params.get("limit", "10"))
        hits = [
            place
            for place in PLACES
            if place["name"].lower() in query
            and (not countries or place["address"]["country_code"] in countries.split(","))
        ]
        return JSONResponse([{**hit, "licence": OSM_LICENCE} for hit in hits[:limit]])

    async def reverse(request: Request) -> Response:
        if failure := await faulted("nominatim", request):
            return failure
        lat = float(request.query_params["lat"])
        lon = float(request.query_params["lon"])
        best = min(
            PLACES, key=lambda p: (float(p["lat"]) - lat) ** 2 + (float(p["lon"]) - lon) ** 2
        )
        if abs(float(best["lat"]) - lat) > 1 or abs(float(best["lon"]) - lon) > 1:
            return JSONResponse({"error": "Unable to geocode"})
        return JSONResponse({**best, "licence": OSM_LICENCE})

    async def interpreter(request: Request) -> Response:
        if failure := await faulted("overpass", request):
            return failure
        form = await request.form()
        query = str(form.get("data", ""))
        elements = [e for tag, found in FEATURES.items() if tag in query for e in found]
        return JSONResponse(
            {
                "version": 0.6,
                "generator": "Overpass API (fake)",
                "osm3s": {"copyright": OSM_LICENCE},
                "elements": elements,
            }
        )

    async def acs(request: Request) -> Response:
        if failure := await faulted("census", request):
            return failure
        get = request.query_params.get("get", "").split(",")
        geography = request.query_params.get("for", "")
        within = request.query_params.get("in", "")
        if geography == "place:*" and within.startswith("state:"):
            listed = ACS_PLACES.get(within.split(":", 1)[1], [])
            state = within.split(":", 1)[1]
            return JSONResponse([["NAME", "state", "place"], *[[n, state, c] for c, n in listed]])
        if not geography.startswith("zip code tabulation area:"):
            area = ACS_AREAS.get((geography, within))
            if area is None and geography.split(":")[0] in ("us", "state", "county", "place"):
                return Response(status_code=204)
            if area is None:
                return Response("error: unknown/unsupported geography hierarchy", 400)
            variables = ("NAME", "B01003_001E", "B01003_001M", "B19013_001E", "B19013_001M")
            by_name = dict(zip(variables, area, strict=True))
            keys = [k.split(":")[0] for k in (within, geography) if k]
            codes = [k.split(":")[1] for k in (within, geography) if k]
            return JSONResponse([[*get, *keys], [*[str(by_name.get(v)) for v in get], *codes]])
            return Response("error: unknown/unsupported geography hierarchy", 400)
        zcta = geography.split(":", 1)[1]
        row = ACS.get(zcta)
        if row is None:
            return Response(status_code=204)
        values = dict(zip(ACS_VARIABLES, row, strict=True))
        header = [*get, "zip code tabulation area"]
        data = [f"ZCTA5 {zcta}" if v == "NAME" else str(values.get(v)) for v in get]
        return JSONResponse([header, [*data, zcta]])

    async def acs_profile(request: Request) -> Response:
        if failure := await faulted("census", request):
            return failure
        query = request.query_params
        status, body = census_profile.answer(
            query.get("get", "").split(","), query.get("for", ""), query.get("in", "")
        )
        if status == 204:
            return Response(status_code=204)
        if status != 200:
            return Response(str(body), status)
        return JSONResponse(body)

    async def census_geographies(request: Request) -> Response:
        if failure := await faulted("census-geocoder", request):
            return failure
        query = request.query_params
        return JSONResponse(geographies(float(query["x"]), float(query["y"])))

    async def tile(request: Request) -> Response:
        if failure := await faulted("tiles", request):
            return failure
        z, x, y = (int(request.path_params[k]) for k in ("z", "x", "y"))
        if not (0 <= x < 2**z and 0 <= y < 2**z):
            return Response("tile out of range", 404)
        return Response(_tile_png(z, x, y), media_type="image/png")

    async def set_fault(request: Request) -> Response:
        body = await request.json()
        with state.lock:
            if body.get("clear"):
                state.faults.clear()
            else:
                state.faults[body["service"]] = Fault(
                    status=int(body.get("status", 503)),
                    count=int(body.get("count", 1)),
                    retry_after=body.get("retry_after"),
                    hang_s=float(body.get("hang_s", 0)),
                    body=body.get("body"),
                    media_type=body.get("media_type", "text/html"),
                )
        return JSONResponse({"ok": True})

    async def set_latency(request: Request) -> Response:
        body = await request.json()
        state.latency_s = float(body["seconds"])
        return JSONResponse({"ok": True})

    async def stats(_request: Request) -> Response:
        with state.lock:
            return JSONResponse(dict(state.requests))

    return Starlette(
        routes=[
            Route("/search", search),
            Route("/reverse", reverse),
            Route("/api/interpreter", interpreter, methods=["POST", "GET"]),
            Route("/data/{year:int}/acs/acs5", acs),
            Route("/data/{year:int}/acs/acs5/profile", acs_profile),
            Route("/geocoder/geographies/coordinates", census_geographies),
            Route("/tiles/{z:int}/{x:int}/{y:int}.png", tile),
            Route("/_faults", set_fault, methods=["POST"]),
            Route("/_latency", set_latency, methods=["POST"]),
            Route("/_stats", stats),
        ]
    )


class FakeUpstream:
    """Runs the fake app with uvicorn in a background thread of the test process."""

    def __init__(self, latency_s: float = 0.0) -> None:
        self.state = FakeState(latency_s=latency_s)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(
            create_fake_app(self.state), host="127.0.0.1", port=self.port, log_level="warning"
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, daemon=True, name="fake-upstream")

    def start(self) -> FakeUpstream:
        self._thread.start()
        while not self._server.started:
            if not self._thread.is_alive():
                raise RuntimeError("fake upstream failed to start")
            self._thread.join(0.01)
        return self

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(10)

    def fail(self, service: str, **fault: Any) -> None:
        with self.state.lock:
            self.state.faults[service] = Fault(**fault)

    def clear(self) -> None:
        with self.state.lock:
            self.state.faults.clear()
            self.state.requests.clear()
            self.state.arrivals.clear()
            self.state.user_agents.clear()

    def arrivals(self, service: str) -> list[float]:
        """Monotonic arrival times of `service`'s requests, in order."""
        with self.state.lock:
            return sorted(self.state.arrivals[service])

    def user_agents(self, service: str) -> set[str]:
        with self.state.lock:
            return set(self.state.user_agents[service])

    def requests(self, service: str) -> int:
        with self.state.lock:
            return self.state.requests[service]

    def env(self) -> dict[str, str]:
        """Settings that point every tool at this fake (for a server or worker process)."""
        return {
            "GEOSVC_NOMINATIM_URL": self.url,
            "GEOSVC_OVERPASS_URL": f"{self.url}/api",
            "GEOSVC_CENSUS_URL": f"{self.url}/data",
            "GEOSVC_CENSUS_GEOCODER_URL": f"{self.url}/geocoder",
            "GEOSVC_TILE_URL_TEMPLATE": f"{self.url}/tiles/{{z}}/{{x}}/{{y}}.png",
            # The fake is not a public instance: keep the limiters on, but out of the way.
            "GEOSVC_NOMINATIM_RATE_PER_S": "200",
            "GEOSVC_OVERPASS_RATE_PER_S": "200",
            "GEOSVC_CENSUS_RATE_PER_S": "200",
            "GEOSVC_CENSUS_GEOCODER_RATE_PER_S": "200",
        }


def main() -> None:
    parser = argparse.ArgumentParser(description="Serve the fake upstream providers.")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--latency-ms", type=float, default=0.0)
    args = parser.parse_args()
    app = create_fake_app(FakeState(latency_s=args.latency_ms / 1000))
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning", access_log=False)


if __name__ == "__main__":
    main()
