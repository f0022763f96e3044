from enum import StrEnum


class ReverseGeocodeResultWaterType0(StrEnum):
    LAKE = "lake"
    SEA = "sea"

    def __str__(self) -> str:
        return str(self.value)
