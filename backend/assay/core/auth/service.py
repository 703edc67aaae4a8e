"""Registration, sign-in with lockout, session revocation and personal API tokens."""

from __future__ import annotations

import hashlib
import secrets
from datetime import datetime, timedelta
from functools import cache
from typing import Protocol

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from assay.core import audit
from assay.core.auth import devices
from assay.core.auth.models import ApiToken, RevokedSession, User
from assay.core.auth.passwords import (
    hash_cost,
    hash_password,
    password_problems,
    verify_password,
)
from assay.core.base import utcnow
from assay.core.errors import Conflict, Invalid, Locked, NotFound, Unauthorized

TOKEN_PREFIX = "assay_"
INVALID_CREDENTIALS = "Invalid email or password"


def normalize_email(email: str) -> str:
    return email.strip().lower()


def email_taken() -> Conflict:
    return Conflict("Email already in use", {"json": {"email": ["Email already in use"]}},
                    code="EMAIL_TAKEN")


def register(session: Session, email: str, password: str, name: str | None,
             rounds: int) -> User:
    problems = password_problems(password)
    if problems:
        raise Invalid("Password is too weak", {"json": {"password": problems}},
                      code="WEAK_PASSWORD")
    email = normalize_email(email)
    if session.scalar(select(User.id).where(User.email == email)) is not None:
        raise email_taken()
    user = User(email=email, name=name or None, password_hash=hash_password(password, rounds))
    session.add(user)
    session.flush()
    audit.record(session, user, "user.registered", "user", user.id)
    return user


class LoginThrottle(Protocol):
    """Failed sign-ins of one client (ratelimit.LoginThrottle), by account email; `device`
    is the client's device id when its cookie is a genuine one of this account."""

    limit: int  # failures in a row that lock the account for this client

    def check(self, email: str, device: str | None = None) -> None:
        """Raise RateLimited (this address, or the account's back-off for unknown devices)
        or Locked (this account from this client)."""

    def failed(self, email: str, device: str | None = None) -> int:
        """Count a failure; the failures in a row, locking the account at `limit`."""

    def locked(self, email: str, device: str | None = None) -> Locked: ...

    def succeeded(self, email: str, device: str | None = None) -> None: ...


@cache
def dummy_hash(rounds: int) -> str:
    """Checked against when the email is unknown: the same cost as a real account."""
    return hash_password("not-a-real-password", rounds)


def authenticate(session: Session, email: str, password: str, rounds: int,
                 throttle: LoginThrottle, device_cookie: str | None = None,
                 secret: str = "") -> tuple[User, str | None]:
    """Check a password; the user and the client's device id (None: a device the account
    does not know). An unknown email costs one bcrypt check at the configured cost and is
    counted, locked and answered exactly like a wrong password, so neither the time nor the
    answer tells whether an account exists."""
    email = normalize_email(email)
    user = session.scalar(select(User).where(User.email == email))
    device = devices.verify(device_cookie, user.id, secret) if user is not None else None
    throttle.check(email, device)
    hashed = user.password_hash if user is not None else dummy_hash(rounds)
    if not verify_password(password, hashed) or user is None:
        failures = throttle.failed(email, device)
        if user is not None:
            audit.record(session, user, "auth.login_failed", "user", user.id,
                         data={"failures": failures})
            session.commit()
        if failures >= throttle.limit:
            raise throttle.locked(email, device)
        raise Unauthorized(INVALID_CREDENTIALS, code="INVALID_CREDENTIALS")
    throttle.succeeded(email, device)
    if hash_cost(user.password_hash) != rounds:  # keep every hash at the configured cost
        user.password_hash = hash_password(password, rounds)
    audit.record(session, user, "auth.login", "user", user.id)
    return user, device


def revoke_session(session: Session, user: User, jti: str, expires_at: datetime) -> None:
    session.execute(delete(RevokedSession).where(RevokedSession.expires_at < utcnow()))
    if session.get(RevokedSession, jti) is None:
        session.add(RevokedSession(jti=jti, expires_at=expires_at))
    audit.record(session, user, "auth.logout", "user", user.id)


def is_revoked(session: Session, jti: str) -> bool:
    return session.get(RevokedSession, jti) is not None


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def create_api_token(session: Session, user: User, name: str) -> tuple[ApiToken, str]:
    plaintext = TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = ApiToken(user_id=user.id, name=name, prefix=plaintext[:12],
                     token_hash=token_digest(plaintext))
    session.add(token)
    session.flush()
    audit.record(session, user, "token.created", "api_token", token.id, data={"name": name})
    return token, plaintext


def list_api_tokens(session: Session, user: User) -> list[ApiToken]:
    stmt = select(ApiToken).where(ApiToken.user_id == user.id).order_by(ApiToken.id.desc())
    return list(session.scalars(stmt))


def delete_api_token(session: Session, user: User, token_id: int) -> None:
    token = session.get(ApiToken, token_id)
    if token is None or token.user_id != user.id:
        raise NotFound("Token not found")
    session.delete(token)
    audit.record(session, user, "token.deleted", "api_token", token_id)


def user_for_api_token(session: Session, plaintext: str) -> User:
    token = session.scalar(select(ApiToken).where(ApiToken.token_hash == token_digest(plaintext)))
    if token is None:
        raise Unauthorized("Invalid API token")
    user = session.get(User, token.user_id)
    if user is None:
        raise Unauthorized("Invalid API token")
    if token.last_used_at is None or utcnow() - token.last_used_at > timedelta(minutes=1):
        token.last_used_at = utcnow()  # throttled: a read must not write on every call
        session.commit()  # now: a request that only reads commits nothing itself
    return user
