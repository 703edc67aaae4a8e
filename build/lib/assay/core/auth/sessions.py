"""Session JWTs (fixed algorithm, required claims) and their CSRF double-submit token."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

import jwt

from assay.core.base import utcnow
from assay.core.errors import Unauthorized

ALGORITHM = "HS256"
REQUIRED = ["sub", "email", "iat", "exp", "jti"]


@dataclass(frozen=True)
class SessionToken:
    token: str
    jti: str
    user_id: int
    expires_at: datetime


def issue(user_id: int, email: str, secret: str, lifetime: timedelta) -> SessionToken:
    now = utcnow()
    jti = secrets.token_hex(16)
    expires = now + lifetime
    claims = {"sub": str(user_id), "email": email, "iat": now, "exp": expires, "jti": jti}
    return SessionToken(jwt.encode(claims, secret, algorithm=ALGORITHM), jti, user_id, expires)


def decode(token: str, secret: str) -> SessionToken:
    try:
        claims = jwt.decode(token, secret, algorithms=[ALGORITHM], options={"require": REQUIRED})
        user_id = int(claims["sub"])
    except jwt.ExpiredSignatureError as exc:
        raise Unauthorized("Your session has expired. Please sign in again.") from exc
    except (jwt.InvalidTokenError, ValueError) as exc:
        raise Unauthorized("Invalid session. Please sign in again.") from exc
    expires = datetime.fromtimestamp(claims["exp"], tz=utcnow().tzinfo)
    return SessionToken(token, str(claims["jti"]), user_id, expires)


def csrf_token(jti: str, secret: str) -> str:
    """Bound to the session, so a token planted by another site cannot be reused."""
    return hmac.new(secret.encode(), f"csrf:{jti}".encode(), hashlib.sha256).hexdigest()


def csrf_matches(jti: str, secret: str, cookie: str | None, header: str | None) -> bool:
    if not cookie or not header:
        return False
    expected = csrf_token(jti, secret)
    return hmac.compare_digest(cookie, header) and hmac.compare_digest(header, expected)
