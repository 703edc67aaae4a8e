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
MIN_LENGTH = 12
# Each class a password needs, as a regex that reads the same in Python and ECMAScript (the
# OpenAPI document states the policy as one `pattern` built from these).
CLASSES: list[tuple[str, str]] = [
    ("[A-Z]", "an uppercase letter"),
    ("[a-z]", "a lowercase letter"),
    ("[0-9]", "a number"),
    (f"[{SPECIALS}]", f"a special character ({SPECIALS})"),
]
RULES: list[tuple[str, str]] = [
    (f".{{{MIN_LENGTH},}}", f"Password must be at least {MIN_LENGTH} characters"),
    *((pattern, f"Password must contain {what}") for pattern, what in CLASSES),
]
# Lookaheads, one per class; [\s\S] because a password may hold a newline.
PATTERN = "^" + "".join(f"(?=[\\s\\S]*{pattern})" for pattern, _ in CLASSES)
POLICY = (f"At least {MIN_LENGTH} characters with an uppercase and a lowercase letter, a "
          f"number and one of {SPECIALS}")


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
