from enum import StrEnum


class SubmitJobTool(StrEnum):
    GEOCODE = "geocode"
    GET_AVERAGE_INCOME = "get_average_income"
    GET_DEMOGRAPHICS = "get_demographics"
    GET_POPULATION = "get_population"
    REVERSE_GEOCODE = "reverse_geocode"

    def __str__(self) -> str:
        return str(self.value)
