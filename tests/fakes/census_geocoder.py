"""The US Census Bureau geocoder's geographies-by-coordinates answer, as the fake upstream
serves it (`GET /geocoder/geographies/coordinates?x=&y=&benchmark=&vintage=&layers=all
&format=json`): a few known points, each answering its layers; anywhere else (outside
the US, at sea) the layers come back empty, as the real service does. The ZCTA layer's
name carries its vintage, as the real one does."""

from __future__ import annotations

from typing import Any

ZCTA_LAYER = "2020 Census ZIP Code Tabulation Areas"

# (lat, lon) -> layers, from the Census Bureau's published geographies of these points
POINTS: dict[tuple[float, float], dict[str, list[dict[str, Any]]]] = {
    (30.2711, -97.7437): {  # Austin, the fake Nominatim's point
        "States": [{"GEOID": "48", "STATE": "48", "STUSAB": "TX", "NAME": "Texas"}],
        "Counties": [{"GEOID": "48453", "STATE": "48", "COUNTY": "453", "NAME": "Travis County"}],
        "Census Tracts": [{"GEOID": "48453001100", "NAME": "Census Tract 11"}],
        "Incorporated Places": [{"GEOID": "4805000", "NAME": "Austin city"}],
        ZCTA_LAYER: [{"GEOID": "78701", "ZCTA5": "78701", "NAME": "ZCTA5 78701"}],
    },
    (30.2, -97.7): {  # a point with a county but no ZCTA (a lake, a park)
        "States": [{"GEOID": "48", "STATE": "48", "STUSAB": "TX", "NAME": "Texas"}],
        "Counties": [{"GEOID": "48453", "STATE": "48", "COUNTY": "453", "NAME": "Travis County"}],
        ZCTA_LAYER: [],
    },
}
EMPTY_LAYERS = ("States", "Counties", "Census Tracts", "Incorporated Places", ZCTA_LAYER)


def geographies(x: float, y: float) -> dict[str, Any]:
    """The JSON body answered for the point (x = lon, y = lat)."""
    layers = next(
        (found for (lat, lon), found in POINTS.items() if abs(lat - y) + abs(lon - x) < 1e-3),
        {layer: [] for layer in EMPTY_LAYERS},
    )
    return {
        "result": {
            "input": {
                "location": {"x": x, "y": y},
                "benchmark": {"benchmarkName": "Public_AR_Current"},
                "vintage": {"vintageName": "Current_Current"},
            },
            "geographies": layers,
        }
    }
