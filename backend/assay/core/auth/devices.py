"""The device cookie: proof that this browser signed in to this account before.

Set on every successful sign-in and bound to the user id by an HMAC of the server's secret
key, so it cannot be forged or carried over to another account. A known device is never
held back by the account-wide back-off (ratelimit.LoginThrottle): an attacker guessing from
elsewhere slows strangers down, not the owner's own browser.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

COOKIE = "assay_device"
MAX_AGE_S = 365 * 86400


def _signature(user_id: int, device: str, secret: str) -> str:
    message = f"assay-device:{user_id}:{device}".encode()
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()[:32]


def issue(user_id: int, secret: str, device: str | None = None) -> str:
    """The cookie's value for `user_id`: the same device id when the browser had one."""
    device = device or secrets.token_hex(12)
    return f"{user_id}.{device}.{_signature(user_id, device, secret)}"


def verify(value: str | None, user_id: int, secret: str) -> str | None:
    """The device id when `value` is a genuine cookie of `user_id`, else None."""
    if not value or value.count(".") != 2:
        return None
    uid, device, signature = value.split(".")
    if uid != str(user_id) or not device.isalnum() or len(device) > 64:
        return None
    if not hmac.compare_digest(signature, _signature(user_id, device, secret)):
        return None
    return device
