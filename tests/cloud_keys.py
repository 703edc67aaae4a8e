"""Test credentials for the Google and AWS adapters against the fake provider: a service
account with a key pair made for the test session (never a committed secret), and an AWS
access key the fake knows the secret of."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import httpx
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

AWS_KEY_ID = "AKIAASSAYTEST0000001"
AWS_SECRET = "assay/test/secret+access+key0000000000000"
SA_EMAIL = "runner@assay-test.iam.gserviceaccount.com"


@cache
def key_pair(name: str) -> tuple[str, str]:
    """(private PEM, public PEM) of a fresh RSA key, one per name and session."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption()).decode()
    public = key.public_key().public_bytes(serialization.Encoding.PEM,
                                           serialization.PublicFormat.SubjectPublicKeyInfo)
    return private, public.decode()


def service_account(fake_url: str, key: str = "trusted", email: str = SA_EMAIL) -> str:
    return json.dumps({"type": "service_account", "project_id": "assay-test",
                       "private_key_id": f"test-{key}", "private_key": key_pair(key)[0],
                       "client_email": email, "client_id": "1",
                       "token_uri": f"{fake_url}/token"})


def trust(fake_url: str, **extra: Any) -> None:
    """Make the fake accept the test service account and the test AWS key."""
    httpx.post(f"{fake_url}/_fake/config", json={
        "google_accounts": {SA_EMAIL: key_pair("trusted")[1]},
        "aws_keys": {AWS_KEY_ID: AWS_SECRET}, **extra}).raise_for_status()
