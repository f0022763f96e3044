from enum import StrEnum


class GeocodeCandidateKind(StrEnum):
    ADDRESS = "address"
    ADMIN1 = "admin1"
    CITY = "city"
    COUNTRY = "country"
    POI = "poi"
    POSTAL_CODE = "postal_code"

    def __str__(self) -> str:
        return str(self.value)
