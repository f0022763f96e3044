"""All SQLModel tables. Timestamps are UTC; secrets are stored only as hashes."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Column, DateTime, Text, UniqueConstraint
from sqlmodel import Field, SQLModel

from app.kit.clock import utcnow


def _utc_column(*, nullable: bool = False, index: bool = False) -> Column[datetime]:
    return Column(DateTime(timezone=True), nullable=nullable, index=index)


class User(SQLModel, table=True):
    __tablename__ = "users"

    id: str = Field(primary_key=True, max_length=40)
    email: str = Field(unique=True, index=True, max_length=320)
    name: str | None = Field(default=None, max_length=200)
    password_hash: str = Field(max_length=200)
    created_at: datetime = Field(default_factory=utcnow, sa_column=_utc_column())
    # The account's own limit on credits a month (None: none); calls past it are refused.
    monthly_credit_cap: int | None = Field(default=None)
    # When the address was proven (a link followed); None: not yet, and with e-mail
    # verification on, the account's keys make no data calls.
    email_verified_at: datetime | None = Field(default=None, sa_column=_utc_column(nullable=True))
    # The address as one mailbox (no +tag; Gmail without dots): one account per mailbox,
    # so one free quota. None only for a deleted account (or an older duplicate).
    # A unique index (ix_users_mailbox), as migration 0006 made it.
    mailbox: str | None = Field(default=None, unique=True, index=True, max_length=320)
    # An address the owner asked to move to, until the link sent there is followed.
    pending_email: str | None = Field(default=None, max_length=320)
    # Set when the account was deleted: the row stays (ledger rows name its id) with no
    # e-mail, name or password left.
    deleted_at: datetime | None = Field(default=None, sa_column=_utc_column(nullable=True))
    # Bumped whenever the account may have changed hands or its address changed (a
    # password reset or change, a confirmation, a deletion): an e-mail link carries the
    # generation it was made in and dies with it (app/users/reclaim.py).
    generation: int = Field(default=0, sa_column_kwargs={"server_default": "0"})


class AuthSession(SQLModel, table=True):
    """A dashboard sign-in; the cookie holds a random token, the table only its hash."""

    __tablename__ = "auth_sessions"

    token_hash: str = Field(primary_key=True, max_length=64)
    user_id: str = Field(foreign_key="users.id", index=True, max_length=40)
    created_at: datetime = Field(default_factory=utcnow, sa_column=_utc_column())
    expires_at: datetime = Field(sa_column=_utc_column())


class EmailToken(SQLModel, table=True):
    """A link sent by e-mail (confirm an address, reset a password): the mail holds a
    random token, this table only its hash; used once, then deleted."""

    __tablename__ = "email_tokens"

    token_hash: str = Field(primary_key=True, max_length=64)
    user_id: str = Field(foreign_key="users.id", index=True, max_length=40)
    purpose: str = Field(max_length=16)  # verify | change_email | reset
    email: str = Field(max_length=320)  # the address the link was sent to
    # The account's generation when the link was made: a later one makes it invalid.
    generation: int = Field(default=0, sa_column_kwargs={"server_default": "0"})
    created_at: datetime = Field(default_factory=utcnow, sa_column=_utc_column())
    expires_at: datetime = Field(sa_column=_utc_column())


class ApiKey(SQLModel, table=True):
    __tablename__ = "api_keys"

    key_id: str = Field(primary_key=True, max_length=32)
    user_id: str = Field(foreign_key="users.id", index=True, max_length=40)
    name: str = Field(max_length=64)
    env: str = Field(default="live", max_length=16)
    scopes: str = Field(default="read:data", max_length=200)  # space-separated
    secret_hash: str = Field(max_length=64)  # HMAC-SHA256(pepper, secret), hex
    created_at: datetime = Field(default_factory=utcnow, sa_column=_utc_column())
    revoked_at: datetime | None = Field(default=None, sa_column=_utc_column(nullable=True))
    # Refused from this moment on, like a revoked key (None: never expires).
    expires_at: datetime | None = Field(default=None, sa_column=_utc_column(nullable=True))
    # The latest charged call, kept by the ledger drain; the request log knows later ones.
    last_used_at: datetime | None = Field(default=None, sa_column=_utc_column(nullable=True))


class Subscription(SQLModel, table=True):
    """One row per account, updated in place as the subscription moves through states."""

    __tablename__ = "subscriptions"

    user_id: str = Field(foreign_key="users.id", primary_key=True, max_length=40)
    plan: str = Field(default="free", max_length=16)
    status: str = Field(default="none", max_length=16)
    provider: str = Field(default="local", max_length=16)
    # Stripe ids may be up to 255 characters (Checkout Session ids are about 66).
    checkout_id: str | None = Field(default=None, index=True, max_length=255)
    # Where to pay and until when, as the provider said at creation (None: never
    # expires), so reads show a pending checkout without asking the provider.
    checkout_url: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    checkout_expires_at: datetime | None = Field(default=None, sa_column=_utc_column(nullable=True))
    provider_ref: str | None = Field(default=None, max_length=128)
    current_period_start: datetime | None = Field(
        default=None, sa_column=_utc_column(nullable=True)
    )
    current_period_end: datetime | None = Field(default=None, sa_column=_utc_column(nullable=True))
    cancel_at_period_end: bool = False
    updated_at: datetime = Field(default_factory=utcnow, sa_column=_utc_column())


class UsageEvent(SQLModel, table=True):
    """The ledger: one row per successful (charged) call; call_id makes inserts idempotent."""

    __tablename__ = "usage_events"
    __table_args__ = (UniqueConstraint("call_id"),)

    id: int | None = Field(default=None, primary_key=True)
    call_id: str = Field(max_length=64)
    user_id: str = Field(index=True, max_length=40)
    key_id: str | None = Field(default=None, max_length=32)
    tool: str = Field(max_length=64)
    credits: int = 1
    period: str = Field(index=True, max_length=7)
    created_at: datetime = Field(default_factory=utcnow, sa_column=_utc_column())


class UsagePeriod(SQLModel, table=True):
    """A finalised month of one account, written once by the rollover."""

    __tablename__ = "usage_periods"
    __table_args__ = (UniqueConstraint("user_id", "period"),)

    id: int | None = Field(default=None, primary_key=True)
    user_id: str = Field(index=True, max_length=40)
    period: str = Field(max_length=7)
    plan: str = Field(max_length=16)
    quota: int
    used: int
    overage: int
    finalized_at: datetime = Field(default_factory=utcnow, sa_column=_utc_column())


class UsageAlert(SQLModel, table=True):
    """A usage alert e-mail of one account and month: `warning` (80 % of the quota) or
    `quota` (all of it). The unique key keeps it to one of each per month and quota."""

    __tablename__ = "usage_alerts"
    __table_args__ = (UniqueConstraint("user_id", "period", "kind", "quota"),)

    id: int | None = Field(default=None, primary_key=True)
    user_id: str = Field(index=True, max_length=40)
    period: str = Field(max_length=7)
    kind: str = Field(max_length=16)
    quota: int
    created_at: datetime = Field(default_factory=utcnow, sa_column=_utc_column())
    sent_at: datetime | None = Field(default=None, sa_column=_utc_column(nullable=True))


class StripeCustomer(SQLModel, table=True):
    """The Stripe Customer of an account: created once, reused for every checkout."""

    __tablename__ = "stripe_customers"

    user_id: str = Field(foreign_key="users.id", primary_key=True, max_length=40)
    customer_id: str = Field(unique=True, max_length=255)
    created_at: datetime = Field(default_factory=utcnow, sa_column=_utc_column())


class StripeWebhookEvent(SQLModel, table=True):
    """Webhook event ids already applied: a redelivered event is answered and skipped."""

    __tablename__ = "stripe_webhook_events"

    event_id: str = Field(primary_key=True, max_length=255)
    type: str = Field(max_length=100)
    received_at: datetime = Field(default_factory=utcnow, sa_column=_utc_column())


class StripeMeterReport(SQLModel, table=True):
    """One batch of overage reported to Stripe as a meter event.

    Written (with its identifier) before the send and marked `sent_at` after, so a batch
    whose send outcome is unknown is re-sent with the same identifier, which Stripe
    counts once. `overage_from`/`overage_to` are the account's overage in `period` before
    and after this batch; the next batch starts where the last one ended.
    """

    __tablename__ = "stripe_meter_reports"
    __table_args__ = (UniqueConstraint("user_id", "period", "overage_from"),)

    id: int | None = Field(default=None, primary_key=True)
    user_id: str = Field(index=True, max_length=40)
    customer_id: str = Field(max_length=255)
    period: str = Field(max_length=7)
    overage_from: int
    overage_to: int
    identifier: str = Field(unique=True, max_length=100)
    created_at: datetime = Field(default_factory=utcnow, sa_column=_utc_column())
    sent_at: datetime | None = Field(default=None, sa_column=_utc_column(nullable=True))


class AdminAction(SQLModel, table=True):
    """The audit trail of `geosvc admin`: who did what to which account, when and why."""

    __tablename__ = "admin_actions"

    id: int | None = Field(default=None, primary_key=True)
    at: datetime = Field(default_factory=utcnow, sa_column=_utc_column(index=True))
    actor: str = Field(max_length=200)
    action: str = Field(max_length=32)
    user_id: str = Field(index=True, max_length=40)
    reason: str = Field(max_length=500)
    details: str = Field(default="{}", max_length=2000)  # JSON


class OAuthClient(SQLModel, table=True):
    """An OAuth client: registered dynamically (RFC 7591, `kind` "dcr") or known by its
    Client ID Metadata Document (`kind` "cimd": client_id is the document's https URL,
    re-fetched once `metadata_expires_at` has passed)."""

    __tablename__ = "oauth_clients"

    client_id: str = Field(primary_key=True, max_length=512)
    kind: str = Field(max_length=8)
    client_name: str = Field(max_length=100)
    client_uri: str | None = Field(default=None, max_length=512)
    redirect_uris: str = Field(sa_column=Column(Text, nullable=False))  # JSON list
    grant_types: str = Field(default="authorization_code", max_length=100)  # space-separated
    token_endpoint_auth_method: str = Field(default="none", max_length=32)
    client_secret_hash: str | None = Field(default=None, max_length=64)  # HMAC, hex
    created_at: datetime = Field(default_factory=utcnow, sa_column=_utc_column())
    metadata_expires_at: datetime | None = Field(default=None, sa_column=_utc_column(nullable=True))


class OAuthGrant(SQLModel, table=True):
    """A connected app: one person's consent to one client. Its id stands where a key id
    would (the ledger's key_id, rate buckets), so usage names the app as it names a key;
    revoking it ends every token issued under it."""

    __tablename__ = "oauth_grants"

    id: str = Field(primary_key=True, max_length=32)  # "app_" + 16 lowercase alphanumerics
    user_id: str = Field(foreign_key="users.id", index=True, max_length=40)
    client_id: str = Field(foreign_key="oauth_clients.client_id", index=True, max_length=512)
    scope: str = Field(max_length=200)
    created_at: datetime = Field(default_factory=utcnow, sa_column=_utc_column())
    revoked_at: datetime | None = Field(default=None, sa_column=_utc_column(nullable=True))


class OAuthCode(SQLModel, table=True):
    """An authorization code (hashed): single use (`used_at`), short lived, bound to the
    client, redirect URI, resource and PKCE challenge of its request."""

    __tablename__ = "oauth_codes"

    code_hash: str = Field(primary_key=True, max_length=64)
    grant_id: str = Field(foreign_key="oauth_grants.id", index=True, max_length=32)
    client_id: str = Field(max_length=512)
    redirect_uri: str = Field(sa_column=Column(Text, nullable=False))
    scope: str = Field(max_length=200)
    resource: str = Field(max_length=512)
    code_challenge: str = Field(max_length=128)
    code_challenge_method: str = Field(max_length=8)
    created_at: datetime = Field(default_factory=utcnow, sa_column=_utc_column())
    expires_at: datetime = Field(sa_column=_utc_column())
    used_at: datetime | None = Field(default=None, sa_column=_utc_column(nullable=True))


class OAuthToken(SQLModel, table=True):
    """An access token and its refresh token (both hashed). A refresh makes a new row of
    the same `family` (the code it all came from) and marks this one's refresh token used;
    a used refresh token presented again revokes the whole family."""

    __tablename__ = "oauth_tokens"

    id: int | None = Field(default=None, primary_key=True)
    grant_id: str = Field(foreign_key="oauth_grants.id", index=True, max_length=32)
    family: str = Field(index=True, max_length=64)
    access_token_hash: str = Field(unique=True, max_length=64)
    refresh_token_hash: str | None = Field(default=None, unique=True, max_length=64)
    scope: str = Field(max_length=200)
    resource: str = Field(max_length=512)
    created_at: datetime = Field(default_factory=utcnow, sa_column=_utc_column())
    access_expires_at: datetime = Field(sa_column=_utc_column())
    refresh_expires_at: datetime | None = Field(default=None, sa_column=_utc_column(nullable=True))
    refresh_used_at: datetime | None = Field(default=None, sa_column=_utc_column(nullable=True))
    revoked_at: datetime | None = Field(default=None, sa_column=_utc_column(nullable=True))


class Job(SQLModel, table=True):
    """A bulk job (`app.jobs`): one tool over many rows, run in chunks on the `jobs` queue.
    The counters are the sums of its done chunks, written with them (one transaction)."""

    __tablename__ = "jobs"

    id: str = Field(primary_key=True, max_length=32)  # "job_" + 20 lowercase alphanumerics
    user_id: str = Field(index=True, max_length=40)
    key_id: str | None = Field(default=None, max_length=32)  # the ledger's key_id
    tool: str = Field(max_length=64)
    origin: str = Field(max_length=16)  # "v1", "dashboard", "mcp"
    status: str = Field(default="working", index=True, max_length=16)
    rows_total: int
    chunk_rows: int
    chunks_total: int
    rows_done: int = 0
    rows_with_data: int = 0
    rows_with_errors: int = 0
    credits: int = 0
    # The refusal (error body, JSON) that stopped the job's charging (the free cap, the
    # account's spend cap): every row after it carries it, free.
    stop_error: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    created_at: datetime = Field(default_factory=utcnow, sa_column=_utc_column())
    updated_at: datetime = Field(default_factory=utcnow, sa_column=_utc_column())
    finished_at: datetime | None = Field(default=None, sa_column=_utc_column(nullable=True))
    # Results are deleted by beat after this (set when the job finishes).
    expires_at: datetime | None = Field(
        default=None, sa_column=_utc_column(nullable=True, index=True)
    )


class JobChunk(SQLModel, table=True):
    """A slice of a job's rows: its inputs, then (once, `state` pending -> done) its
    answers. The state change is the chunk's idempotency: a chunk run twice (a worker
    killed, a message redelivered) writes and counts once."""

    __tablename__ = "job_chunks"
    __table_args__ = (UniqueConstraint("job_id", "index"),)

    id: int | None = Field(default=None, primary_key=True)
    job_id: str = Field(foreign_key="jobs.id", index=True, max_length=32)
    index: int
    first_row: int
    state: str = Field(default="pending", max_length=16)  # pending, done, cancelled
    # JSON list, one per row: the validated arguments, or {"error": {...}} for a row
    # refused at submission (INVALID_ARGUMENT, never run, never charged).
    items: str = Field(sa_column=Column(Text, nullable=False))
    # JSON list, one per row once done: {"status", "result"} or {"status", "error"}.
    results: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
