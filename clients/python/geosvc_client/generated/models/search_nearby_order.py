from enum import StrEnum


class SearchNearbyOrder(StrEnum):
    DISTANCE = "distance"
    PROMINENCE = "prominence"

    def __str__(self) -> str:
        return str(self.value)
