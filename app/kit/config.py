"""All settings in one place (env prefix GEOSVC_)."""

from __future__ import annotations

from decimal import Decimal
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from app.kit import production, setting_shapes
from app.kit.production import DEFAULT_MAIL_FROM

UpstreamTool = Literal[
    "get_population",
    "get_average_income",
    "get_demographics",
    "geocode",
    "reverse_geocode",
    "search_nearby",
]
# Who answers a tool: the embedded datasets, the upstream HTTP providers, or one of them
# first (see app/geodata/service.py). static_map is embedded only.
ToolPolicy = Literal["embedded", "upstream", "embedded-then-upstream", "upstream-then-embedded"]


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="GEOSVC_", env_file=".env", extra="ignore", hide_input_in_errors=True
    )

    # "production" refuses unsafe settings at start-up (app/kit/production.py).
    env: Literal["development", "production"] = "development"
    # Geodata indices, the development database, pepper and signing key, beat's schedule.
    data_dir: Path = Path(".geosvc")
    # SQLAlchemy URL (postgresql://user:password@host:5432/db); None: SQLite under data_dir.
    database_url: str | None = None
    # None means "embedded": `geosvc dev` starts a local Redis (or fakeredis) and sets this.
    redis_url: str | None = None
    base_url: str = "http://127.0.0.1:8000"  # public address: links in mail, OAuth, checkout
    # Prefix of every Redis key the service writes (credit counters, the usage outbox,
    # Celery's broker and result keys), so several deployments or test runs can share
    # one Redis without reading each other's counters or taking each other's tasks.
    redis_key_prefix: str = ""
    # GEOSVC_REDIS_URL names one node of a Redis Cluster (the client finds the others).
    # Needs GEOSVC_BROKER_URL (RabbitMQ): Celery's Redis broker does not speak Cluster.
    redis_cluster: bool = False
    # Lists the usage outbox is split into (each drained by its own task and lock), so
    # drains scale with the cluster's shards; each list's hash tag puts it on some shard.
    outbox_buckets: int = Field(1, ge=1, le=256)
    # One Redis primary with replicas under Sentinel: the Sentinels as host:port pairs,
    # separated by commas. Clients ask them for the primary of redis_sentinel_master, so
    # a promoted replica is found by itself; GEOSVC_REDIS_URL still gives the database
    # number and password (its host is not used). Needs GEOSVC_BROKER_URL, as a cluster does.
    redis_sentinels: str = ""
    redis_sentinel_master: str = "mymaster"

    # Server-side secret mixed into API-key hashes and map-link signatures. Required in
    # production; in development a random one is generated once and kept under data_dir.
    secret_pepper: SecretStr | None = None
    # The pepper before a rotation: a key hashed with it still verifies, and is hashed again
    # with the current pepper on that use (docs/DEPLOYMENT.md, "Secrets and rotating them").
    secret_pepper_previous: SecretStr | None = None

    # Credits a month included in the free and the standard plan.
    free_quota: int = Field(1000, ge=1)
    standard_quota: int = Field(100_000, ge=1)

    session_days: int = 30  # a dashboard sign-in lasts this long
    max_active_keys: int = 25  # unrevoked API keys per account
    # Calls a month of an account's test-mode keys (their own counter, never billed).
    test_key_monthly_calls: int = Field(10_000, ge=1)
    # Failed sign-ins of one (e-mail, client IP) within the window before it is refused.
    signin_max_failures: int = 10
    signin_failure_window_s: int = 15 * 60
    # Failed sign-ins of one client IP (any e-mail) within the window before it is refused.
    signin_max_failures_per_ip: int = Field(100, ge=1)
    # Per-account backoff across all IPs (app/users/throttle.py): from this many failures
    # on, each failure pauses the account's next attempt, doubling from base up to max.
    signin_backoff_after: int = Field(10, ge=1)
    signin_backoff_base_s: float = Field(1.0, gt=0)
    signin_backoff_max_s: float = Field(60.0, gt=0)
    # An address the owner signed in from within this many days skips that backoff.
    signin_known_address_days: int = Field(30, ge=1)
    # Sign-up + sign-in requests per client IP per window (429 with Retry-After above).
    auth_rate_limit_per_ip: int = Field(30, ge=1)
    auth_rate_window_s: int = Field(60, ge=1)
    # Argon2 hashes at once (0: half the CPUs), so sign-in bursts leave cores for /me, /mcp.
    password_hash_concurrency: int = Field(0, ge=0)
    key_cache_ttl_s: float = 1.0  # how long a process trusts what it read of an API key
    # The request log (app/request_log): each account's latest calls, at most this many
    # and none older than this many days.
    request_log_max_calls: int = Field(1000, ge=1, le=10_000)
    request_log_days: int = Field(7, ge=1, le=90)

    # OAuth 2.1 sign-in for /mcp (app/oauth). The key that hashes OAuth tokens and codes
    # (HMAC-SHA256) and signs the consent form: required in production (at least 32
    # bytes), kept under data_dir in development. Changing it signs every connected app out.
    oauth_signing_key: SecretStr | None = None
    oauth_access_token_ttl_s: int = Field(3600, ge=60, le=86400)  # access token lifetime
    # A refresh token is used once (rotation); its replacement lives this long again.
    oauth_refresh_token_ttl_s: int = Field(30 * 86400, ge=3600)
    oauth_code_ttl_s: int = Field(60, ge=10, le=600)  # authorization code, used once
    # Client ID Metadata Documents (app/oauth/metadata_documents.py): one fetch takes at
    # most this long in all (resolution, connection, TLS, the whole document), and at most
    # so many run at once per api process and per remote host (more are refused at once).
    # A failed fetch is answered from memory for a while.
    oauth_cimd_timeout_s: float = Field(4.0, gt=0, le=30)
    oauth_cimd_max_fetches: int = Field(16, ge=1)
    oauth_cimd_max_fetches_per_host: int = Field(2, ge=1)
    oauth_cimd_failure_cache_s: float = Field(30.0, gt=0)
    # Fetches an api process starts at once; further starts come at the pace the slots
    # turn over (max_fetches per timeout): a crowd of new URLs is let in a few at a time.
    oauth_cimd_fetch_burst: int = Field(4, ge=1)
    # Requests to each of /authorize, /token and /register per client address per window
    # (429 with Retry-After above; app/oauth/rate_limit.py).
    oauth_rate_limit_per_ip: int = Field(60, ge=1)
    oauth_rate_window_s: int = Field(60, ge=1)
    # Development and tests only: fetch client metadata documents from loopback addresses
    # over plain http (production fetches https from public addresses only).
    oauth_cimd_allow_loopback: bool = False

    # E-mail (app/mail): an SMTP server as smtp://user:password@host:587 (STARTTLS when the
    # server offers it) or smtps://...:465 (TLS from the start). Without it (development
    # only: production refuses to start) every message is written to the worker's log and
    # sign-ups are verified at once. With it, an account's keys make data calls only once
    # its e-mail address is confirmed.
    smtp_url: SecretStr | None = None
    mail_from: str = Field(DEFAULT_MAIL_FROM, max_length=320)  # sender; production names its own
    smtp_timeout_s: float = Field(10.0, gt=0)  # per SMTP connection and command
    # Sign-ups and password-reset requests per mailbox (a +tag and Gmail's dots count as
    # one) per hour: one address cannot be mail-bombed through our forms.
    signup_per_address_per_hour: int = Field(3, ge=1)
    password_reset_per_address_per_hour: int = Field(3, ge=1)
    # Requests to move an account to another address, per account and per client address
    # per hour (besides the per-mailbox limit above): no probing many addresses.
    email_change_per_account_per_hour: int = Field(5, ge=1)
    email_change_per_ip_per_hour: int = Field(20, ge=1)

    # Hosts and browser origins /mcp answers (besides GEOSVC_BASE_URL's); `name:*`: any port.
    allowed_hosts: list[str] = ["127.0.0.1:*", "localhost:*", "[::1]:*"]
    allowed_origins: list[str] = ["http://127.0.0.1:*", "http://localhost:*"]

    # The longest a tool call may take, end to end (then DEADLINE_EXCEEDED, no credit).
    tool_deadline_s: float = Field(20.0, gt=0)
    # A call's reservation is also its concurrency lease: a process killed mid-call
    # holds its slot (and credit) at most this long.
    reservation_ttl_s: int = Field(60, ge=5)

    # Tenant limits per plan (docs/OPERATIONS.md, "Tenant isolation"). Each API key has a
    # token bucket of rate_per_s refilled up to burst; the account's bucket (all its keys)
    # holds account_rate_multiplier times as much, so one runaway key leaves the others
    # room. Concurrency: calls in flight per account. A refusal costs no credit.
    free_rate_per_s: float = Field(5.0, gt=0)
    free_burst: int = Field(10, ge=1)
    free_concurrency: int = Field(4, ge=1)
    standard_rate_per_s: float = Field(50.0, gt=0)
    standard_burst: int = Field(100, ge=1)
    standard_concurrency: int = Field(32, ge=1)
    account_rate_multiplier: float = Field(2.0, ge=1)
    # Bulk jobs (app/jobs, /v1/jobs, MCP tasks): their own pace per plan in rows a
    # second, apart from the interactive limits above; rows per job; jobs running at once
    # per account; rows per chunk (one task); chunks of one job queued at once (so jobs
    # share the `jobs` queue's workers in turn); how long results are kept after a job
    # ends; a job with no progress for jobs_stall_s has its chunks sent again (beat).
    free_job_rows_per_s: float = Field(20.0, gt=0)
    standard_job_rows_per_s: float = Field(2_000.0, gt=0)
    job_max_rows: int = Field(100_000, ge=1)
    job_body_max_bytes: int = Field(16 * 1024 * 1024, ge=1024)
    jobs_per_account: int = Field(3, ge=1)
    job_chunk_rows: int = Field(500, ge=1, le=10_000)
    job_chunks_in_flight: int = Field(2, ge=1)
    job_results_ttl_s: int = Field(7 * 86_400, ge=60)
    job_stall_s: float = Field(60.0, gt=0)
    # A static_map of more pixels than this is heavy: it costs one rate token per this
    # many pixels (a 1280x1280 map costs 7) and runs on the `tools.heavy` queue.
    heavy_map_pixels: int = Field(600 * 400, ge=64 * 64)
    # An MCP static_map whose image (as base64, what the result carries) is larger than
    # this answers a resource_link to a short-lived URL instead: hosts cap a tool result
    # around 1 MB, 700 KB is a common inline cap. The URL works for map_link_ttl_s.
    map_inline_max_bytes: int = Field(700_000, ge=0)
    map_link_ttl_s: int = Field(900, ge=10, le=86_400)
    # Fetches of one map link in its whole life, and of any link from one client address
    # per window (429 with Retry-After above; app/tool_calls/link_budget.py): a link is
    # free to fetch, so these bound what one link, or one address, may draw from us.
    map_link_fetches_per_link: int = Field(30, ge=1)
    map_link_fetches_per_ip: int = Field(60, ge=1)
    map_link_fetch_window_s: int = Field(60, ge=1)
    # Map tiles (/v1/tiles, app/tiles/): drawn tiles kept in each api process (bytes) and
    # in Redis (seconds); a signed tile URL template lasts tile_link_ttl_s; fetches per
    # account and per client address per window (429 with Retry-After above).
    tile_cache_bytes: int = Field(64 * 1024 * 1024, ge=0)
    tile_cache_ttl_s: int = Field(7 * 86_400, ge=60)
    tile_link_ttl_s: int = Field(3600, ge=60, le=86_400)
    tile_fetches_per_account: int = Field(3000, ge=1)
    tile_fetches_per_ip: int = Field(1200, ge=1)
    tile_fetch_window_s: int = Field(600, ge=1)

    # "local": a checkout that takes no money (development); production needs "stripe".
    payment_provider: Literal["local", "stripe"] = "local"

    # Tools answered by the upstream HTTP providers instead of the embedded datasets,
    # e.g. GEOSVC_UPSTREAM_TOOLS='["geocode","reverse_geocode"]'. static_map is embedded only.
    upstream_tools: set[UpstreamTool] = set()
    # Per-tool provider policy, e.g. GEOSVC_TOOL_PROVIDERS='{"geocode":"embedded-then-upstream"}';
    # it wins over upstream_tools (a shorthand for "upstream").
    tool_providers: dict[UpstreamTool, ToolPolicy] = {}
    nominatim_url: str = "https://nominatim.openstreetmap.org"  # geocode, reverse_geocode
    overpass_url: str = "https://overpass-api.de/api"  # search_nearby
    census_url: str = "https://api.census.gov/data"  # population, income, demographics
    census_year: int = 2023  # ACS 5-year release asked of the Census API
    census_api_key: SecretStr | None = None  # optional; the Census API limits keyless use
    # reverse_geocode (US): the ZCTA, county and state polygons that hold the point
    census_geocoder_url: str = "https://geocoding.geo.census.gov/geocoder"
    upstream_timeout_s: float = Field(5.0, gt=0)  # per upstream request attempt
    upstream_attempts: int = Field(3, ge=1, le=10)  # tries per request (transport, 429, 5xx)
    # Upstream etiquette: the operator's contact (e-mail or URL) in the User-Agent, as the
    # OSM services' usage policies ask; required in production when an upstream is used.
    upstream_contact: str | None = Field(None, pattern=r"^[\w.@+:/?=&%~#-]{3,200}$")
    # Requests per second to each provider, shared by all processes (0: unlimited).
    # Nominatim's public instance allows 1/s; Overpass's public instances about as much.
    nominatim_rate_per_s: float = Field(1.0, ge=0)
    overpass_rate_per_s: float = Field(1.0, ge=0)
    census_rate_per_s: float = Field(10.0, ge=0)
    census_geocoder_rate_per_s: float = Field(5.0, ge=0)
    upstream_rate_wait_s: float = Field(5.0, ge=0)  # longest wait for a slot, then refuse
    upstream_breaker_failures: int = Field(5, ge=1)  # consecutive failed calls that open it
    upstream_breaker_cooldown_s: float = Field(30.0, gt=0)  # open this long, then one probe
    # Worker pool for the `tools` queue. "auto": prefork, one process per CPU, while every
    # tool is answered by the embedded datasets (CPU-bound lookups, one core each); a pool
    # of tools_concurrency threads once some tool goes upstream (calls mostly wait on I/O).
    tools_pool: Literal["auto", "threads", "prefork", "solo"] = "auto"
    tools_concurrency: int = Field(64, ge=1, le=1000)  # threads of a threads pool
    # Task events for tool calls (what Flower lists per task) cost a worker about 1 ms of
    # CPU per call, as much as the lookup and the result store together (bench/call_profile.py).
    # Off: Flower still shows workers and the billing, mail and maintenance tasks; tool
    # calls are counted and timed in /metrics and logged per call.
    tool_task_events: bool = False

    @field_validator("smtp_url", mode="before")
    @classmethod
    def _empty_smtp_url_is_none(cls, value: object) -> object:
        """Compose passes an unset variable as "": that is no SMTP server."""
        if value == "" or (isinstance(value, SecretStr) and not value.get_secret_value()):
            return None
        return value

    @field_validator("mail_from", mode="before")
    @classmethod
    def _empty_mail_from_is_the_default(cls, value: object) -> object:
        return DEFAULT_MAIL_FROM if value == "" else value

    @field_validator("forwarded_allow_ips")
    @classmethod
    def _proxy_addresses_shape(cls, value: str) -> str:
        return setting_shapes.proxy_addresses(value)

    @field_validator("smtp_url")
    @classmethod
    def _smtp_url_shape(cls, value: SecretStr | None) -> SecretStr | None:
        return setting_shapes.smtp_url(value)

    # Production refuses a Redis without AOF (appendfsync everysec/always): the usage
    # outbox lives there until drained. Off only for a managed Redis that hides CONFIG.
    redis_aof_check: bool = True
    # Celery broker; None means the Redis of redis_url. Production: RabbitMQ (amqp://…).
    broker_url: str | None = None
    # Worker liveness: the consumer loop touches this file every few seconds; the worker
    # exits (and is restarted) when its loop has not run for worker_stall_s. The loop is
    # also silent while it reconnects to a broker, and kombu waits 2, 4, 6, ... up to 30 s
    # between attempts: at 30 s a 20 s partition could end in an exit (multi-host drill).
    worker_heartbeat_file: Path = Path("/tmp/geosvc-worker.alive")
    worker_stall_s: float = Field(60.0, ge=0)
    # A key and plan read within this long are served from the cache while the database
    # is unreachable (a key revoked before the outage stays revoked).
    db_outage_cache_s: float = Field(600.0, ge=0)
    # An unresponsive (not dead) Redis or database must answer UNAVAILABLE within seconds,
    # inside a request's deadline: one Redis command waits this long and a timeout is not
    # retried; a PostgreSQL connection attempt gives up after db_connect_timeout_s and a
    # statement (a lock wait, a runaway query) after db_statement_timeout_s (migrations
    # run without it; `geosvc worker` defaults it to its longest task time limit).
    redis_command_timeout_s: float = Field(1.5, gt=0)
    db_connect_timeout_s: int = Field(3, ge=1)
    db_statement_timeout_s: float = Field(5.0, gt=0)

    # Prices shown on the dashboard's subscription, checkout and usage pages (display only;
    # the payment provider's price is what is charged).
    price_currency_symbol: str = Field("$", max_length=4)
    standard_price_monthly: Decimal = Field(Decimal("49.00"), ge=0, le=1_000_000)
    overage_price_per_1000: Decimal = Field(Decimal("0.50"), ge=0, le=1_000_000)

    # Stripe (GEOSVC_PAYMENT_PROVIDER=stripe). The price is the standard plan's recurring
    # price id; the meter event is the `event_name` of the overage meter.
    stripe_secret_key: SecretStr | None = None
    stripe_webhook_secret: SecretStr | None = None
    stripe_standard_price: str | None = Field(None, max_length=255)
    stripe_meter_event: str | None = Field(None, max_length=100)
    # The metered price attached to that meter, added to each checkout when set.
    stripe_overage_price: str | None = Field(None, max_length=255)
    stripe_api_base: str = "https://api.stripe.com"  # tests point it at a fake
    stripe_timeout_s: float = Field(10.0, gt=0)  # per request attempt (the library retries twice)
    # The Stripe breaker (app/kit/breaker.py): opens after this many consecutive failed
    # requests (after the library's retries), refuses calls for the cool-down, then probes.
    stripe_breaker_failures: int = Field(3, ge=1)
    stripe_breaker_cooldown_s: float = Field(30.0, gt=0)
    # Stripe-calling actions (checkout, portal, cancel/resume) one account may take per
    # window (app/billing/stripe_budget.py); reads never call Stripe.
    stripe_actions_per_account: int = Field(10, ge=1)
    stripe_actions_window_s: int = Field(60, ge=1)

    # Observability (app/observability). /metrics and the worker exporter ask for
    # `Authorization: Bearer <metrics_token>` when it is set; production requires it.
    metrics_token: SecretStr | None = None
    # Also accepted while the token is rotated (Prometheus still sends the old one until it
    # is recreated; docs/DEPLOYMENT.md, "Secrets and rotating them"). Empty afterwards.
    metrics_previous_token: SecretStr | None = None
    # The worker's own Prometheus exporter (0: off); scraped separately from the api.
    worker_metrics_port: int = Field(0, ge=0, le=65535)
    worker_metrics_host: str = "0.0.0.0"
    # Where the processes of one `geosvc api` / `geosvc worker` keep their metric files
    # (prometheus_client multiprocess mode); a fresh temporary directory when unset.
    metrics_dir: Path | None = None
    log_format: Literal["json", "text"] = "json"  # JSON lines on stderr, or text for people
    log_level: str = "INFO"  # Python logging level name

    # Largest request body on any route (413 above it, before the body is read).
    max_body_bytes: int = Field(1024 * 1024, ge=1024)
    # The HTTP server's own bounds on a request (app/http/server.py, docs/OPERATIONS.md):
    # request line plus headers in bytes (431 above), header count (431), URL (414), the
    # time to receive the headers (from connect or the previous answer; 408) and the body.
    http_max_header_bytes: int = Field(32 * 1024, ge=4096)
    http_max_headers: int = Field(100, ge=16)
    http_max_url_bytes: int = Field(8 * 1024, ge=1024)
    http_header_timeout_s: float = Field(10.0, gt=0)
    http_body_timeout_s: float = Field(30.0, gt=0)
    # Longest pause in reading a connection whose client was refused again inside the wait
    # a refusal announced (it ignores Retry-After); 0: never pause (app/http/server.py).
    # Below the keep-alive timeout (5 s), which would close a held connection unanswered.
    http_refused_hold_max_s: float = Field(1.0, ge=0, le=4)
    # /docs and /openapi.json: on in development, off in production unless enabled.
    enable_docs: bool | None = None

    # Flower's basic auth as "user:password" (`geosvc flower`); required in production.
    flower_auth: SecretStr | None = None

    # The reverse proxy's addresses, comma-separated (IPs or CIDRs): only a request from
    # one of them has its X-Forwarded-For / -Proto and X-Proxy-Request-ID honoured
    # (app/http/forwarded.py). Empty (the default, `geosvc dev`): no proxy, every request
    # is its peer's. The client IP limits sign-in abuse, so production refuses "*".
    forwarded_allow_ips: str = ""

    @model_validator(mode="after")
    def _redis_topology(self) -> Settings:
        setting_shapes.check_redis_topology(  # a cluster or Sentinel needs a broker
            cluster=self.redis_cluster,
            redis_url=self.redis_url,
            broker_url=self.broker_url,
            sentinels=self.redis_sentinels,
        )
        return self

    def sentinel_addresses(self) -> list[tuple[str, int]]:
        return setting_shapes.sentinel_addresses(self.redis_sentinels)

    @model_validator(mode="after")
    def _refuse_unsafe_production(self) -> Settings:
        production.check(self)  # app/kit/production.py: refuses naming every setting at fault
        return self

    @property
    def is_development(self) -> bool:
        return self.env == "development"

    @property
    def verifies_email(self) -> bool:
        """Whether new accounts must confirm their e-mail before data calls: whenever mail
        can really be sent (always in production, which refuses to start without SMTP)."""
        return self.smtp_url is not None or not self.is_development

    @property
    def docs_enabled(self) -> bool:
        return self.is_development if self.enable_docs is None else self.enable_docs

    @property
    def sqlalchemy_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite:///{(self.data_dir / 'geosvc.db').resolve()}"


@lru_cache
def get_settings() -> Settings:
    return Settings()
