from enum import StrEnum


class IncomeResultLevel(StrEnum):
    CIRCLE = "circle"
    CITY = "city"
    COUNTRY = "country"
    COUNTY = "county"
    POSTAL_CODE = "postal_code"
    SHAPE = "shape"
    STATE = "state"

    def __str__(self) -> str:
        return str(self.value)
