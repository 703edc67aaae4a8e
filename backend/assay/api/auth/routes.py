"""Register, sign in and out, who am I, personal API tokens."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from flask import Response, g, jsonify, request
from sqlalchemy.exc import IntegrityError

from assay.api.auth.schemas import (
    LoginResultSchema,
    LoginSchema,
    RegisterSchema,
    TokenCreatedSchema,
    TokenCreateSchema,
    TokenListSchema,
    UserSchema,
)
from assay.api.base import Blueprint, commit, runtime, session, user
from assay.api.security import CSRF_COOKIE, SESSION_COOKIE, cookies_secure
from assay.core.auth import devices, sessions
from assay.core.auth import service as auth
from assay.core.projects import invites
from assay.ratelimit import Limiter, LoginThrottle

blp = Blueprint("auth", __name__, url_prefix="/api/auth", description="Accounts and sessions")
WINDOW_S = 15 * 60


def _limiter(name: str, limit: int, message: str) -> Limiter:
    return Limiter(runtime().redis, name, limit, WINDOW_S, message)


@blp.post("/register")
@blp.doc(security=[])  # public: see security.PUBLIC_ENDPOINTS
@blp.arguments(RegisterSchema)
@blp.response(201, LoginResultSchema)
def register(data: dict[str, Any]) -> Any:
    """Creates the account and signs it in, as /login does (the same cookies and CSRF
    token): a new user lands on their projects rather than on the sign-in form."""
    limiter = _limiter("register", runtime().settings.register_ip_limit,
                       "Too many attempts, try again in 15 minutes")
    limiter.check(request.remote_addr or "?")
    limiter.hit(request.remote_addr or "?")
    if not runtime().settings.self_registration:
        invites.check_may_register(session(), data["email"])
    try:
        created = auth.register(session(), data["email"], data["password"], data["name"],
                                runtime().settings.bcrypt_rounds)
        invites.accept_invites(session(), created)  # pending invites become memberships
        commit()
    except IntegrityError as error:  # a concurrent registration of this email got in first
        session().rollback()
        raise auth.email_taken() from error
    return _signed_in(created, remember_me=False, status=201)


@blp.post("/login")
@blp.doc(security=[])  # public: see security.PUBLIC_ENDPOINTS
@blp.arguments(LoginSchema)
@blp.response(200, LoginResultSchema)
def login(data: dict[str, Any]) -> Any:
    settings = runtime().settings
    throttle = LoginThrottle(runtime().redis, settings, request.remote_addr or "?", WINDOW_S)
    found, device = auth.authenticate(session(), data["email"], data["password"],
                                      settings.bcrypt_rounds, throttle,
                                      request.cookies.get(devices.COOKIE), settings.secret_key)
    commit()
    response = _signed_in(found, remember_me=data["remember_me"], status=200)
    # this browser is now a known device of the account: the account's back-off never holds
    # it (sent to /api/auth only; kept through sign-out, which ends the session, not the trust)
    response.set_cookie(devices.COOKIE, devices.issue(found.id, settings.secret_key, device),
                        max_age=devices.MAX_AGE_S, httponly=True, samesite="Strict",
                        secure=cookies_secure(), path="/api/auth")
    return response


def _signed_in(found: Any, *, remember_me: bool, status: int) -> Response:
    """The session and CSRF cookies of a new session of `found`, and {user, csrf_token}."""
    settings = runtime().settings
    days = settings.remember_days if remember_me else settings.session_days
    token = sessions.issue(found.id, found.email, settings.jwt_secret, timedelta(days=days))
    csrf = sessions.csrf_token(token.jti, settings.jwt_secret)
    response = jsonify(LoginResultSchema().dump({"user": found, "csrf_token": csrf}))
    response.status_code = status
    max_age = days * 86400 if remember_me else None
    for name, value, http_only in ((SESSION_COOKIE, token.token, True),
                                   (CSRF_COOKIE, csrf, False)):
        response.set_cookie(name, value, max_age=max_age, httponly=http_only, samesite="Strict",
                            secure=cookies_secure(), path="/")
    return response


@blp.post("/logout")
@blp.response(204)
def logout() -> Any:
    claims = g.get("session_token")
    if claims is not None:
        auth.revoke_session(session(), user(), claims.jti, claims.expires_at)
        commit()  # every process forgets the session at once (kept_reads.keep_or_forget)
    response = Response(status=204)
    for name in (SESSION_COOKIE, CSRF_COOKIE):
        response.delete_cookie(name, path="/", samesite="Strict", secure=cookies_secure(),
                               httponly=name == SESSION_COOKIE)
    return response


@blp.get("/me")
@blp.response(200, UserSchema)
def me() -> Any:
    return user()


@blp.get("/tokens")
@blp.response(200, TokenListSchema)
def list_tokens() -> Any:
    return {"items": auth.list_api_tokens(session(), user())}


@blp.post("/tokens")
@blp.arguments(TokenCreateSchema)
@blp.response(201, TokenCreatedSchema)
def create_token(data: dict[str, Any]) -> Any:
    token, plaintext = auth.create_api_token(session(), user(), data["name"])
    commit()
    return {"id": token.id, "name": token.name, "prefix": token.prefix,
            "created_at": token.created_at, "last_used_at": None, "token": plaintext}


@blp.delete("/tokens/<int:token_id>")
@blp.response(204)
def delete_token(token_id: int) -> Any:
    auth.delete_api_token(session(), user(), token_id)
    commit()  # every process forgets the token at once (kept_reads.keep_or_forget)
    return None
