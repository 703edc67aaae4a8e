"""Password rules and bcrypt hashing.

bcrypt reads only the first 72 bytes, so the password is first reduced with SHA-256
(base64, 44 bytes): long passwords keep all their entropy and never collide by prefix.
"""

from __future__ import annotations

import base64
import hashlib
import re

import bcrypt

SPECIALS = "!@#$%^&*"
RULES: list[tuple[str, str]] = [
    (r".{12,}", "Password must be at least 12 characters"),
    (r"[A-Z]", "Password must contain an uppercase letter"),
    (r"[a-z]", "Password must contain a lowercase letter"),
    (r"[0-9]", "Password must contain a number"),
    (f"[{re.escape(SPECIALS)}]", f"Password must contain a special character ({SPECIALS})"),
]


def password_problems(password: str) -> list[str]:
    return [message for pattern, message in RULES if not re.search(pattern, password, re.S)]


def _reduce(password: str) -> bytes:
    return base64.b64encode(hashlib.sha256(password.encode()).digest())


def hash_password(password: str, rounds: int) -> str:
    return bcrypt.hashpw(_reduce(password), bcrypt.gensalt(rounds)).decode()


def verify_password(password: str, hashed: str) -> bool:
    return bcrypt.checkpw(_reduce(password), hashed.encode())


def hash_cost(hashed: str) -> int:
    """The cost factor a bcrypt hash was made with ($2b$12$...)."""
    return int(hashed.split("$")[2])
