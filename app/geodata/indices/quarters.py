"""The division a big city is: GeoNames often gives a city no admin2 while its quarters
sit in an admin2 named after it ('Toronto' and 'Toronto county', 'São Paulo' and 'São
Paulo', 'Karachi' and 'Karachi East District'). Such a division is the city itself, so
its much smaller places are quarters even beyond the city's reach (build.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from app.geodata.text import normalize

# how far from the city's point its own division's places count as its quarters
OWN_DIVISION_KM = 15.0


def _named_after(division: str, city: str) -> bool:
    division, city = normalize(division), normalize(city)
    return bool(city) and (division == city or division.startswith(city + " "))


def own_division(city: str, admin2: Any, admin2_names: Sequence[str]) -> int | None:
    """The admin2 row named after `city` among `admin2` (the admin2 rows of the places
    around it), else None. Only for a city without an admin2 of its own: a province
    named like its capital (Madrid) holds separate towns."""
    for row in np.unique(admin2).tolist():
        if row >= 0 and _named_after(admin2_names[row], city):
            return int(row)
    return None
