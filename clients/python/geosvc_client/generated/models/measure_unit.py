from enum import StrEnum


class MeasureUnit(StrEnum):
    COUNT = "count"
    DOLLARS = "dollars"
    MINUTES = "minutes"
    PERCENT = "percent"
    PERSONS = "persons"
    YEARS = "years"

    def __str__(self) -> str:
        return str(self.value)
