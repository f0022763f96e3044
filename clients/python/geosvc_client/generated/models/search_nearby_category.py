from enum import StrEnum


class SearchNearbyCategory(StrEnum):
    AIRPORT = "airport"
    CITY = "city"
    POSTAL_CODE = "postal_code"

    def __str__(self) -> str:
        return str(self.value)
