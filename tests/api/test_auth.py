"""Accounts and sessions: password rules, login lockout and rate limit, JWT validation,
CSRF, API tokens, logout, cookie flags, bcrypt cost, audit of failed logins."""

from __future__ import annotations

import re
import secrets
import statistics
import time
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import jwt
import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import func, select
from werkzeug.test import TestResponse

from assay.core.auth.models import ApiToken, User
from assay.core.auth.passwords import hash_password
from assay.core.auth.service import register
from assay.core.base import utcnow
from assay.core.projects.models import AuditEvent, Project
from assay.extensions import db
from assay.runtime import current
from assay.settings import Settings
from tests.factories import PASSWORD, Factory, race

SESSION_COOKIE, CSRF_COOKIE, CSRF_HEADER = "assay_session", "assay_csrf", "X-CSRF-Token"
STRONG = "Sturdy-passw0rd!"


def _count(model: type[Any], *where: Any) -> int:
    with db.factory() as session:
        return session.scalar(select(func.count()).select_from(model).where(*where)) or 0


def _assert_error(reply: TestResponse, status: int, code: str) -> dict[str, Any]:
    assert reply.status_code == status, reply.get_data(as_text=True)
    body: dict[str, Any] = reply.json or {}
    assert body["code"] == code and body["status"] == status, body
    assert isinstance(body["message"], str) and body["message"]
    assert isinstance(body["errors"], dict)
    return body


def _register(client: FlaskClient, email: str = "new@example.com", password: str = STRONG,
              confirm: str | None = None) -> TestResponse:
    return client.post("/api/auth/register", json={
        "email": email, "password": password,
        "confirm_password": password if confirm is None else confirm})


def _login(client: FlaskClient, email: str, password: str = PASSWORD,
           **kwargs: Any) -> TestResponse:
    return client.post("/api/auth/login", json={"email": email, "password": password},
                       **kwargs)


def _claims(user: User, **changes: Any) -> dict[str, Any]:
    now = utcnow()
    claims = {"sub": str(user.id), "email": user.email, "iat": now,
              "exp": now + timedelta(hours=1), "jti": secrets.token_hex(16)}
    claims.update(changes)
    return {key: value for key, value in claims.items() if value is not None}


def _me_with_cookie(app: Flask, token: str) -> TestResponse:
    client = app.test_client()
    client.set_cookie(SESSION_COOKIE, token)
    return client.get("/api/auth/me")


# --- registration -------------------------------------------------------------------------


def test_register_creates_an_account_that_can_sign_in(client: FlaskClient) -> None:
    reply = _register(client, "Fresh@Example.com")
    assert reply.status_code == 201, reply.json
    assert reply.json is not None and reply.json["user"]["email"] == "fresh@example.com"
    assert "password" not in reply.json["user"] and "password_hash" not in reply.json["user"]
    assert _login(client, "fresh@example.com", STRONG).status_code == 200


def test_register_signs_the_new_user_in_as_login_does(app: Flask) -> None:
    """The reply carries what /login's does (user, csrf_token) and sets the same cookies:
    the new user is signed in (me answers) and may write with the CSRF token."""
    client = app.test_client()
    reply = _register(client, "Signed@Example.com")
    assert reply.status_code == 201, reply.json
    body = reply.json or {}
    assert set(body) == {"user", "csrf_token"} and body["csrf_token"]
    cookies = {c.split("=", 1)[0]: c for c in reply.headers.getlist("Set-Cookie")}
    assert set(cookies) == {SESSION_COOKIE, CSRF_COOKIE}
    assert "HttpOnly" in cookies[SESSION_COOKIE] and "HttpOnly" not in cookies[CSRF_COOKIE]
    assert all("SameSite=Strict" in c for c in cookies.values())
    me = client.get("/api/auth/me")
    assert me.status_code == 200 and me.json is not None
    assert me.json["email"] == "signed@example.com"
    created = client.post("/api/projects", json={"name": "First"},
                          headers={"X-CSRF-Token": body["csrf_token"]})
    assert created.status_code == 201, created.json
    refused = client.post("/api/projects", json={"name": "Second"})
    assert refused.status_code == 403  # the session is a real one: writes need its token


def test_a_refused_registration_signs_nobody_in(app: Flask) -> None:
    client = app.test_client()
    reply = _register(client, "weak@example.com", password="short")
    assert reply.status_code == 422
    assert not reply.headers.getlist("Set-Cookie")
    assert client.get("/api/auth/me").status_code == 401


@pytest.mark.parametrize(("password", "message"), [
    ("Sh0rt!pass", "Password must be at least 12 characters"),
    ("no-upper-case-1!", "Password must contain an uppercase letter"),
    ("NO-LOWER-CASE-1!", "Password must contain a lowercase letter"),
    ("No-digits-here!!", "Password must contain a number"),
    ("NoSpecialChars123", "Password must contain a special character (!@#$%^&*)"),
], ids=["too-short", "no-upper", "no-lower", "no-digit", "no-special"])
def test_each_password_rule_is_rejected_with_its_own_message(
        client: FlaskClient, password: str, message: str) -> None:
    body = _assert_error(_register(client, password=password), 422, "WEAK_PASSWORD")
    assert body["errors"]["json"]["password"] == [message]
    assert _count(User) == 0


def test_registrations_over_the_address_limit_are_429_with_retry_after(
        client: FlaskClient, settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(current(), "settings", replace(settings, register_ip_limit=1))
    assert _register(client, "first@example.com").status_code == 201
    reply = _register(client, "second@example.com")
    _assert_error(reply, 429, "RATE_LIMITED")
    assert 14 * 60 < _retry_after(reply) <= 15 * 60


def test_passwords_that_do_not_match_are_rejected_on_confirm_password(
        client: FlaskClient) -> None:
    body = _assert_error(_register(client, confirm=STRONG + "x"), 422, "VALIDATION_ERROR")
    assert body["errors"]["json"]["confirm_password"] == ["Passwords don't match"]
    assert _count(User) == 0


def test_duplicate_email_is_refused_case_insensitively(client: FlaskClient) -> None:
    assert _register(client, "alice@example.com").status_code == 201
    body = _assert_error(_register(client, "ALICE@Example.COM"), 409, "EMAIL_TAKEN")
    assert body["errors"]["json"]["email"]
    assert _count(User) == 1


# --- login, lockout, rate limit -----------------------------------------------------------


def test_wrong_password_and_unknown_email_get_the_same_answer(
        client: FlaskClient, factory: Factory) -> None:
    user = factory.user()
    wrong = _assert_error(_login(client, user.email, "Wrong-password-1!"), 401,
                          "INVALID_CREDENTIALS")
    unknown = _assert_error(_login(client, "nobody@example.com"), 401, "INVALID_CREDENTIALS")
    assert wrong["message"] == unknown["message"] == "Invalid email or password"
    assert wrong == unknown
    assert SESSION_COOKIE not in _set_cookies(_login(client, user.email, "Wrong-password-1!"))


def test_login_email_is_case_insensitive(client: FlaskClient, factory: Factory) -> None:
    user = factory.user("carol@example.com")
    reply = _login(client, "Carol@EXAMPLE.com")
    assert reply.status_code == 200
    assert reply.json is not None and reply.json["user"]["id"] == user.id


WRONG = "Wrong-password-1!"
ADDRESS_A, ADDRESS_B = {"REMOTE_ADDR": "203.0.113.7"}, {"REMOTE_ADDR": "198.51.100.9"}


def _retry_after(reply: TestResponse) -> int:
    value = reply.headers.get("Retry-After")
    assert value is not None and value.isdigit(), reply.headers
    return int(value)


def _shape(reply: TestResponse) -> tuple[int, bytes, list[tuple[str, str]]]:
    """Everything a client sees of an answer (the Retry-After figure may tick by a second;
    the request id is each request's own)."""
    headers = sorted((k, "n" if k in {"Retry-After", "X-Request-ID"} else v)
                     for k, v in reply.headers.items())
    return reply.status_code, reply.get_data(), headers


def test_five_failures_lock_the_account_even_for_the_right_password(
        client: FlaskClient, factory: Factory, settings: Settings) -> None:
    user = factory.user()
    assert settings.login_lock_failures == 5
    for _ in range(4):
        _assert_error(_login(client, user.email, WRONG), 401, "INVALID_CREDENTIALS")
    locked = _login(client, user.email, WRONG)
    body = _assert_error(locked, 423, "ACCOUNT_LOCKED")
    assert "locked" in body["message"].lower()
    assert 14 * 60 < _retry_after(locked) <= 15 * 60
    reply = _login(client, user.email, PASSWORD)
    body = _assert_error(reply, 423, "ACCOUNT_LOCKED")
    assert "15 minutes" in body["message"]
    assert 14 * 60 < _retry_after(reply) <= 15 * 60


def test_login_works_again_after_the_lock_expires(
        client: FlaskClient, factory: Factory, redis_conn: Any, settings: Settings) -> None:
    user = factory.user()
    for _ in range(5):
        _login(client, user.email, WRONG)
    _assert_error(_login(client, user.email), 423, "ACCOUNT_LOCKED")
    locks = list(redis_conn.scan_iter(f"{settings.redis_prefix}:limit:login-locked:*"))
    assert len(locks) == 1
    redis_conn.delete(*locks)  # what its expiry does
    reply = _login(client, user.email)
    assert reply.status_code == 200, reply.json
    for _ in range(4):  # the count started again
        _assert_error(_login(client, user.email, WRONG), 401, "INVALID_CREDENTIALS")


def test_a_lock_from_one_address_does_not_lock_the_account_from_another(
        client: FlaskClient, factory: Factory) -> None:
    """An attacker guessing from address A locks the account for A only: its owner at B
    signs in, and B keeps its own count of five."""
    user = factory.user()
    for _ in range(5):
        _login(client, user.email, WRONG, environ_base=ADDRESS_A)
    _assert_error(_login(client, user.email, environ_base=ADDRESS_A), 423, "ACCOUNT_LOCKED")
    reply = _login(client, user.email, environ_base=ADDRESS_B)
    assert reply.status_code == 200, reply.json
    for _ in range(4):
        _assert_error(_login(client, user.email, WRONG, environ_base=ADDRESS_B), 401,
                      "INVALID_CREDENTIALS")
    _assert_error(_login(client, user.email, WRONG, environ_base=ADDRESS_B), 423,
                  "ACCOUNT_LOCKED")
    _assert_error(_login(client, user.email, environ_base=ADDRESS_A), 423, "ACCOUNT_LOCKED")


def test_an_unknown_email_is_answered_like_a_real_account_through_the_lock(
        client: FlaskClient, factory: Factory) -> None:
    """Status, body and headers of every answer, the fifth failure's 423 and the locked
    answer after it included: a real account and an unknown email cannot be told apart."""
    user = factory.user()
    real = [_login(client, user.email, WRONG) for _ in range(6)]
    ghost = [_login(client, "nobody@example.com", WRONG) for _ in range(6)]
    assert [r.status_code for r in real] == [401] * 4 + [423] * 2
    assert [_shape(r) for r in real] == [_shape(r) for r in ghost]
    assert [_retry_after(r) for r in real[4:]] == pytest.approx(
        [_retry_after(r) for r in ghost[4:]], abs=2)


def _timed_login(client: FlaskClient, email: str, address: int) -> float:
    started = time.perf_counter()
    reply = _login(client, email, WRONG, environ_base={"REMOTE_ADDR": f"10.1.0.{address}"})
    elapsed = time.perf_counter() - started
    assert reply.status_code == 401, reply.json
    return elapsed


def test_an_unknown_email_takes_as_long_as_a_wrong_password(
        client: FlaskClient, settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    """At a cost where bcrypt dominates (the suite's cost 4 is ~1 ms), the unknown email is
    checked against a dummy hash of the same cost. Medians, and a generous bound: before
    the fix the ratio was ~0.02."""
    rounds = 10
    monkeypatch.setattr(current(), "settings", replace(settings, bcrypt_rounds=rounds))
    with db.factory() as session:
        user = register(session, "timed@example.com", PASSWORD, None, rounds)
        session.commit()
    samples: dict[str, list[float]] = {"real": [], "unknown": []}
    for i in range(8):  # a fresh address each: no lock, and interleaved against drift
        samples["real"].append(_timed_login(client, user.email, 2 * i))
        samples["unknown"].append(_timed_login(client, f"ghost{i}@example.com", 2 * i + 1))
    ratio = statistics.median(samples["unknown"]) / statistics.median(samples["real"])
    assert 0.5 < ratio < 2, samples


def test_a_login_rehashes_a_password_made_at_another_cost(
        client: FlaskClient, settings: Settings) -> None:
    """So every account costs what the dummy check costs."""
    with db.factory() as session:
        register(session, "old@example.com", PASSWORD, None, settings.bcrypt_rounds + 1)
        session.commit()
    assert _login(client, "old@example.com").status_code == 200
    with db.factory() as session:
        stored = session.scalar(select(User.password_hash))
    assert stored is not None and stored.startswith(f"$2b${settings.bcrypt_rounds:02d}$")
    assert _login(client, "old@example.com").status_code == 200


def test_a_success_resets_the_failure_count(client: FlaskClient, factory: Factory) -> None:
    user = factory.user()
    for _ in range(4):
        _login(client, user.email, "Wrong-password-1!")
    assert _login(client, user.email).status_code == 200
    for _ in range(4):
        _assert_error(_login(client, user.email, "Wrong-password-1!"), 401,
                      "INVALID_CREDENTIALS")
    assert _login(client, user.email).status_code == 200


def test_failed_logins_per_ip_are_rate_limited(
        client: FlaskClient, factory: Factory, settings: Settings) -> None:
    limit = settings.login_ip_failures
    assert limit == 20  # ASSAY_LOGIN_IP_FAILURES default
    fresh = factory.user()
    accounts = [factory.user() for _ in range(limit // 4 + 1)]
    failures = 0
    for account in accounts:  # four misses each: no account reaches its own lock
        for _ in range(4):
            if failures == limit:
                break
            _assert_error(_login(client, account.email, "Wrong-password-1!"), 401,
                          "INVALID_CREDENTIALS")
            failures += 1
    assert failures == limit
    limited = _login(client, fresh.email)
    body = _assert_error(limited, 429, "RATE_LIMITED")
    assert "too many" in body["message"].lower()
    assert 14 * 60 < _retry_after(limited) <= 15 * 60
    _assert_error(_login(client, "nobody@example.com"), 429, "RATE_LIMITED")
    # Another address is not affected.
    other = _login(client, fresh.email, environ_base={"REMOTE_ADDR": "10.9.8.7"})
    assert other.status_code == 200, other.json


def test_successful_logins_do_not_count_toward_the_ip_limit(
        client: FlaskClient, factory: Factory, settings: Settings) -> None:
    user = factory.user()
    for _ in range(settings.login_ip_failures + 2):
        assert _login(client, user.email).status_code == 200


@pytest.fixture
def account_limit(monkeypatch: pytest.MonkeyPatch, settings: Settings) -> Settings:
    """A small account-wide allowance (ASSAY_LOGIN_ACCOUNT_FAILURES): six failures a minute,
    then the back-off."""
    assert (settings.login_account_failures, settings.login_account_window_s,
            settings.login_account_backoff_max_s) == (20, 900, 30)
    small = replace(settings, login_account_failures=6, login_account_window_s=60)
    monkeypatch.setattr(current(), "settings", small)
    return small


def _address(i: int) -> dict[str, str]:
    return {"REMOTE_ADDR": f"192.0.2.{i}"}


def _spread_failures(client: FlaskClient, email: str, failures: int, first: int = 1) -> None:
    """Two wrong passwords from each of a run of addresses: under the per-address lock (5)
    and the per-address limit (20), as a guess spread over many addresses stays."""
    for n in range(failures):
        _assert_error(_login(client, email, WRONG, environ_base=_address(first + n // 2)),
                      401, "INVALID_CREDENTIALS")


def _wait_out(client: FlaskClient, email: str, environ: dict[str, str],
              most_s: float) -> TestResponse:
    """Sign in with the right password, waiting each Retry-After; fails past `most_s`."""
    deadline = time.monotonic() + most_s
    while (reply := _login(client, email, environ_base=environ)).status_code == 429:
        body = _assert_error(reply, 429, "RATE_LIMITED")
        assert "this account" in body["message"], body
        assert _retry_after(reply) <= most_s
        assert time.monotonic() < deadline, "held back long after the back-off"
        time.sleep(0.2)  # a held attempt is not counted: polling does not extend it
    return reply


def test_a_guess_spread_over_many_addresses_does_not_lock_the_owner_out(
        app: Flask, factory: Factory, settings: Settings) -> None:
    """Issue 32's attack: 100 wrong passwords from 25 addresses (4 each: under the per-address
    lock and limit), then the owner with the right password. Their own browser (it signed
    in before: its device cookie) signs in at once; a fresh browser at a fresh address waits
    at most the short back-off, never the 15 minutes of an account-wide pause."""
    user = factory.user()
    owner = app.test_client()
    home = {"REMOTE_ADDR": "198.51.100.50"}
    assert _login(owner, user.email, environ_base=home).status_code == 200
    assert owner.post("/api/auth/logout", headers={
        CSRF_HEADER: owner.get_cookie(CSRF_COOKIE).value}).status_code == 204  # type: ignore[union-attr]
    attacker = app.test_client()
    answers = [_login(attacker, user.email, WRONG, environ_base=_address(1 + n // 4)).status_code
               for n in range(100)]
    assert set(answers) <= {401, 429} and answers[:settings.login_account_failures] == [
        401] * settings.login_account_failures  # the allowance, then the back-off
    assert answers.count(401) < 40, answers  # the back-off slowed the guessing down
    known = _login(owner, user.email, environ_base=home)
    assert known.status_code == 200, known.json
    fresh = app.test_client()
    reply = _wait_out(fresh, user.email, {"REMOTE_ADDR": "203.0.113.99"},
                      settings.login_account_backoff_max_s + 2)
    assert reply.status_code == 200, reply.json
    assert SESSION_COOKIE in _set_cookies(reply)


def test_the_known_device_signs_in_while_someone_keeps_guessing(
        app: Flask, factory: Factory, account_limit: Settings) -> None:
    user = factory.user()
    owner = app.test_client()
    assert _login(owner, user.email, environ_base=_address(100)).status_code == 200
    attacker = app.test_client()
    _spread_failures(attacker, user.email, account_limit.login_account_failures)
    held = _login(attacker, user.email, environ_base=_address(150))  # even the right one
    _assert_error(held, 429, "RATE_LIMITED")
    assert 1 <= _retry_after(held) <= account_limit.login_account_backoff_max_s
    assert SESSION_COOKIE not in _set_cookies(held)
    for _ in range(3):
        assert _login(owner, user.email, environ_base=_address(100)).status_code == 200
    # the owner's own typo counts against their device, not as a stranger's
    _assert_error(_login(owner, user.email, WRONG, environ_base=_address(100)), 401,
                  "INVALID_CREDENTIALS")
    assert _login(owner, user.email, environ_base=_address(100)).status_code == 200


@pytest.mark.parametrize("cookie", [
    "not-a-cookie", "1.abc.def", "{uid}.abcdef.0123456789abcdef0123456789abcdef",
    "{other}.{device}.{signature}",  # another account's genuine cookie
], ids=["garbage", "wrong-user", "bad-signature", "other-account"])
def test_a_forged_or_borrowed_device_cookie_is_a_stranger(
        app: Flask, factory: Factory, account_limit: Settings, cookie: str) -> None:
    user, other = factory.user(), factory.user()
    theirs = app.test_client()
    assert _login(theirs, other.email).status_code == 200
    value = theirs.get_cookie("assay_device", path="/api/auth")
    assert value is not None
    uid, device, signature = value.value.split(".")
    attacker = app.test_client()
    _spread_failures(attacker, user.email, account_limit.login_account_failures)
    attacker.set_cookie("assay_device", cookie.format(
        uid=user.id, other=uid, device=device, signature=signature), path="/api/auth")
    _assert_error(_login(attacker, user.email, environ_base=_address(150)), 429,
                  "RATE_LIMITED")


def test_the_device_cookie_is_http_only_and_scoped_to_sign_in(
        app: Flask, factory: Factory) -> None:
    user = factory.user()
    client = app.test_client()
    first = _set_cookies(_login(client, user.email))["assay_device"]
    assert "HttpOnly" in first and "SameSite=Strict" in first and "Path=/api/auth" in first
    again = _set_cookies(_login(client, user.email))["assay_device"]
    assert first.split(";")[0] == again.split(";")[0]  # the same device, signed again


def test_an_unknown_email_backs_off_like_a_real_account(
        client: FlaskClient, factory: Factory, account_limit: Settings) -> None:
    """Every answer, the back-off's included, is the same for an email nobody registered."""
    user = factory.user()
    limit = account_limit.login_account_failures
    answers = {}
    for email in (user.email, "nobody-anywhere@example.com"):
        answers[email] = [_login(client, email, WRONG, environ_base=_address(1 + n // 2))
                          for n in range(limit)]
        answers[email] += [_login(client, email, WRONG, environ_base=_address(200 + n))
                           for n in range(2)]
    real, ghost = answers.values()
    assert [r.status_code for r in real] == [401] * limit + [429] * 2
    assert [_shape(r) for r in real] == [_shape(r) for r in ghost]
    assert [_retry_after(r) for r in real[limit:]] == pytest.approx(
        [_retry_after(r) for r in ghost[limit:]], abs=2)


def test_the_back_off_grows_with_failures_up_to_its_ceiling(
        app: Flask, factory: Factory, redis_conn: Any, settings: Settings,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Each failure past the allowance doubles the hold (1, 2, 4… s), up to the ceiling."""
    monkeypatch.setattr(current(), "settings", replace(
        settings, login_account_failures=2, login_account_backoff_max_s=8))
    user = factory.user()
    attacker, holds = app.test_client(), []
    for n in range(7):
        for key in redis_conn.scan_iter(f"{settings.redis_prefix}:limit:login-backoff:*"):
            redis_conn.delete(key)  # what its expiry does: the next guess is checked
        _assert_error(_login(attacker, user.email, WRONG, environ_base=_address(1 + n // 2)),
                      401, "INVALID_CREDENTIALS")
        held = _login(app.test_client(), user.email, environ_base=_address(100))
        holds.append(_retry_after(held) if held.status_code == 429 else 0)
    assert holds == [0, 1, 2, 4, 8, 8, 8], holds


def test_a_success_does_not_reset_the_account_wide_count(
        client: FlaskClient, factory: Factory, account_limit: Settings) -> None:
    """The owner signing in between an attacker's guesses gives the attacker no fresh
    allowance (it does reset that client's own run towards the lock)."""
    user = factory.user()
    limit = account_limit.login_account_failures
    _spread_failures(client, user.email, limit - 1)
    assert _login(client, user.email, environ_base=_address(100)).status_code == 200
    stranger = client.application.test_client()
    _assert_error(_login(stranger, user.email, WRONG, environ_base=_address(101)), 401,
                  "INVALID_CREDENTIALS")
    _assert_error(_login(stranger, user.email, environ_base=_address(102)), 429,
                  "RATE_LIMITED")


def test_a_failed_login_is_audited(client: FlaskClient, factory: Factory) -> None:
    user = factory.user()
    _login(client, user.email, "Wrong-password-1!")
    with db.factory() as session:
        events = list(session.scalars(select(AuditEvent).where(
            AuditEvent.action == "auth.login_failed")))
    assert len(events) == 1
    assert events[0].actor_id == user.id and events[0].target_id == str(user.id)
    assert events[0].data == {"failures": 1}


# --- session JWT ----------------------------------------------------------------------------


def test_a_well_formed_token_is_accepted(app: Flask, factory: Factory,
                                         settings: Settings) -> None:
    """The control for the forgeries below: a token built the same way but valid works."""
    user = factory.user()
    token = jwt.encode(_claims(user), settings.jwt_secret, algorithm="HS256")
    reply = _me_with_cookie(app, token)
    assert reply.status_code == 200 and reply.json is not None
    assert reply.json["id"] == user.id


def test_an_expired_token_is_rejected(app: Flask, factory: Factory,
                                      settings: Settings) -> None:
    user = factory.user()
    past = utcnow() - timedelta(days=8)
    token = jwt.encode(_claims(user, iat=past, exp=past + timedelta(days=7)),
                       settings.jwt_secret, algorithm="HS256")
    _assert_error(_me_with_cookie(app, token), 401, "UNAUTHORIZED")


def _resign_none(token: str) -> str:
    payload = token.split(".")[1]
    none_header = jwt.utils.base64url_encode(b'{"alg":"none","typ":"JWT"}').decode()
    return f"{none_header}.{payload}."


def _flip_signature(token: str) -> str:
    head, _, signature = token.rpartition(".")
    flipped = ("A" if signature[0] != "A" else "B") + signature[1:]
    return f"{head}.{flipped}"


def _flip_payload(token: str, settings: Settings, user: User) -> str:
    """The payload of someone else's token spliced onto this token's signature."""
    header, _, signature = token.split(".")
    other = jwt.encode(_claims(user, sub=str(user.id + 1000)), settings.jwt_secret, "HS256")
    return f"{header}.{other.split('.')[1]}.{signature}"


@pytest.mark.filterwarnings("ignore::jwt.warnings.InsecureKeyLengthWarning")
@pytest.mark.parametrize("forgery", ["signature", "payload", "alg-none", "other-key",
                                     "hs512", "garbage"])
def test_a_tampered_token_is_rejected(app: Flask, factory: Factory, settings: Settings,
                                      forgery: str) -> None:
    user = factory.user()
    good = jwt.encode(_claims(user), settings.jwt_secret, algorithm="HS256")
    token = {
        "signature": lambda: _flip_signature(good),
        "payload": lambda: _flip_payload(good, settings, user),
        "alg-none": lambda: _resign_none(good),
        "other-key": lambda: jwt.encode(_claims(user), "another-secret-" + "k" * 40, "HS256"),
        "hs512": lambda: jwt.encode(_claims(user), settings.jwt_secret, algorithm="HS512"),
        "garbage": lambda: "not-a-jwt",
    }[forgery]()
    assert token != good
    _assert_error(_me_with_cookie(app, token), 401, "UNAUTHORIZED")


@pytest.mark.parametrize("claim", ["sub", "email", "iat", "exp", "jti"])
def test_a_token_missing_a_required_claim_is_rejected(
        app: Flask, factory: Factory, settings: Settings, claim: str) -> None:
    user = factory.user()
    token = jwt.encode(_claims(user, **{claim: None}), settings.jwt_secret, algorithm="HS256")
    assert claim not in jwt.decode(token, options={"verify_signature": False})
    _assert_error(_me_with_cookie(app, token), 401, "UNAUTHORIZED")


@pytest.mark.parametrize("sub", ["not-a-number", "999999"])
def test_a_token_for_no_such_user_is_rejected(app: Flask, factory: Factory,
                                              settings: Settings, sub: str) -> None:
    user = factory.user()
    token = jwt.encode(_claims(user, sub=sub), settings.jwt_secret, algorithm="HS256")
    _assert_error(_me_with_cookie(app, token), 401, "UNAUTHORIZED")


def test_the_document_marks_exactly_the_public_operations(client: FlaskClient) -> None:
    """An operation documented with `security: []` answers without credentials; every other
    one refuses an anonymous request with 401, whatever its input."""
    doc = client.get("/api/openapi.json").json
    assert doc is not None and doc["security"]  # secure unless said otherwise
    public = []
    for path, item in doc["paths"].items():
        for method, operation in item.items():
            if method not in {"get", "post", "put", "patch", "delete"}:
                continue
            url = re.sub(r"{[^}]+}", "1", path)
            reply = client.open(url, method=method.upper(), json={})
            if operation.get("security") == []:
                public.append(f"{method.upper()} {path}")
                assert reply.status_code != 401, (method, path)
            else:
                assert reply.status_code == 401, (method, path, reply.status_code)
                assert reply.json is not None and reply.json["code"] == "UNAUTHORIZED"
    assert sorted(public) == ["GET /api/health", "GET /api/ready", "POST /api/auth/login",
                              "POST /api/auth/register"]


def test_me_without_auth_is_401(client: FlaskClient) -> None:
    _assert_error(client.get("/api/auth/me"), 401, "UNAUTHORIZED")
    _assert_error(client.get("/api/projects"), 401, "UNAUTHORIZED")


# --- cookies and CSRF --------------------------------------------------------------------


def _set_cookies(reply: TestResponse) -> dict[str, str]:
    found = {}
    for header in reply.headers.getlist("Set-Cookie"):
        name = header.split("=", 1)[0]
        found[name] = header
    return found


def _flags(header: str) -> set[str]:
    return {part.strip().lower() for part in header.split(";")[1:]}


def test_the_session_cookie_is_httponly_and_samesite_strict(
        client: FlaskClient, factory: Factory, settings: Settings) -> None:
    user = factory.user()
    reply = _login(client, user.email)
    cookies = _set_cookies(reply)
    session_flags, csrf_flags = _flags(cookies[SESSION_COOKIE]), _flags(cookies[CSRF_COOKIE])
    assert "httponly" in session_flags
    assert "samesite=strict" in session_flags and "path=/" in session_flags
    assert "samesite=strict" in csrf_flags
    assert "httponly" not in csrf_flags  # the SPA reads it to send the header
    assert not any(flag.startswith("max-age") for flag in session_flags)  # not remembered
    claims = jwt.decode(cookies[SESSION_COOKIE].split(";")[0].split("=", 1)[1],
                        settings.jwt_secret, algorithms=["HS256"])
    lifetime = claims["exp"] - claims["iat"]
    assert lifetime == pytest.approx(settings.session_days * 86400, abs=5)


def test_remember_me_extends_the_session_to_thirty_days(
        client: FlaskClient, factory: Factory, settings: Settings) -> None:
    user = factory.user()
    reply = client.post("/api/auth/login", json={"email": user.email, "password": PASSWORD,
                                                 "remember_me": True})
    header = _set_cookies(reply)[SESSION_COOKIE]
    assert f"max-age={30 * 86400}" in _flags(header)
    claims = jwt.decode(header.split(";")[0].split("=", 1)[1], settings.jwt_secret,
                        algorithms=["HS256"])
    assert claims["exp"] - claims["iat"] == pytest.approx(30 * 86400, abs=5)


def _projects() -> int:
    return _count(Project)


def test_unsafe_request_without_csrf_header_is_refused(factory: Factory) -> None:
    browser = factory.signed_in()
    reply = browser.client.post("/api/projects", json={"name": "Sneaky"})  # no header
    _assert_error(reply, 403, "CSRF_FAILED")
    assert _projects() == 0
    assert browser.post("/api/projects", json={"name": "Honest"}).status_code == 201
    assert _projects() == 1


@pytest.mark.parametrize("header", ["wrong", "", "0" * 64])
def test_unsafe_request_with_a_wrong_csrf_header_is_refused(factory: Factory,
                                                            header: str) -> None:
    browser = factory.signed_in()
    reply = browser.post("/api/projects", json={"name": "Sneaky"},
                         headers={CSRF_HEADER: header})
    _assert_error(reply, 403, "CSRF_FAILED")
    assert _projects() == 0


def test_a_csrf_token_of_another_session_is_refused(factory: Factory) -> None:
    mine, theirs = factory.signed_in(), factory.signed_in()
    mine.client.set_cookie(CSRF_COOKIE, theirs.csrf)
    reply = mine.post("/api/projects", json={"name": "Sneaky"},
                      headers={CSRF_HEADER: theirs.csrf})
    _assert_error(reply, 403, "CSRF_FAILED")
    assert _projects() == 0


def test_csrf_header_without_the_csrf_cookie_is_refused(factory: Factory) -> None:
    browser = factory.signed_in()
    browser.client.delete_cookie(CSRF_COOKIE)
    _assert_error(browser.post("/api/projects", json={"name": "Sneaky"}), 403, "CSRF_FAILED")
    assert _projects() == 0


def test_csrf_is_checked_on_every_unsafe_method(factory: Factory) -> None:
    owner = factory.user()
    project = factory.project(owner)
    browser = factory.login(owner)
    url = f"/api/projects/{project.id}"
    _assert_error(browser.client.patch(url, json={"name": "Renamed"}), 403, "CSRF_FAILED")
    _assert_error(browser.client.delete(url), 403, "CSRF_FAILED")
    _assert_error(browser.client.post("/api/auth/logout"), 403, "CSRF_FAILED")
    reply = browser.get(url)
    assert reply.status_code == 200 and reply.json is not None
    assert reply.json["name"] == "Project"  # nothing changed, nothing deleted


# --- API tokens ---------------------------------------------------------------------------


def test_bearer_api_token_works_for_get_and_post_without_csrf(
        app: Flask, factory: Factory) -> None:
    browser = factory.signed_in()
    created = browser.post("/api/auth/tokens", json={"name": "ci"})
    assert created.status_code == 201 and created.json is not None
    token = created.json["token"]
    assert token.startswith(created.json["prefix"])
    client = app.test_client()  # no cookies at all
    auth = {"Authorization": f"Bearer {token}"}
    me = client.get("/api/auth/me", headers=auth)
    assert me.status_code == 200 and me.json is not None
    assert me.json["id"] == browser.user_id
    made = client.post("/api/projects", json={"name": "By token"}, headers=auth)
    assert made.status_code == 201, made.json
    listed = browser.get("/api/auth/tokens")
    assert listed.json is not None
    assert [t["name"] for t in listed.json["items"]] == ["ci"]
    assert "token" not in listed.json["items"][0]


def test_a_deleted_api_token_stops_working(app: Flask, factory: Factory) -> None:
    user = factory.user()
    token = factory.api_token(user)
    browser = factory.login(user)
    auth = {"Authorization": f"Bearer {token}"}
    client = app.test_client()
    assert client.get("/api/auth/me", headers=auth).status_code == 200
    token_id = browser.get("/api/auth/tokens").json["items"][0]["id"]  # type: ignore[index]
    assert browser.delete(f"/api/auth/tokens/{token_id}").status_code == 204
    _assert_error(client.get("/api/auth/me", headers=auth), 401, "UNAUTHORIZED")
    _assert_error(client.post("/api/projects", json={"name": "x"}, headers=auth), 401,
                  "UNAUTHORIZED")


def test_an_unknown_bearer_token_is_401_even_with_a_valid_cookie(factory: Factory) -> None:
    browser = factory.signed_in()
    reply = browser.get("/api/auth/me", headers={"Authorization": "Bearer assay_nope"})
    _assert_error(reply, 401, "UNAUTHORIZED")


def test_tokens_of_other_users_cannot_be_deleted(factory: Factory) -> None:
    owner, other = factory.user(), factory.signed_in()
    factory.api_token(owner)
    token_id = factory.login(owner).get("/api/auth/tokens").json["items"][0]["id"]  # type: ignore[index]
    _assert_error(other.delete(f"/api/auth/tokens/{token_id}"), 404, "NOT_FOUND")
    assert len(factory.login(owner).get("/api/auth/tokens").json["items"]) == 1  # type: ignore[index]


# --- logout ---------------------------------------------------------------------------------


def test_logout_invalidates_the_session_cookie(app: Flask, factory: Factory) -> None:
    browser = factory.signed_in()
    cookie = browser.client.get_cookie(SESSION_COOKIE)
    assert cookie is not None
    old = cookie.value
    reply = browser.post("/api/auth/logout")
    assert reply.status_code == 204
    cleared = _set_cookies(reply)
    assert SESSION_COOKIE in cleared and CSRF_COOKIE in cleared
    assert browser.client.get_cookie(SESSION_COOKIE) is None
    _assert_error(browser.get("/api/auth/me"), 401, "UNAUTHORIZED")
    replayed = _me_with_cookie(app, old)
    _assert_error(replayed, 401, "UNAUTHORIZED")


def test_logout_leaves_other_sessions_signed_in(factory: Factory) -> None:
    user = factory.user()
    first, second = factory.login(user), factory.login(user)
    assert first.post("/api/auth/logout").status_code == 204
    assert second.get("/api/auth/me").status_code == 200


# --- hashing --------------------------------------------------------------------------------


def test_bcrypt_default_cost_is_12(tmp_path: Path) -> None:
    defaults = Settings.from_env({"ASSAY_INSTANCE_PATH": str(tmp_path)})
    assert defaults.bcrypt_rounds == 12
    assert hash_password("Correct-horse-42!", defaults.bcrypt_rounds).startswith("$2b$12$")


def test_registration_hashes_with_the_configured_cost(client: FlaskClient,
                                                      settings: Settings) -> None:
    assert _register(client).status_code == 201
    with db.factory() as session:
        stored = session.scalar(select(User.password_hash))
    assert stored is not None
    assert stored.startswith(f"$2b${settings.bcrypt_rounds:02d}$")
    assert STRONG not in stored


# --- races and bookkeeping -----------------------------------------------------------------


def test_api_token_use_is_recorded_on_reads(app: Flask, factory: Factory) -> None:
    user = factory.user()
    token = factory.api_token(user)
    reply = app.test_client().get("/api/auth/me", headers={"Authorization": f"Bearer {token}"})
    assert reply.status_code == 200
    with db.factory() as session:
        stamp = session.scalar(select(ApiToken.last_used_at).where(ApiToken.user_id == user.id))
    assert stamp is not None and utcnow() - stamp < timedelta(minutes=1)


def test_a_double_submitted_registration_is_one_account_and_one_409(
        app: Flask, monkeypatch: pytest.MonkeyPatch) -> None:
    """Both requests pass the 'email free?' check before either inserts (a double click)."""
    replies = race(app, monkeypatch, "assay.core.auth.service.hash_password", [
        ("POST", "/api/auth/register", {"email": "twice@example.com", "password": STRONG,
                                        "confirm_password": STRONG})] * 2)
    assert sorted(r.status_code for r in replies) == [201, 409], [r.json for r in replies]
    conflict = next(r for r in replies if r.status_code == 409)
    assert conflict.json is not None and conflict.json["code"] == "EMAIL_TAKEN"
    assert _count(User) == 1
