from enum import StrEnum


class IncomeResultMeasure(StrEnum):
    HOUSEHOLD_WEIGHTED_MEAN_OF_ZIP_MEDIANS = "household_weighted_mean_of_zip_medians"
    MEAN_HOUSEHOLD_INCOME = "mean_household_income"
    MEDIAN_HOUSEHOLD_INCOME = "median_household_income"

    def __str__(self) -> str:
        return str(self.value)
