"""Authentication for every API request, in one place: bearer tokens, or the session
cookie plus the CSRF double-submit header on unsafe methods; and the security headers and
cookie flags of every API response."""

from __future__ import annotations

from flask import Flask, Response, current_app, g, request
from sqlalchemy import inspect
from sqlalchemy.orm import make_transient_to_detached
from werkzeug.http import parse_cookie

from assay.admission import Environ
from assay.api.fields import MAX_ID
from assay.core.auth import service as auth
from assay.core.auth import sessions
from assay.core.auth.cache import CredentialCache, Entry
from assay.core.auth.models import User
from assay.core.errors import Forbidden, NotFound, Unauthorized
from assay.extensions import db
from assay.runtime import current

SESSION_COOKIE = "assay_session"
CSRF_COOKIE = "assay_csrf"
CSRF_HEADER = "X-CSRF-Token"
CREDENTIALS = "assay_credentials"  # the app's extension: this process's CredentialCache
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
PUBLIC_ENDPOINTS = frozenset({
    "auth.register", "auth.login", "health.health", "health.ready", "api-docs.openapi_json",
    "docs.page", "docs.init", "docs.assets", "static",
})
# JSON needs nothing from a browser: no script, style, frame or form, and no framing.
API_CSP = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
HEADERS = {
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",  # frame-ancestors' twin for browsers without CSP 2
    "Referrer-Policy": "no-referrer",
    "Content-Security-Policy": API_CSP,
}


def _bearer(header: str) -> str | None:
    scheme, _, token = header.partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


def _token_key(token: str) -> str:
    return "token:" + auth.token_digest(token)


def _session_key(claims: sessions.SessionToken) -> str:
    return "session:" + claims.jti


def credential_cache(app: Flask | None = None) -> CredentialCache:
    """This process's credentials, of `app` (outside a request) or the current one."""
    cache: CredentialCache = (app or current_app).extensions[CREDENTIALS]
    return cache


def _cached_user(key: str) -> User | None:
    """The credential's user from this process's cache, in the request's session (merged
    without a query: it behaves as if just loaded)."""
    entry = credential_cache().get(key)
    if entry is None:
        return None
    user = User(**entry.columns)
    user.id = entry.user_id
    make_transient_to_detached(user)
    return db.session.merge(user, load=False)


def _keep(key: str, user: User, since: int) -> None:
    """Keep what was read in generation `since` (dropped if a write cleared the cache since)."""
    columns = {attr.key: getattr(user, attr.key) for attr in inspect(User).column_attrs
               if attr.key != "id"}
    credential_cache().put(key, Entry(user.id, columns), since=since)


def _from_bearer(token: str) -> User:
    key = _token_key(token)
    user = _cached_user(key)
    if user is None:
        since = credential_cache().generation
        user = auth.user_for_api_token(db.session, token)
        _keep(key, user, since)
    return user


def _from_cookie(token: str) -> User:
    settings = current().settings
    claims = sessions.decode(token, settings.jwt_secret)
    key = _session_key(claims)
    user = _cached_user(key)
    if user is not None:
        return _check_csrf(claims, user)
    since = credential_cache().generation
    if auth.is_revoked(db.session, claims.jti):
        raise Unauthorized("You have signed out. Please sign in again.")
    user = db.session.get(User, claims.user_id)
    if user is None:
        raise Unauthorized("Invalid session. Please sign in again.")
    _keep(key, user, since)
    return _check_csrf(claims, user)


def _check_csrf(claims: sessions.SessionToken, user: User) -> User:
    settings = current().settings
    if request.method not in SAFE_METHODS and not sessions.csrf_matches(
        claims.jti, settings.jwt_secret, request.cookies.get(CSRF_COOKIE),
        request.headers.get(CSRF_HEADER),
    ):
        raise Forbidden("Missing or invalid CSRF token", code="CSRF_FAILED")
    g.session_token = claims
    return user


def authenticate_request() -> None:
    if not request.path.startswith("/api/") or request.endpoint in PUBLIC_ENDPOINTS:
        return
    if request.routing_exception is not None or request.method == "OPTIONS":
        return  # no such route (404) or method (405, with Allow): say so before any 401
    bearer = _bearer(request.headers.get("Authorization", ""))
    if bearer is not None:
        g.user = _from_bearer(bearer)
        return
    cookie = request.cookies.get(SESSION_COOKIE)
    if not cookie:
        raise Unauthorized("Sign in to continue")
    g.user = _from_cookie(cookie)


def user_id_kept(app: Flask, environ: Environ) -> int | None:
    """The user of a safe request's credential when this process verified it within
    ASSAY_AUTH_CACHE_S (what authenticate_request would trust), without a query; else
    None. A session's token is still checked for its signature and expiry."""
    bearer = _bearer(environ.get("HTTP_AUTHORIZATION", ""))
    if bearer is not None:
        key = _token_key(bearer)
    else:
        cookie = parse_cookie(environ).get(SESSION_COOKIE)
        if not cookie:
            return None
        try:
            key = _session_key(sessions.decode(cookie, current().settings.jwt_secret))
        except Unauthorized:
            return None
    entry = credential_cache(app).get(key)
    return None if entry is None else entry.user_id


def requester_key(environ: Environ) -> str:
    """Who sends this request, without a query and the same on every request: the user of
    a signed session, else the API token (or whatever credential it carries; Flask then
    checks it). For counting a requester's requests, not for trusting them."""
    bearer = _bearer(environ.get("HTTP_AUTHORIZATION", ""))
    if bearer is not None:
        return _token_key(bearer)
    cookie = parse_cookie(environ).get(SESSION_COOKIE)
    if cookie:
        try:
            return f"user:{sessions.decode(cookie, current().settings.jwt_secret).user_id}"
        except Unauthorized:
            pass
    return "other:" + auth.token_digest(environ.get("HTTP_AUTHORIZATION", "") + (cookie or ""))


def impossible_ids() -> None:
    """An id in the path outside the database's integer range cannot exist: 404 before a
    query sees it (it would overflow the column type and fail as a 500)."""
    for value in (request.view_args or {}).values():
        if isinstance(value, int) and not 1 <= value <= MAX_ID:
            raise NotFound("Not found")


def secure_headers(response: Response) -> Response:
    """Every API answer, errors included; a view may set its own (the docs page's CSP)."""
    if request.path.startswith("/api/"):
        for name, value in HEADERS.items():
            response.headers.setdefault(name, value)
    return response


def cookies_secure() -> bool:
    """Secure cookies when the browser came over HTTPS: directly, or through the trusted
    proxies' X-Forwarded-Proto (ProxyFix, ASSAY_TRUSTED_PROXIES); ASSAY_COOKIE_SECURE
    forces them where the proxy says nothing."""
    return current().settings.cookie_secure or request.is_secure


def init_app(app: Flask) -> None:
    app.extensions[CREDENTIALS] = CredentialCache(current().settings.auth_cache_s)
    app.before_request(authenticate_request)
    app.before_request(impossible_ids)
    app.after_request(secure_headers)
