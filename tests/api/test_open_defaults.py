"""Safe defaults when anyone can register (ASSAY_SELF_REGISTRATION, on by default): private
provider URLs are refused on save and at call time (the fake provider and the operator's
allow-list excepted), and a connection test cannot tell a closed port from a filtered one.
With registration off, private URLs work as before and only invited emails may register."""

from __future__ import annotations

import dataclasses
import socket
import time
from collections.abc import Iterator
from typing import Any

import pytest
from flask.testing import FlaskClient

from assay.core.llm.probe import COULD_NOT_CONNECT
from assay.runtime import current
from assay.settings import Settings
from tests.factories import PASSWORD, Factory, Session

# the suite's own test_env turns these off (conftest.py): here they take their defaults
SUITE_OVERRIDES = ("ASSAY_BLOCK_PRIVATE_URLS", "ASSAY_UNIFORM_CONNECT_ERRORS")
PRIVATE_SPELLINGS = [
    "http://127.0.0.1:6379", "http://[::1]:8000", "http://0x7f000001:80",
    "http://2130706433:80", "http://0.0.0.0:80", "http://127.1:80", "http://10.1.2.3",
    "http://172.16.0.9", "http://172.31.255.1", "http://192.168.1.1", "http://[fc00::1]",
    "http://[fd12:3456::1]", "http://[::ffff:127.0.0.1]", "http://localhost:11434",
    "http://169.254.1.1",
]


def _defaults(test_env: dict[str, str], **env: str) -> Settings:
    """The settings an operator gets from this environment, the suite's overrides left out."""
    base = {k: v for k, v in test_env.items() if k not in SUITE_OVERRIDES}
    return Settings.from_env({**base, **env})


@pytest.fixture
def admin(factory: Factory) -> Iterator[tuple[Session, str]]:
    owner = factory.user()
    project = factory.project(owner, "Open")
    yield factory.login(owner), f"/api/projects/{project.id}/credentials"


def _save(browser: Session, base: str, url: str, label: str = "Local") -> Any:
    return browser.post(base, json={"kind": "openai_compatible", "label": label,
                                    "base_url": url})


def test_open_registration_blocks_every_private_spelling_on_save(
        admin: tuple[Session, str], test_env: dict[str, str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    settings = _defaults(test_env)
    assert settings.self_registration and settings.block_private_urls
    monkeypatch.setattr(current(), "settings", settings)
    browser, base = admin
    for n, url in enumerate(PRIVATE_SPELLINGS):
        reply = _save(browser, base, url, f"L{n}")
        assert reply.status_code == 422, (url, reply.get_data(as_text=True))
        assert "base_url" in reply.json["errors"]["json"], (url, reply.json)
    fake = browser.post(base, json={"kind": "fake", "label": "Fake",
                                    "base_url": settings.fake_provider_url})
    assert fake.status_code == 201 and fake.json["last_test_ok"] is True, fake.json


def test_the_allow_list_opens_one_private_endpoint(
        admin: tuple[Session, str], test_env: dict[str, str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    fake = test_env["ASSAY_FAKE_PROVIDER_URL"]
    port = fake.rsplit(":", 1)[1]
    monkeypatch.setattr(current(), "settings", _defaults(
        test_env, ASSAY_FAKE_PROVIDER_URL="http://127.0.0.1:9",
        ASSAY_PRIVATE_URL_ALLOW=f"127.0.0.1:{port}"))
    browser, base = admin
    allowed = browser.post(base, json={"kind": "fake", "label": "Allowed",
                                       "base_url": f"http://0x7f000001:{port}"})
    assert allowed.status_code == 201, allowed.json
    assert allowed.json["base_url"] == f"http://127.0.0.1:{port}"
    assert allowed.json["last_test_ok"] is True, allowed.json
    other = _save(browser, base, f"http://127.0.0.1:{int(port) + 1}", "Other")
    assert other.status_code == 422, other.json


def test_a_url_saved_while_private_was_allowed_is_refused_at_call_time(
        admin: tuple[Session, str], test_env: dict[str, str], fake_provider: Any,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The guard runs before every connection, not only on save: a credential kept from
    before registration opened reaches nothing private."""
    rt = current()
    closed = _defaults(test_env, ASSAY_SELF_REGISTRATION="false")
    assert not closed.block_private_urls and not closed.uniform_connect_errors
    # the fake provider is on loopback: under another address it is just a private server
    monkeypatch.setattr(rt, "settings", dataclasses.replace(
        closed, fake_provider_url="http://127.0.0.1:9"))
    browser, base = admin
    saved = browser.post(base, json={"kind": "fake", "label": "Kept",
                                     "base_url": fake_provider.url})
    assert saved.status_code == 201 and saved.json["last_test_ok"] is True, saved.json
    monkeypatch.setattr(rt, "settings", dataclasses.replace(
        _defaults(test_env), fake_provider_url="http://127.0.0.1:9"))
    tested = browser.post(f"{base}/{saved.json['id']}/test")
    assert tested.status_code == 200, tested.json
    assert tested.json["ok"] is False
    assert "private" in tested.json["error"], tested.json
    models = browser.get(f"{base}/{saved.json['id']}/discover")
    assert models.status_code == 502 and "private" in models.json["message"], models.json


@pytest.fixture
def closed_and_filtered() -> Iterator[tuple[int, int]]:
    """A port nothing listens on, and one whose listener never accepts and whose queue is
    full, so a new connection's SYN goes unanswered, as at a firewall that drops it."""
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    closed = probe.getsockname()[1]
    probe.close()
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    filtered = listener.getsockname()[1]
    fillers = []
    for _ in range(3):
        filler = socket.socket()
        filler.setblocking(False)
        filler.connect_ex(("127.0.0.1", filtered))
        fillers.append(filler)
    time.sleep(0.05)
    yield closed, filtered
    for sock in (*fillers, listener):
        sock.close()


def test_a_closed_port_and_a_filtered_one_answer_alike(
        admin: tuple[Session, str], test_env: dict[str, str],
        closed_and_filtered: tuple[int, int], monkeypatch: pytest.MonkeyPatch) -> None:
    closed, filtered = closed_and_filtered
    monkeypatch.setattr(current(), "settings", _defaults(
        test_env, ASSAY_PROBE_TIMEOUT_S="1",
        ASSAY_PRIVATE_URL_ALLOW=f"127.0.0.1:{closed} 127.0.0.1:{filtered}"))
    browser, base = admin
    answers = {}
    for port in (closed, filtered):
        started = time.monotonic()
        reply = _save(browser, base, f"http://127.0.0.1:{port}", f"P{port}")
        answers[port] = (reply.json["last_test_error"], time.monotonic() - started)
        assert reply.status_code == 201 and reply.json["last_test_ok"] is False, reply.json
    (closed_error, closed_s), (filtered_error, filtered_s) = answers[closed], answers[filtered]
    assert closed_error == filtered_error == COULD_NOT_CONNECT
    assert closed_s > 0.9 and filtered_s > 0.9 and abs(closed_s - filtered_s) < 0.4, answers


def test_with_registration_off_private_urls_work_and_strangers_cannot_register(
        admin: tuple[Session, str], client: FlaskClient, test_env: dict[str, str],
        closed_and_filtered: tuple[int, int], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(current(), "settings", _defaults(
        test_env, ASSAY_SELF_REGISTRATION="off"))
    browser, base = admin
    closed, _ = closed_and_filtered
    saved = _save(browser, base, f"http://127.0.0.1:{closed}")
    assert saved.status_code == 201, saved.json
    assert saved.json["last_test_error"] == "connection refused"  # as before: a private box
    stranger = client.post("/api/auth/register", json={
        "email": "stranger@example.com", "password": PASSWORD,
        "confirm_password": PASSWORD})
    assert stranger.status_code == 403 and stranger.json["code"] == "REGISTRATION_CLOSED"
    invited = browser.post(base.replace("/credentials", "/invites"),
                           json={"email": "guest@example.com", "role": "viewer"})
    assert invited.status_code == 201, invited.json
    guest = client.post("/api/auth/register", json={
        "email": "guest@example.com", "password": PASSWORD,
        "confirm_password": PASSWORD})
    assert guest.status_code == 201, guest.json


def test_the_first_account_may_register_with_registration_off(
        client: FlaskClient, test_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(current(), "settings", _defaults(
        test_env, ASSAY_SELF_REGISTRATION="off"))
    body = {"email": "operator@example.com", "password": PASSWORD,
            "confirm_password": PASSWORD}
    assert client.post("/api/auth/register", json=body).status_code == 201
    second = client.post("/api/auth/register", json={**body, "email": "next@example.com"})
    assert second.status_code == 403
