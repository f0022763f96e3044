"""How prominent a place is, for ranking within search_nearby's radius.

Airports rank by their OurAirports class (large, medium, small, then heliports, seaplane
bases and balloon ports, closed last), then by scheduled airline service; an airport of
unknown class ranks as a small one. Cities rank by population. Postal codes have no
prominence: they are listed nearest first.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from app.geodata.indices.store import AIRPORT_TYPES

# class -> rank; the empty class (not known) ranks as small_airport
CLASS_RANK = {
    "large_airport": 4,
    "medium_airport": 3,
    "small_airport": 2,
    "": 2,
    "heliport": 1,
    "seaplane_base": 1,
    "balloonport": 1,
    "closed": 0,
}
_RANK_OF_CODE = np.asarray([CLASS_RANK[name] for name in AIRPORT_TYPES], dtype=np.int16)


def airport_prominence(
    types: npt.NDArray[Any], scheduled: npt.NDArray[Any]
) -> npt.NDArray[np.int16]:
    """Per airport: twice its class rank, plus one with scheduled airline service."""
    return np.asarray(_RANK_OF_CODE[types] * 2 + (scheduled == 1), dtype=np.int16)


def nearby_order(
    prominence: npt.NDArray[Any] | None, metres: npt.NDArray[Any], features: npt.NDArray[Any]
) -> npt.NDArray[np.intp]:
    """Positions sorted by prominence (most first), then distance, then feature id, or by
    distance then feature id without prominence. Every key ties only on the same place,
    so pages cut from this order never repeat or skip one."""
    if prominence is None:
        return np.lexsort((features, metres))
    return np.lexsort((features, metres, -np.asarray(prominence, dtype=np.int64)))


# geocode ranks a small airport with scheduled service like a town of this size
AIRPORT_RANK = 100_000.0


def airport_rank(prominence: int) -> float:
    """The population an airport ranks like in geocode: x10 per class, x3 for scheduled
    service (a large airport with airlines like a city of 10 M, so 'Heathrow' is the
    airport, not the town in Florida; an airport named after its city never outranks it:
    its name is only an alternate name, see airports_build.common_names)."""
    return AIRPORT_RANK * 10 ** ((prominence - 5) / 2)
