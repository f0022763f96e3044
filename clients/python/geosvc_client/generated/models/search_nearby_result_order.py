from enum import StrEnum


class SearchNearbyResultOrder(StrEnum):
    DISTANCE = "distance"
    PROMINENCE = "prominence"

    def __str__(self) -> str:
        return str(self.value)
