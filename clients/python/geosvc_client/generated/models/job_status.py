from enum import StrEnum


class JobStatus(StrEnum):
    CANCELLED = "cancelled"
    COMPLETED = "completed"
    FAILED = "failed"
    WORKING = "working"

    def __str__(self) -> str:
        return str(self.value)
