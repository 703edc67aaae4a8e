"""Fixed-window counters in Redis, shared by every API process, and the sign-in throttle
built on them."""

from __future__ import annotations

import hashlib

import redis

from assay.core.errors import Locked, RateLimited
from assay.runtime import current
from assay.settings import Settings


class Limiter:
    def __init__(self, conn: redis.Redis, name: str, limit: int, window_s: int, message: str,
                 prefix: str | None = None):
        self.conn, self.name, self.limit, self.window_s = conn, name, limit, window_s
        self.message = message
        self.prefix = prefix or current().settings.redis_prefix

    def _key(self, subject: str) -> str:
        return f"{self.prefix}:limit:{self.name}:{subject}"

    def retry_after(self, subject: str) -> int:
        """Seconds until the subject's window closes (at least 1: a client waits that)."""
        return _seconds_left(self.conn, self._key(subject), self.window_s)

    def check(self, subject: str) -> None:
        """RateLimited once the subject has used up its window; `{minutes}` in the message
        says how long is left."""
        used = self.conn.get(self._key(subject))
        if used is not None and int(used) >= self.limit:
            seconds = self.retry_after(subject)
            raise RateLimited(self.message.replace("{minutes}", _minutes(seconds)),
                              retry_after=seconds)

    def hit(self, subject: str) -> int:
        """Count one; the subject's count in this window."""
        key = self._key(subject)
        with self.conn.pipeline() as pipe:
            # SET NX opens the window: Redis 6 (embedded) has no EXPIRE NX
            pipe.set(key, 0, ex=self.window_s, nx=True)
            pipe.incr(key)
            count = pipe.execute()[1]
        return int(count)

    def reset(self, subject: str) -> None:
        self.conn.delete(self._key(subject))


def _seconds_left(conn: redis.Redis, key: str, default: int) -> int:
    ttl = int(conn.ttl(key))
    return max(1, ttl if ttl > 0 else default)


LOCKED = "Account temporarily locked. Try again in {minutes}."
BACKING_OFF = ("Too many failed sign-ins to this account: wait a few seconds and try "
               "again (sign in from a browser that signed in to it before to skip the wait).")


def _minutes(seconds: int) -> str:
    minutes = max(1, (seconds + 59) // 60)
    return "1 minute" if minutes == 1 else f"{minutes} minutes"


class LoginThrottle:
    """Failed sign-ins from one client (`core.auth.service.LoginThrottle`).

    Per address across accounts: `login_ip_failures` per window answer 429. Per (account,
    client): `login_lock_failures` in a row lock that account for that client only, the
    client being its device (a genuine `assay_device` cookie of the account) or else its
    address, so an attacker elsewhere, or behind the same address, cannot lock the owner's
    browser out. Per account across clients, a progressive back-off: past
    `login_account_failures` in `login_account_window_s`, each failure holds the account for
    browsers it does not know for 2^(failures past the allowance) seconds, at most
    `login_account_backoff_max_s`; a device that signed in to it before is never held. This
    bounds a guess spread over many addresses to one try per back-off, while the owner waits
    seconds at worst, never the window: an account-wide pause would let anyone lock anyone
    out. Unknown emails count, lock and back off exactly like real accounts (no device can
    be known for them, as none is for a stranger's browser), so no answer tells whether an
    account exists.
    """

    def __init__(self, conn: redis.Redis, settings: Settings, address: str,
                 window_s: int = 15 * 60):
        self.conn, self.address = conn, address
        self.limit = settings.login_lock_failures
        self.lock_s = settings.login_lock_minutes * 60
        self.allowance = settings.login_account_failures
        self.backoff_max_s = settings.login_account_backoff_max_s
        self.prefix = settings.redis_prefix
        self.failures = Limiter(conn, "login-account", self.limit, self.lock_s, "",
                                self.prefix)
        self.per_address = Limiter(conn, "login", settings.login_ip_failures, window_s,
                                   "Too many login attempts. Please wait.", self.prefix)
        self.per_account = Limiter(conn, "login-account-wide", 0,
                                   settings.login_account_window_s, "", self.prefix)

    @staticmethod
    def _account(email: str) -> str:
        # the email hashed: Redis key names are no place for addresses of people
        return hashlib.sha256(email.encode()).hexdigest()[:32]

    def _subject(self, email: str, device: str | None) -> str:
        client = f"device:{device}" if device else self.address
        return f"{self._account(email)}:{client}"

    def _lock_key(self, email: str, device: str | None) -> str:
        return f"{self.prefix}:limit:login-locked:{self._subject(email, device)}"

    def _backoff_key(self, email: str) -> str:
        return f"{self.prefix}:limit:login-backoff:{self._account(email)}"

    def locked(self, email: str, device: str | None = None) -> Locked:
        seconds = _seconds_left(self.conn, self._lock_key(email, device), self.lock_s)
        return Locked(LOCKED.format(minutes=_minutes(seconds)),
                      retry_after=seconds)

    def check(self, email: str, device: str | None = None) -> None:
        self.per_address.check(self.address)
        if device is None and self.conn.exists(self._backoff_key(email)):
            # not counted: a client polling through the back-off does not extend it
            raise RateLimited(BACKING_OFF, retry_after=_seconds_left(
                self.conn, self._backoff_key(email), 1))
        if self.conn.exists(self._lock_key(email, device)):
            raise self.locked(email, device)

    def failed(self, email: str, device: str | None = None) -> int:
        self.per_address.hit(self.address)
        spread = self.per_account.hit(self._account(email))
        if spread >= self.allowance:
            hold = min(self.backoff_max_s, 2 ** min(spread - self.allowance, 20))
            self.conn.set(self._backoff_key(email), 1, ex=max(1, hold))
        subject = self._subject(email, device)
        count = self.failures.hit(subject)
        if count >= self.limit:
            self.failures.reset(subject)
            self.conn.set(self._lock_key(email, device), 1, ex=self.lock_s)
        return count

    def succeeded(self, email: str, device: str | None = None) -> None:
        # Only this client's run of failures. The account-wide count is left to its window:
        # it bounds guesses from everyone, and a sign-in proves only that this client knew
        # the password, not that the others guessing stopped. Were it reset here, an owner
        # (or a script) signing in every few minutes would hand a distributed attacker a
        # fresh allowance each time. The back-off it sets lasts seconds, and never holds a
        # device the account knows.
        self.failures.reset(self._subject(email, device))
