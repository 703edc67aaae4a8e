"""One typed settings object, read from the environment once.

Everything has a default that needs nothing installed: a SQLite file and an embedded
Redis in the instance folder, and secret keys generated there on first start.
"""

from __future__ import annotations

import logging
import os
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from assay import instance as instance_folder
from assay.core.challenges import ship_judges
from assay.core.llm.env_keys import EnvKeyPolicy
from assay.core.retention.policy import RetentionPolicy
from assay.providers.ssrf import UrlPolicy, allow_entry

log = logging.getLogger(__name__)

REPO_ROOT = Path(__file__).resolve().parents[2]


def _int(env: dict[str, str], name: str, default: int) -> int:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        return int(raw)
    except ValueError as exc:
        raise ValueError(f"{name} must be an integer, got {raw!r}") from exc


def _at_least(env: dict[str, str], name: str, default: int, low: int) -> int:
    value = _int(env, name, default)
    if value < low:
        raise ValueError(f"{name} must be at least {low}, got {value}")
    return value


def _seconds(env: dict[str, str], name: str, default: float) -> float:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = float(raw)
    except ValueError as exc:
        raise ValueError(f"{name} must be a number of seconds, got {raw!r}") from exc
    if not 0 < value < 3600:
        raise ValueError(f"{name} must be between 0 and 3600 seconds, got {raw!r}")
    return value


def _bool(env: dict[str, str], name: str, default: bool) -> bool:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    return raw.strip().lower() in {"1", "true", "yes", "on"}


def _allow_list(env: dict[str, str]) -> tuple[str, ...]:
    """ASSAY_PRIVATE_URL_ALLOW: `host:port` entries, comma- or space-separated."""
    raw = (env.get("ASSAY_PRIVATE_URL_ALLOW") or "").replace(",", " ").split()
    try:
        return tuple(allow_entry(entry) for entry in raw)
    except ValueError as exc:
        raise ValueError(f"ASSAY_PRIVATE_URL_ALLOW: {exc}") from exc


def lease_seconds(env: dict[str, str] | None = None) -> int:
    """ASSAY_LEASE_S: read alone too, by the shard runner's LEASE constant."""
    return max(1, _int(dict(os.environ if env is None else env), "ASSAY_LEASE_S", 60))


def _secret(instance: Path, env: dict[str, str], name: str) -> str:
    """The secret from the environment, else one generated once into the instance folder."""
    if env.get(name):
        return env[name]
    path = instance / f"{name.lower()}.key"
    if path.exists():
        return path.read_text().strip()
    value = secrets.token_urlsafe(48)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(value)
    log.warning("%s is not set: generated one into %s (set it in production)", name, path)
    return value


@dataclass(frozen=True)
class Settings:
    instance_path: Path
    database_url: str
    redis_url: str | None  # None: start an embedded Redis in the instance folder
    secret_key: str
    jwt_secret: str
    bcrypt_rounds: int = 12
    session_days: int = 7
    remember_days: int = 30
    cookie_secure: bool = False
    login_lock_failures: int = 5
    login_lock_minutes: int = 15
    login_ip_failures: int = 20  # failed logins per IP per lock window before 429
    login_account_failures: int = 20  # failed logins of one account, from any address,
    login_account_window_s: int = 15 * 60  # per this window, before its back-off starts
    login_account_backoff_max_s: int = 30  # the longest that back-off holds unknown devices
    register_ip_limit: int = 30  # registrations per IP per 15 minutes
    # anyone may create an account (ASSAY_SELF_REGISTRATION); off, only the first account
    # and invited emails may. On, from_env's defaults are the ones safe with strangers:
    # private provider URLs blocked (ASSAY_BLOCK_PRIVATE_URLS) and connection tests that do
    # not tell closed ports from filtered ones (ASSAY_UNIFORM_CONNECT_ERRORS).
    self_registration: bool = True
    trusted_proxies: int = 0  # proxies in front whose X-Forwarded-For names the client
    redis_prefix: str = "assay"  # of every Redis key and queue name Assay uses
    fake_provider_url: str = "http://127.0.0.1:8100"
    max_body_bytes: int = 1_000_000
    sse_heartbeat_s: float = 15.0
    db_pool_size: int = 10  # connections a process keeps (assay serve: its threads)
    db_max_overflow: int = 20  # more it may open at a peak, closed again when returned
    db_pool_timeout_s: float = 3.0  # a request waits this long for one, then gets 503
    # a pooled PostgreSQL connection is pinged before use: always (None), or only once it
    # sat idle this long (assay serve: 1 s; db.py says why)
    db_ping_idle_s: float | None = None
    auth_cache_s: float = 5.0  # how long a process trusts a credential it checked (0: never)
    read_cache_s: float = 60.0  # how long a process keeps a stopped run's read (0: never)
    list_cache_s: float = 5.0  # how long a process keeps a project's list (0: never)
    # slow work (model calls, sandboxes, downloads) per API process: its own places and
    # threads beside the reads' (api/slow_lane.py), a user's share of them, its time bound
    slow_places: int = 8
    slow_per_user: int = 4
    slow_deadline_s: float = 90.0
    run_concurrency: int = 50
    stream_maxlen: int = 10_000
    # refuse loopback/private provider base URLs (SSRF); from_env: on by default when
    # self-registration is, off when it is not
    block_private_urls: bool = False
    probe_timeout_s: float = 10.0  # a connection test's or model list's call
    # a connection test that cannot connect says only "could not connect", after the whole
    # timeout: closed and filtered ports look alike (from_env: on with self-registration)
    uniform_connect_errors: bool = False
    private_url_allow: tuple[str, ...] = ()  # host:port reachable even when they are blocked
    run_shards: int = 2  # shard runners (RQ jobs) a run starts with, unless it says otherwise
    lease_s: int = 60  # how long a claimed cell stays leased to its shard
    reaper_interval_s: float = 15.0  # how often a worker re-enqueues abandoned runs
    metrics_token: str | None = None  # bearer token of /metrics; None: no /metrics
    retention: RetentionPolicy = field(default_factory=RetentionPolicy)
    # judges the operator approved for hidden arena sets (ASSAY_ARENA_SHIP_JUDGES)
    arena_ship_judges: tuple[ship_judges.ShipJudge, ...] = ()

    def __post_init__(self) -> None:
        if len(self.jwt_secret) < 32:
            raise ValueError("JWT_SECRET must be at least 32 characters")

    @property
    def url_policy(self) -> UrlPolicy:
        """Where provider calls may go. The fake provider's address is the operator's own
        (ASSAY_FAKE_PROVIDER_URL): always allowed, like the allow-list."""
        fake = urlsplit(self.fake_provider_url)
        host = fake.hostname or ""
        port = fake.port or (443 if fake.scheme == "https" else 80)
        entry = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        return UrlPolicy.of(not self.block_private_urls, (*self.private_url_allow, entry))

    @property
    def runs_queue(self) -> str:
        return f"{self.redis_prefix}-runs"

    @property
    def is_sqlite(self) -> bool:
        return self.database_url.startswith("sqlite")

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> Settings:
        env = dict(os.environ if env is None else env)
        instance = Path(env.get("ASSAY_INSTANCE_PATH") or REPO_ROOT / "instance").resolve()
        instance_folder.prepare(instance)  # 0700, its files 0600
        database_url = env.get("DATABASE_URL") or f"sqlite:///{instance / 'assay.db'}"
        if database_url.startswith("sqlite:///"):
            db_file = Path(database_url.removeprefix("sqlite:///").split("?")[0])
            if db_file.parent == instance:  # SQLite would create it with the umask's mode
                instance_folder.create_private(db_file)
        if database_url.startswith("postgres://"):
            database_url = "postgresql://" + database_url.removeprefix("postgres://")
        if database_url.startswith("postgresql://"):
            database_url = "postgresql+psycopg://" + database_url.removeprefix("postgresql://")
        fake_port = _int(env, "ASSAY_FAKE_PORT", 8100)
        EnvKeyPolicy.from_env(env)  # read again where a key is read: a typo fails at start
        self_registration = _bool(env, "ASSAY_SELF_REGISTRATION", True)
        return cls(
            instance_path=instance,
            database_url=database_url,
            redis_url=env.get("REDIS_URL") or None,
            secret_key=_secret(instance, env, "SECRET_KEY"),
            jwt_secret=_secret(instance, env, "JWT_SECRET"),
            bcrypt_rounds=_int(env, "ASSAY_BCRYPT_ROUNDS", 12),
            cookie_secure=_bool(env, "ASSAY_COOKIE_SECURE", False),
            login_ip_failures=_int(env, "ASSAY_LOGIN_IP_FAILURES", 20),
            login_account_failures=max(1, _int(env, "ASSAY_LOGIN_ACCOUNT_FAILURES", 20)),
            login_account_window_s=max(1, _int(env, "ASSAY_LOGIN_ACCOUNT_WINDOW_S", 15 * 60)),
            login_account_backoff_max_s=max(
                1, _int(env, "ASSAY_LOGIN_ACCOUNT_BACKOFF_MAX_S", 30)),
            register_ip_limit=_int(env, "ASSAY_REGISTER_IP_LIMIT", 30),
            self_registration=self_registration,
            trusted_proxies=_int(env, "ASSAY_TRUSTED_PROXIES", 0),
            redis_prefix=env.get("ASSAY_REDIS_PREFIX") or "assay",
            fake_provider_url=env.get("ASSAY_FAKE_PROVIDER_URL")
            or f"http://127.0.0.1:{fake_port}",
            sse_heartbeat_s=float(env.get("ASSAY_SSE_HEARTBEAT_S") or 15.0),
            db_pool_size=max(1, _int(env, "ASSAY_DB_POOL_SIZE", 10)),
            db_max_overflow=max(0, _int(env, "ASSAY_DB_MAX_OVERFLOW", 20)),
            db_pool_timeout_s=max(0.1, float(env.get("ASSAY_DB_POOL_TIMEOUT_S") or 3.0)),
            db_ping_idle_s=(max(0.0, float(env["ASSAY_DB_PING_IDLE_S"]))
                            if env.get("ASSAY_DB_PING_IDLE_S") else None),
            auth_cache_s=max(0.0, float(env.get("ASSAY_AUTH_CACHE_S") or 5.0)),
            read_cache_s=max(0.0, float(env.get("ASSAY_READ_CACHE_S") or 60.0)),
            list_cache_s=max(0.0, float(env.get("ASSAY_LIST_CACHE_S") or 5.0)),
            slow_places=_at_least(env, "ASSAY_WEB_SLOW", 8, 1),
            slow_per_user=_at_least(env, "ASSAY_WEB_SLOW_PER_USER", 4, 1),
            slow_deadline_s=_seconds(env, "ASSAY_SLOW_DEADLINE_S", 90.0),
            run_concurrency=_int(env, "ASSAY_RUN_CONCURRENCY", 50),
            block_private_urls=_bool(env, "ASSAY_BLOCK_PRIVATE_URLS", self_registration),
            probe_timeout_s=_seconds(env, "ASSAY_PROBE_TIMEOUT_S", 10.0),
            uniform_connect_errors=_bool(env, "ASSAY_UNIFORM_CONNECT_ERRORS",
                                         self_registration),
            private_url_allow=_allow_list(env),
            run_shards=max(1, _int(env, "ASSAY_RUN_SHARDS", 2)),
            lease_s=lease_seconds(env),
            reaper_interval_s=max(0.1, float(env.get("ASSAY_REAPER_INTERVAL_S") or 15.0)),
            metrics_token=env.get("ASSAY_METRICS_TOKEN") or None,
            retention=RetentionPolicy.from_env(env),
            arena_ship_judges=ship_judges.parse(env.get(ship_judges.SETTING)),
        )
