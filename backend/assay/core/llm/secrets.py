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
from sqlalchemy.orm import object_session

from assay.core.errors import Conflict
from assay.core.llm import env_keys
from assay.core.llm.models import Credential
from assay.core.projects.models import Project

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


def credential_key(master: str, credential: Credential) -> str | None:
    """The key to send for a saved credential: from its environment variable (when the
    operator grants it to the project and the URL, env_keys.py), else its stored secret,
    else None (providers such as Ollama or a local server need none)."""
    if credential.secret_env:
        return env_keys.read(credential.secret_env, credential.project_id,
                             _project_slug(credential), credential.kind, credential.base_url)
    if credential.secret_ciphertext:
        return decrypt_secret(master, credential.project_id, credential.kind,
                              credential.secret_ciphertext)
    return None


def _project_slug(credential: Credential) -> str:
    session = object_session(credential)
    project = session.get(Project, credential.project_id) if session is not None else None
    return project.slug if project is not None else ""
