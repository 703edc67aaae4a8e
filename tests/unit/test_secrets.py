from __future__ import annotations

import pytest

from assay.core.errors import Conflict
from assay.core.llm.secrets import decrypt_secret, encrypt_secret, last4

MASTER = "m" * 48


def test_round_trip_and_no_plaintext_in_the_ciphertext() -> None:
    blob = encrypt_secret(MASTER, 7, "openai", "sk-live-abcdef123456")
    assert b"sk-live" not in blob and b"123456" not in blob
    assert decrypt_secret(MASTER, 7, "openai", blob) == "sk-live-abcdef123456"
    assert encrypt_secret(MASTER, 7, "openai", "same") != encrypt_secret(MASTER, 7, "openai",
                                                                           "same")


@pytest.mark.parametrize("project_id, kind, master", [
    (8, "openai", MASTER), (7, "anthropic", MASTER), (7, "openai", "x" * 48),
])
def test_bound_to_project_kind_and_key(project_id: int, kind: str, master: str) -> None:
    blob = encrypt_secret(MASTER, 7, "openai", "sk-secret-value")
    with pytest.raises(Conflict, match="cannot be decrypted"):
        decrypt_secret(master, project_id, kind, blob)


def test_tampering_is_detected() -> None:
    blob = bytearray(encrypt_secret(MASTER, 7, "openai", "sk-secret-value"))
    blob[-1] ^= 1
    with pytest.raises(Conflict):
        decrypt_secret(MASTER, 7, "openai", bytes(blob))


def test_last4_never_reveals_short_secrets() -> None:
    assert last4("sk-abcdefgh1234") == "1234"
    assert last4("short") == ""
