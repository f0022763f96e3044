from enum import StrEnum


class GetDemographicsTopicsItem(StrEnum):
    AGE = "age"
    EDUCATION = "education"
    EMPLOYMENT = "employment"
    HOUSEHOLDS = "households"
    HOUSING = "housing"
    POVERTY = "poverty"
    RACE = "race"

    def __str__(self) -> str:
        return str(self.value)
