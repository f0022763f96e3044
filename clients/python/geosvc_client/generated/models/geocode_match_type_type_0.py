from enum import StrEnum


class GeocodeMatchTypeType0(StrEnum):
    BALLOONPORT = "balloonport"
    CLOSED = "closed"
    HELIPORT = "heliport"
    LARGE_AIRPORT = "large_airport"
    MEDIUM_AIRPORT = "medium_airport"
    SEAPLANE_BASE = "seaplane_base"
    SMALL_AIRPORT = "small_airport"

    def __str__(self) -> str:
        return str(self.value)
