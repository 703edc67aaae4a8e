"""A provider key never leaves its ciphertext: not in an API response, a log line, a job, a
Redis key or value, nor the database in plain text.

One recognisable key goes through everything a key can go through: credentials created
with it (and one reading it from an environment variable), a provider that echoes it back
in an error, patches, tests, discovery, a model, a run executed for real through the worker
code, its outputs and events, the audit trail. Then every trace is searched for it.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import zlib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import redis
from sqlalchemy import select, text
from sqlalchemy.engine import make_url

from assay.core.llm.models import Credential
from assay.extensions import db
from assay.jobs.runs import execute_run
from assay.providers.fake import FakeProviderThread
from assay.settings import Settings
from tests.factories import Factory

CANARY = "sk-assay-canary-7f3a9c1e"
ENV_CANARY = "sk-assay-canary-env-51d0b7aa"
CANARIES = (CANARY, ENV_CANARY)


class Echo(BaseHTTPRequestHandler):
    """A provider that repeats the request's key in its error message."""

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        said = self.headers.get("Authorization", "")
        body = json.dumps({"error": {"message": f"Bad request with header {said}"}}).encode()
        self.send_response(400)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def echo() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Echo)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _redis_dump(conn: redis.Redis, patterns: list[str]) -> list[bytes]:
    """Every key matching the patterns, and its value whatever its type (RQ's job payloads
    decompressed)."""
    found: list[bytes] = []
    for pattern in patterns:
        for key in conn.scan_iter(pattern, count=1000):
            found.append(key)
            kind = conn.type(key)
            if kind == b"string":
                found.append(conn.get(key) or b"")
            elif kind == b"hash":
                for field, value in conn.hgetall(key).items():
                    found += [field, value]
                    with contextlib.suppress(zlib.error):
                        found.append(zlib.decompress(value))
            elif kind == b"list":
                found += conn.lrange(key, 0, -1)
            elif kind == b"set":
                found += list(conn.smembers(key))
            elif kind == b"zset":
                found += conn.zrange(key, 0, -1)
            elif kind == b"stream":
                for entry_id, fields in conn.xrange(key):
                    found.append(entry_id)
                    for field, value in fields.items():
                        found += [field, value]
    return found


def _database_text(settings: Settings) -> tuple[bytes, str]:
    """(the SQLite files' bytes, or b"") and every row of every table as text."""
    rows: list[str] = []
    with db.engine.connect() as conn:
        for table in db.metadata.sorted_tables:
            for row in conn.execute(table.select()):
                rows.append(repr(tuple(row)))
        if settings.is_sqlite:
            conn.execute(text("PRAGMA wal_checkpoint(TRUNCATE)"))
        else:
            for table in db.metadata.sorted_tables:
                cast = conn.execute(text(f'SELECT CAST(t AS text) FROM "{table.name}" t'))
                rows += [str(value) for (value,) in cast]
    raw = b""
    if settings.is_sqlite:
        path = Path(make_url(settings.database_url).database or "")
        raw = path.read_bytes()
        for suffix in ("-wal", "-journal"):
            extra = path.with_name(path.name + suffix)
            if extra.exists():
                raw += extra.read_bytes()
    return raw, "\n".join(rows)


def test_a_key_never_leaks(factory: Factory, fake_provider: FakeProviderThread, echo: str,
                           settings: Settings, redis_conn: redis.Redis,
                           caplog: pytest.LogCaptureFixture,
                           monkeypatch: pytest.MonkeyPatch) -> None:
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv("CANARY_TEST_API_KEY", ENV_CANARY)
    monkeypatch.setenv("ASSAY_CREDENTIAL_ENV", "CANARY_TEST_API_KEY=*")
    monkeypatch.setenv("ASSAY_CREDENTIAL_ENV_URLS", f"CANARY_TEST_API_KEY={fake_provider.url}")
    owner = factory.user()
    project = factory.project(owner, "Canary")
    browser = factory.login(owner)
    pid = project.id
    bodies: list[str] = []

    def call(method: str, url: str, status: int, **kwargs: Any) -> Any:
        reply = browser.request(method, url, **kwargs)
        bodies.append(reply.get_data(as_text=True))
        assert reply.status_code == status, bodies[-1]
        return reply.json

    creds = f"/api/projects/{pid}/credentials"
    fake = call("POST", creds, 201, json={"kind": "fake", "label": "Canary fake",
                                          "base_url": fake_provider.url, "api_key": CANARY})
    assert fake["last_test_ok"] is True and fake["key_hint"] == "••••9c1e"
    openai = call("POST", creds, 201, json={"kind": "openai", "label": "Canary openai",
                                            "base_url": fake_provider.url, "api_key": CANARY})
    call("POST", creds, 201, json={"kind": "anthropic", "label": "Canary anthropic",
                                   "base_url": fake_provider.url, "api_key": CANARY})
    from_env = call("POST", creds, 201, json={"kind": "openai", "label": "Canary env",
                                              "base_url": fake_provider.url,
                                              "secret_env": "CANARY_TEST_API_KEY"})
    assert (from_env["last_test_ok"], from_env["key_source"]) == (True, "env")
    echoed = call("POST", creds, 201, json={"kind": "openai_compatible", "label": "Echo",
                                            "base_url": echo, "api_key": CANARY})
    assert echoed["last_test_ok"] is False
    assert "Bad request with header Bearer ••••" in echoed["last_test_error"]
    call("GET", f"{creds}/{echoed['id']}/discover", 502)
    call("POST", f"{creds}/{echoed['id']}/test", 200)

    call("PATCH", f"{creds}/{openai['id']}", 200, json={"label": "Canary openai 2",
                                                        "api_key": CANARY})
    call("PATCH", f"{creds}/{fake['id']}", 200, json={"api_key": CANARY, "is_default": True})
    for credential in (fake, openai, from_env):
        call("POST", f"{creds}/{credential['id']}/test", 200)
        call("GET", f"{creds}/{credential['id']}/discover", 200)
        call("GET", f"{creds}/{credential['id']}", 200)
    call("GET", creds, 200)

    models = f"/api/projects/{pid}/models"
    model = call("POST", models, 201, json={"name": "Canary model", "credential_id": fake["id"],
                                            "model": "fake-fast", "params": {"max_tokens": 16}})
    env_model = call("POST", models, 201, json={
        "name": "Canary env model", "credential_id": from_env["id"], "model": "fake-smart"})
    call("GET", models, 200)
    call("GET", f"{models}/{model['id']}", 200)

    demo = call("POST", f"/api/projects/{pid}/runs/demo", 202)  # makes the demo dataset
    execute_run(demo["id"])
    run = call("POST", f"/api/projects/{pid}/runs", 202, json={
        "dataset_id": _dataset_id(pid),
        "targets": [{"model_id": model["id"]}, {"model_id": env_model["id"]}],
        "cache": False})
    jobs = _redis_dump(redis_conn, [f"rq:queue:{settings.runs_queue}", "rq:job:*"])
    assert any(str(run["id"]).encode() in value for value in jobs)  # the job is there
    execute_run(run["id"])
    finished = call("GET", f"/api/projects/{pid}/runs/{run['id']}", 200)
    assert finished["status"] == "completed", finished
    outputs = call("GET", f"/api/projects/{pid}/runs/{run['id']}/outputs", 200,
                   query_string={"page_size": 100})
    assert outputs["items"] and all(o["status"] == "succeeded" for o in outputs["items"])
    call("GET", f"/api/projects/{pid}/runs/{run['id']}/events", 200)
    call("GET", f"/api/projects/{pid}/runs", 200)
    call("GET", f"/api/projects/{pid}/audit", 200, query_string={"page_size": 100})

    # --- every trace, searched ---
    for canary in CANARIES:
        assert not [b for b in bodies if canary in b], f"{canary} in an API response"
        logged = caplog.text + "\n".join(f"{r.getMessage()} {r.args!r} {r.__dict__!r}"
                                         for r in caplog.records)
        assert canary not in logged, "in a log line"
        dumped = jobs + _redis_dump(redis_conn, [f"{settings.redis_prefix}*", "rq:*"])
        assert not [v for v in dumped if canary.encode() in v], "in Redis"
    assert caplog.records, "the capture saw no log record at all"

    raw, rows = _database_text(settings)
    for canary in CANARIES:
        assert canary not in rows, "in a database row"
        assert canary.encode() not in raw, "in the database file"
    if settings.is_sqlite:
        assert b"Canary openai 2" in raw  # the file read is the live database
    with db.factory() as session:
        stored = session.scalars(select(Credential).where(
            Credential.project_id == pid, Credential.kind != "fake",
            Credential.label != "Canary env")).all()
        assert len(stored) == 3
        for credential in stored:
            assert credential.secret_ciphertext and len(credential.secret_ciphertext) > 28
            assert CANARY.encode() not in credential.secret_ciphertext
            assert credential.secret_last4 == "9c1e"
        env = session.scalars(select(Credential).where(Credential.label == "Canary env")).one()
        assert env.secret_ciphertext is None and env.secret_env == "CANARY_TEST_API_KEY"


def _dataset_id(project_id: int) -> int:
    from assay.core.datasets.models import Dataset

    with db.factory() as session:
        found = session.scalar(select(Dataset.id).where(Dataset.project_id == project_id))
    assert found is not None
    return int(found)
