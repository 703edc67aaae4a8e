"""The secrets of the cloud kinds, checked on save: a Vertex credential's is a
service-account JSON key, a Bedrock one's the secret access key (or a JSON object of it and a
session token). A bad one is a 422 on `api_key` that says what is wrong, never the secret.
"""

from __future__ import annotations

import json
from urllib.parse import urlsplit

from assay.core.errors import Invalid
from assay.core.llm.kinds import BEDROCK, VERTEX
from assay.core.llm.secrets import last4
from assay.providers.google_token import InvalidServiceAccount, parse_service_account
from assay.providers.ssrf import UnresolvableHost, UrlPolicy, check_base_url


def _invalid(message: str) -> Invalid:
    return Invalid(message, {"json": {"api_key": [message]}})


def _bedrock_parts(secret: str) -> tuple[str, str | None]:
    if not secret.lstrip().startswith("{"):
        if any(c.isspace() for c in secret.strip()):
            raise _invalid("The secret access key has no spaces or line breaks.")
        return secret.strip(), None
    try:
        parts = json.loads(secret)
    except ValueError:
        raise _invalid("The Bedrock secret is neither a secret access key nor JSON of "
                       '{"secret_access_key": ..., "session_token": ...}.') from None
    key = parts.get("secret_access_key") if isinstance(parts, dict) else None
    token = parts.get("session_token") if isinstance(parts, dict) else None
    if not isinstance(key, str) or not key or not (token is None or isinstance(token, str)):
        raise _invalid('The Bedrock secret\'s JSON needs "secret_access_key" (and optionally '
                       '"session_token") as strings.')
    return key, token


def check_secret(kind: str, secret: str | None, policy: UrlPolicy) -> None:
    """422 for a secret the kind cannot use; the service account's token_uri must pass the
    SSRF guard (google-auth calls it, not Assay's client)."""
    if not secret:
        return
    if kind == BEDROCK:
        _bedrock_parts(secret)
    elif kind == VERTEX:
        try:
            info = parse_service_account(secret)
        except InvalidServiceAccount as bad:
            raise _invalid(str(bad)) from None
        parts = urlsplit(str(info["token_uri"]))
        try:
            check_base_url(f"{parts.scheme}://{parts.netloc}", policy)
        except UnresolvableHost:
            pass  # the connection test says so
        except Invalid as refused:
            raise _invalid(f"The key's token_uri is refused: {refused.message}") from None


def hint(kind: str, secret: str) -> str:
    """The last characters shown of a secret: of the key id for a service account, of the
    secret access key for Bedrock's JSON, else of the secret."""
    if kind == VERTEX:
        try:
            return last4(str(json.loads(secret).get("private_key_id") or ""))
        except (ValueError, AttributeError):
            return ""
    if kind == BEDROCK:
        return last4(_bedrock_parts(secret)[0])
    return last4(secret)
