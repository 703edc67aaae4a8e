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
PAUSED = ("Too many failed sign-ins to this account from many places: sign-in to it is "
          "paused. Try again in {minutes}.")


def _minutes(seconds: int) -> str:
    minutes = max(1, (seconds + 59) // 60)
    return "1 minute" if minutes == 1 else f"{minutes} minutes"


class LoginThrottle:
    """Failed sign-ins from one client address (`core.auth.service.LoginThrottle`).

    Counted per (account, address): `login_lock_failures` in a row lock that account for
    that address only, so an attacker elsewhere cannot lock its owner out; per address
    across accounts: `login_ip_failures` per window answer 429; and per account across
    addresses: `login_account_failures` per `login_account_window_s` answer 429 for that
    account from every address until the window ends, which bounds a guess spread over
    many addresses (each staying under the other two limits). Unknown emails count, lock
    and pause exactly like real accounts, so no answer tells whether an account exists.
    """

    def __init__(self, conn: redis.Redis, settings: Settings, address: str,
                 window_s: int = 15 * 60):
        self.conn, self.address = conn, address
        self.limit = settings.login_lock_failures
        self.lock_s = settings.login_lock_minutes * 60
        self.prefix = settings.redis_prefix
        self.failures = Limiter(conn, "login-account", self.limit, self.lock_s, "",
                                self.prefix)
        self.per_address = Limiter(conn, "login", settings.login_ip_failures, window_s,
                                   "Too many login attempts. Please wait.", self.prefix)
        self.per_account = Limiter(conn, "login-account-wide", settings.login_account_failures,
                                   settings.login_account_window_s, PAUSED, self.prefix)

    @staticmethod
    def _account(email: str) -> str:
        # the email hashed: Redis key names are no place for addresses of people
        return hashlib.sha256(email.encode()).hexdigest()[:32]

    def _subject(self, email: str) -> str:
        return f"{self._account(email)}:{self.address}"

    def _lock_key(self, email: str) -> str:
        return f"{self.prefix}:limit:login-locked:{self._subject(email)}"

    def locked(self, email: str) -> Locked:
        seconds = _seconds_left(self.conn, self._lock_key(email), self.lock_s)
        return Locked(LOCKED.format(minutes=_minutes(seconds)),
                      retry_after=seconds)

    def check(self, email: str) -> None:
        self.per_address.check(self.address)
        self.per_account.check(self._account(email))
        if self.conn.exists(self._lock_key(email)):
            raise self.locked(email)

    def failed(self, email: str) -> int:
        self.per_address.hit(self.address)
        self.per_account.hit(self._account(email))
        count = self.failures.hit(self._subject(email))
        if count >= self.limit:
            self.failures.reset(self._subject(email))
            self.conn.set(self._lock_key(email), 1, ex=self.lock_s)
        return count

    def succeeded(self, email: str) -> None:
        # Only this address's run of failures. The account-wide count is left to its window:
        # it bounds guesses from everyone, and a sign-in proves only that this client knew
        # the password, not that the others guessing stopped. Were it reset here, an owner
        # (or a script) signing in every few minutes would hand a distributed attacker a
        # fresh allowance each time, and the bound would be whatever the owner's habits
        # made it. Time alone ends it; meanwhile sessions and API tokens keep working.
        self.failures.reset(self._subject(email))
