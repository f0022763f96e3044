"""One error hierarchy for every surface.

Services raise `AppError` subclasses; the HTTP edge (`app.http.errors`) renders them as
`{"error": {"code", "message", ...details}}` with the subclass's HTTP status, and the MCP
edge renders the same body as an `isError` tool result. Plain Python: no framework here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar


class AppError(Exception):
    code: ClassVar[str] = "INTERNAL"
    status: ClassVar[int] = 500
    default_message: ClassVar[str] = "Internal error"

    def __init__(self, message: str | None = None, **details: Any) -> None:
        self.message = message or self.default_message
        self.details = details
        # The account's credits when a metered call failed or was refused (an
        # app.metering.readings.MeterReading, set by metering): its answer says them.
        self.reading: Any = None
        # Seconds the same call is still refused without asking again, when this refusal
        # was given from memory (app.metering.recent_refusals): its client came back early.
        self.remembered_for_s: float | None = None
        super().__init__(self.message)

    def to_body(self) -> dict[str, Any]:
        return {"error": {"code": self.code, "message": self.message, **self.details}}


class InvalidArgument(AppError):
    code = "INVALID_ARGUMENT"
    status = 422
    default_message = "Invalid argument"


class Unsupported(AppError):
    """Something this deployment cannot answer at all (not "nothing there"): the message
    says what it does cover."""

    code = "UNSUPPORTED"
    status = 422


class Unauthenticated(AppError):
    code = "UNAUTHENTICATED"
    status = 401
    default_message = "Authentication required"


class Forbidden(AppError):
    code = "FORBIDDEN"
    status = 403
    default_message = "Forbidden"


class NotFound(AppError):
    code = "NOT_FOUND"
    status = 404
    default_message = "Not found"


class Conflict(AppError):
    code = "CONFLICT"
    status = 409
    default_message = "Conflict"


class KeyLimitReached(AppError):
    """The account already has the maximum number of active API keys."""

    code = "KEY_LIMIT_REACHED"
    status = 409
    default_message = "Active API key limit reached; revoke a key first"


class PaymentProviderUnavailable(AppError):
    code = "PAYMENT_PROVIDER_UNAVAILABLE"
    status = 503
    default_message = "The payment provider is not available"


class RateLimited(AppError):
    code = "RATE_LIMITED"
    status = 429
    default_message = "Too many requests"


class QuotaExceeded(AppError):
    """Free plan at its monthly cap, or the account's own cap; details carry quota, used,
    period, resetsAt. 402, not 429: waiting a moment does not help (the credits come back
    next month), paying (or raising the cap) does, and clients retry a 429 by themselves."""

    code = "QUOTA_EXCEEDED"
    status = 402
    default_message = "Monthly credit quota exhausted"


class UpstreamUnavailable(AppError):
    """The outside provider failed or is shed by its breaker; it costs nothing."""

    code = "UPSTREAM_UNAVAILABLE"
    status = 503
    default_message = "Upstream data provider unavailable"

    def __init__(self, message: str | None = None, **details: Any) -> None:
        # the provider may be back on the next try: a client's retry logic reads this
        details.setdefault("retryable", True)
        super().__init__(message, **details)


class DeadlineExceeded(AppError):
    """A tool call was not answered in time (workers busy or down); it costs nothing."""

    code = "DEADLINE_EXCEEDED"
    status = 504
    default_message = "The call did not finish in time; no credit was charged. Retry shortly."

    def __init__(self, message: str | None = None, **details: Any) -> None:
        # the same call may succeed on another worker: a client's retry logic reads this
        details.setdefault("retryable", True)
        super().__init__(message, **details)


class ServiceUnavailable(AppError):
    """A backing service (Redis, the database, the broker) is down for a moment; the
    same request is expected to work after `retryAfterSeconds`. Costs no credit."""

    code = "UNAVAILABLE"
    status = 503
    default_message = "The service is briefly unavailable; no credit was charged. Retry shortly."
    retry_after_s: ClassVar[int] = 2

    def __init__(self, message: str | None = None, **details: Any) -> None:
        details.setdefault("retryable", True)
        details.setdefault("retryAfterSeconds", self.retry_after_s)
        super().__init__(message, **details)


class Internal(AppError):
    pass


def unavailable_for(exc: BaseException) -> ServiceUnavailable | None:
    """The ServiceUnavailable of an outage of Redis, the database or the broker (their
    connection errors), else None: such a failure is retryable, never an INTERNAL."""
    from kombu.exceptions import OperationalError as BrokerError
    from redis.exceptions import (
        AskError,
        ClusterError,
        InvalidResponse,
        ReadOnlyError,
        RedisClusterException,
        TryAgainError,
    )
    from redis.exceptions import ConnectionError as RedisConnectionError
    from redis.exceptions import TimeoutError as RedisTimeoutError
    from sqlalchemy.exc import DBAPIError
    from sqlalchemy.exc import TimeoutError as PoolTimeout

    if isinstance(exc, RedisConnectionError | RedisTimeoutError | BrokerError | PoolTimeout):
        return ServiceUnavailable()
    # A Redis Cluster in motion: a slot moving (MOVED/ASK past the client's redirections,
    # TRYAGAIN), a shard down (CLUSTERDOWN), or keys of one command on two slots
    # (CROSSSLOT, raised by the client or the node), a failover (a node demoted to replica:
    # READONLY; a promoted one still loading: LOADING, a ConnectionError): refused, retryable.
    # MOVED/ASK/TRYAGAIN/READONLY are plain ResponseErrors to redis-py, their code taken off.
    # A reply cut off by a dying node is an InvalidResponse.
    moving = AskError | TryAgainError | ReadOnlyError | InvalidResponse  # MovedError: an Ask
    if isinstance(exc, ClusterError | RedisClusterException | moving) or _is_cluster_reply(exc):
        return ServiceUnavailable()
    if _connection_gone_inside_redis_py(exc):
        return ServiceUnavailable()
    if isinstance(exc, DBAPIError) and (
        exc.connection_invalidated
        or any(cls.__name__ in _DB_OUTAGE_ERRORS for cls in type(exc.orig).__mro__)
        or getattr(exc.orig, "sqlstate", None) in _DB_SWITCHING_SQLSTATES
    ):
        return ServiceUnavailable()
    return None


# Error replies of a cluster node that redis-py passes on as a plain ResponseError (from
# inside a pipeline or a script): the slot or the shard, not the command, is at fault.
_CLUSTER_REPLIES = (
    "MOVED ",
    "ASK ",
    "TRYAGAIN",
    "CLUSTERDOWN",
    "CROSSSLOT",
    "hash to the same slot",  # CROSSSLOT's text, once redis-py took the code off
    "non local key",  # a script reaching for a key of another slot
    "READONLY",  # a script's write refused by a replica (a demoted primary)
    "LOADING",
    "MASTERDOWN",
    "NOREPLICAS",
)


def _is_cluster_reply(exc: BaseException) -> bool:
    from redis.exceptions import ResponseError

    text = str(exc)
    return isinstance(exc, ResponseError) and any(part in text for part in _CLUSTER_REPLIES)


def _connection_gone_inside_redis_py(exc: BaseException) -> bool:
    """redis-py's asyncio cluster pipeline can use a connection a failover has just closed
    (`'NoneType' object has no attribute 'writelines'`): an AttributeError raised in
    redis-py's own code is its connection gone, not a fault of ours."""
    if not isinstance(exc, AttributeError) or exc.__traceback__ is None:
        return False
    innermost = exc.__traceback__
    while innermost.tb_next is not None:
        innermost = innermost.tb_next
    return str(innermost.tb_frame.f_globals.get("__name__", "")).startswith("redis.")


# DB-API exception classes raised when the database cannot be reached (PEP 249 names),
# and their subclasses: psycopg's QueryCanceled (the statement timeout) is one.
_DB_OUTAGE_ERRORS = frozenset({"OperationalError", "InterfaceError"})
# A write that reached a server which is a standby now (a primary demoted in a switchover,
# an address not yet moved to the promoted one): read_only_sql_transaction, an
# InternalError to the driver, but a failover in progress, so retryable.
_DB_SWITCHING_SQLSTATES = frozenset({"25006"})


def _documented(kind: str, description: str) -> dict[str, str]:
    return {"type": kind, "description": description}


# The JSON Schema of `AppError.to_body()`: tools' output schemas, the HTTP API's OpenAPI.
ERROR_ENVELOPE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "title": "Error",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["code", "message"],
            "properties": {
                "code": {
                    **_documented("string", "What went wrong"),
                    "examples": [
                        "INVALID_ARGUMENT",
                        "NOT_FOUND",
                        "UNSUPPORTED",
                        "FORBIDDEN",
                        "QUOTA_EXCEEDED",
                        "RATE_LIMITED",
                        "UPSTREAM_UNAVAILABLE",
                        "DEADLINE_EXCEEDED",
                        "UNAVAILABLE",
                        "INTERNAL",
                    ],
                },  # fmt: skip
                "message": _documented("string", "What to do about it, for people and agents"),
                "retryable": _documented("boolean", "True when the same call may succeed later"),
                "retryAfterSeconds": _documented("number", "Wait this long before retrying"),
                "limit": _documented(
                    "string",
                    "Which limit refused the call: key_rate, account_rate, concurrency "
                    "(RATE_LIMITED) or spend_cap (QUOTA_EXCEEDED)",
                ),
                "quota": _documented("integer", "Credits of the month (QUOTA_EXCEEDED)"),
                "used": _documented("integer", "Credits used this month (QUOTA_EXCEEDED)"),
                "cap": _documented("integer", "The account's own monthly cap (spend_cap)"),
                "period": _documented("string", "The month counted, YYYY-MM (QUOTA_EXCEEDED)"),
                "resetsAt": _documented("string", "When the credits come back, ISO 8601 UTC"),
                "reason": _documented(
                    "string", "Why the account may not call (FORBIDDEN): email_unverified"
                ),
            },
        }
    },
}


def _subclasses(cls: type[AppError]) -> list[type[AppError]]:
    return [cls, *(sub for direct in cls.__subclasses__() for sub in _subclasses(direct))]


def error_from_body(error: Mapping[str, Any]) -> AppError:
    """The AppError of an `{"code", "message", ...}` object (e.g. from a worker); unknown
    codes become INTERNAL."""
    details = {k: v for k, v in error.items() if k not in ("code", "message")}
    for cls in _subclasses(AppError):
        if cls.code == error.get("code") and cls is not AppError:
            return cls(str(error.get("message") or cls.default_message), **details)
    return Internal()
