"""OAuth access tokens of Google service accounts (Vertex AI), through google-auth.

The service-account JSON is the credential's secret. google-auth signs the JWT assertion
with its private key and trades it at the account's `token_uri` for an access token
(an hour, usually). Tokens are cached per account, so a call costs no token request:

* with more than REFRESH_AHEAD_S left, the cached token is used as it is;
* with less, it is still used, and one refresh starts in the background (a thread);
* only without a usable token (the first call, or past MIN_LEFT_S) does a call wait,
  and then every call waiting shares the one refresh.

The refresh is blocking (google-auth over requests), so it runs in a small thread pool,
never on an event loop. No redirect is followed; the token_uri was checked against the
SSRF guard when the credential was saved.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import UTC
from typing import Any

import requests
from google.auth import exceptions as google_errors
from google.auth.transport.requests import Request
from google.oauth2 import service_account

from assay.providers.base import ProviderError

SCOPES = ("https://www.googleapis.com/auth/cloud-platform",)
REFRESH_AHEAD_S = 300.0
MIN_LEFT_S = 30.0
TIMEOUT_S = 10.0
REQUIRED = ("type", "client_email", "private_key", "token_uri")


class InvalidServiceAccount(ValueError):
    """The JSON is not a usable service-account key (message says what is wrong)."""


def parse_service_account(text: str) -> dict[str, Any]:
    """The service account's fields, checked as google-auth will use them."""
    try:
        info = json.loads(text)
    except ValueError:
        raise InvalidServiceAccount("The service-account key is not valid JSON.") from None
    if not isinstance(info, dict):
        raise InvalidServiceAccount("The service-account key must be a JSON object.")
    missing = [name for name in REQUIRED if not info.get(name)]
    if missing:
        raise InvalidServiceAccount(
            f"The service-account key lacks {', '.join(missing)} (download a JSON key of "
            "the service account from the Google Cloud console).")
    if info["type"] != "service_account":
        raise InvalidServiceAccount(f"The key's type is {str(info['type'])[:40]!r}, not "
                                    "'service_account'.")
    if not str(info["token_uri"]).startswith(("https://", "http://")):
        raise InvalidServiceAccount("The key's token_uri must be an http(s) URL.")
    try:
        service_account.Credentials.from_service_account_info(info, scopes=SCOPES)
    except (ValueError, TypeError, KeyError):
        raise InvalidServiceAccount("The key's private_key cannot be read (is it the "
                                    "PEM text the JSON key came with?).") from None
    return info


class _NoRedirects(Request):
    def __init__(self) -> None:
        session = requests.Session()
        session.max_redirects = 0
        session.trust_env = False
        super().__init__(session)

    def __call__(self, url: str, method: str = "GET", body: Any = None, headers: Any = None,
                 timeout: float | None = None, **kwargs: Any) -> Any:
        return super().__call__(url, method, body, headers, timeout or TIMEOUT_S, **kwargs)


class _Account:
    """One service account's credentials and its current token."""

    def __init__(self, info: dict[str, Any]) -> None:
        self.credentials = service_account.Credentials.from_service_account_info(
            info, scopes=SCOPES)
        self.token: str | None = None
        self.expires_at = 0.0
        self.pending: Future[None] | None = None
        self.lock = threading.Lock()

    def left(self) -> float:
        return self.expires_at - time.time()

    def refresh(self) -> None:
        try:
            self.credentials.refresh(_NoRedirects())
        except google_errors.RefreshError as exc:
            raise ProviderError("auth", f"the token request was refused: {exc}") from None
        except (google_errors.TransportError, requests.RequestException) as exc:
            raise ProviderError("network", f"the token request failed: {exc}") from None
        expiry = self.credentials.expiry
        self.token = self.credentials.token
        self.expires_at = (expiry.replace(tzinfo=UTC).timestamp() if expiry is not None
                           else time.time() + 3000)


class TokenCache:
    def __init__(self, workers: int = 2) -> None:
        self._accounts: dict[str, _Account] = {}
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="gtoken")
        self.refreshes = 0  # token requests made (tests: none per call)

    def _account(self, secret: str | None) -> _Account:
        if not secret:
            raise ProviderError("auth", "no service-account key for this credential")
        digest = hashlib.sha256(secret.encode()).hexdigest()
        with self._lock:
            found = self._accounts.get(digest)
        if found is not None:
            return found
        try:
            account = _Account(parse_service_account(secret))
        except InvalidServiceAccount as bad:
            raise ProviderError("auth", str(bad)) from None
        with self._lock:
            return self._accounts.setdefault(digest, account)

    def _start(self, account: _Account) -> Future[None]:
        """The refresh in progress for this account, or a new one."""
        with account.lock:
            if account.pending is None or account.pending.done():
                self.refreshes += 1
                account.pending = self._pool.submit(account.refresh)
            return account.pending

    async def ensure(self, secret: str | None) -> None:
        """A usable token for this account, refreshing in the background when it nears its
        end; waits only when there is none."""
        account = self._account(secret)
        left = account.left()
        if left > REFRESH_AHEAD_S:
            return
        pending = self._start(account)
        if left > MIN_LEFT_S and account.token is not None:
            pending.add_done_callback(_swallow)  # failed: the next call tries again
            return
        await asyncio.wrap_future(pending)

    def token(self, secret: str | None) -> str:
        """The cached token; without a usable one, refreshed here (blocking: connection
        tests, and calls that were not prepared)."""
        account = self._account(secret)
        if account.token is None or account.left() <= MIN_LEFT_S:
            self._start(account).result(timeout=TIMEOUT_S * 2)
        assert account.token is not None
        return account.token


def _swallow(future: Future[None]) -> None:
    future.exception()


TOKENS = TokenCache()
