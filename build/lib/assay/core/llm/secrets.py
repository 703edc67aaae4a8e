"""Provider secrets at rest: AES-256-GCM, bound to their project and provider kind.

The key is derived from SECRET_KEY (HKDF-SHA256), so the database alone reveals nothing;
the associated data ties a ciphertext to one project and one provider kind, so a secret
copied into another row or project fails to decrypt instead of being used there.
"""

from __future__ import annotations

import os

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from assay.core.errors import Conflict

NONCE_BYTES = 12
_INFO = b"assay credential secrets v1"


def _key(master: str) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_INFO).derive(
        master.encode())


def _bound_to(project_id: int, kind: str) -> bytes:
    return f"assay:credential:{project_id}:{kind}".encode()


def encrypt_secret(master: str, project_id: int, kind: str, secret: str) -> bytes:
    nonce = os.urandom(NONCE_BYTES)
    return nonce + AESGCM(_key(master)).encrypt(nonce, secret.encode(), _bound_to(project_id, kind))


def decrypt_secret(master: str, project_id: int, kind: str, blob: bytes) -> str:
    try:
        plain = AESGCM(_key(master)).decrypt(blob[:NONCE_BYTES], blob[NONCE_BYTES:],
                                             _bound_to(project_id, kind))
    except (InvalidTag, ValueError) as exc:
        raise Conflict("The stored secret cannot be decrypted: SECRET_KEY changed, or the row "
                       "was altered. Enter the key again.", code="SECRET_UNREADABLE") from exc
    return plain.decode()


def last4(secret: str) -> str:
    return secret[-4:] if len(secret) >= 8 else ""  # short secrets show nothing of themselves


def resolve_api_key(master: str, project_id: int, kind: str, ciphertext: bytes | None,
                    env_name: str | None, environ: dict[str, str] | None = None) -> str | None:
    """The key to send: from the named environment variable, else the stored secret, else
    None (providers such as Ollama or a local server need none)."""
    if env_name:
        value = (os.environ if environ is None else environ).get(env_name)
        if not value:
            raise Conflict(f"The environment variable {env_name} holding this credential's "
                           "key is not set on this server.", code="SECRET_ENV_MISSING")
        return value
    if ciphertext:
        return decrypt_secret(master, project_id, kind, ciphertext)
    return None
