"""Shared fixtures: a real database (SQLite file or PostgreSQL), real Redis, the fake provider.

ASSAY_TEST_DATABASE_URL picks the database (default: a SQLite file). `make test` runs the
suite once on each. Redis is the machine's real server (ASSAY_TEST_REDIS_URL), on a
database number of its own that is flushed between tests.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
import redis
from flask import Flask
from flask.testing import FlaskClient
from rq import Queue
from rq.job import Job
from rq.registry import StartedJobRegistry
from sqlalchemy import text
from sqlalchemy.engine import make_url

from assay.api import kept_reads
from assay.app import create_app
from assay.extensions import db
from assay.providers.fake import FakeConfig, FakeProviderThread
from assay.settings import Settings
from tests.factories import Factory

REDIS_URL = os.environ.get("ASSAY_TEST_REDIS_URL", "redis://127.0.0.1:6379/13")
_suite_database: list[str] = []  # the session app's database, once it is made


def _fresh_postgres(url: str) -> str:
    """A database of this test session's own, so parallel suites never collide."""
    name = f"assay_test_{os.getpid()}"
    admin = make_url(url).set(drivername="postgresql")
    conninfo = admin.render_as_string(hide_password=False)
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    return admin.set(drivername="postgresql+psycopg", database=name).render_as_string(
        hide_password=False)


def end_other_connections(url: str) -> list[tuple[object, ...]]:
    """Close every other connection to this suite's private PostgreSQL database, and say
    what each was doing. A schema change (a migration test) waits for every lock on its
    tables, and a session an earlier test's thread left open would make it wait forever;
    ending them makes that test deterministic and the printout names the leftover."""
    conninfo = make_url(url).set(drivername="postgresql").render_as_string(
        hide_password=False)
    with psycopg.connect(conninfo, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pid, state, xact_start, left(query, 200) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()").fetchall()
        for row in rows:
            conn.execute("SELECT pg_terminate_backend(%s)", (row[0],))
    for row in rows:
        if row[1] != "idle":
            print(f"ended a leftover connection: {row}")
    return rows


@pytest.fixture(scope="session")
def fake_provider() -> Iterator[FakeProviderThread]:
    with FakeProviderThread(FakeConfig(latency_ms=5.0, seed=7)) as server:
        yield server


@pytest.fixture(scope="session")
def test_env(tmp_path_factory: pytest.TempPathFactory,
             fake_provider: FakeProviderThread) -> dict[str, str]:
    instance: Path = tmp_path_factory.mktemp("instance")
    url = os.environ.get("ASSAY_TEST_DATABASE_URL") or f"sqlite:///{instance / 'test.db'}"
    if url.startswith("postgres"):
        url = _fresh_postgres(url)
    prefix = f"assay-test-{uuid.uuid4().hex[:8]}"
    # The retention job is the tests' to run: a live worker's reaper would otherwise enqueue
    # it at its first tick (the default policy, on whatever a test had just aged) in the
    # middle of a retention test. This interval's election is taken for the session.
    with redis.Redis.from_url(REDIS_URL) as conn:
        conn.set(f"{prefix}:retention:scheduled", "the test session", ex=6 * 3600)
    return {
        "ASSAY_INSTANCE_PATH": str(instance),
        "DATABASE_URL": url,
        "REDIS_URL": REDIS_URL,
        "ASSAY_REDIS_PREFIX": prefix,
        "ASSAY_BCRYPT_ROUNDS": "4",
        "ASSAY_REGISTER_IP_LIMIT": "100000",
        "ASSAY_FAKE_PROVIDER_URL": fake_provider.url,
        "ASSAY_SSE_HEARTBEAT_S": "1",
        # The suite's stub providers listen on loopback, and its tests read the exact
        # transport errors: the open-registration defaults (tests/api/test_open_defaults.py
        # builds those settings) are turned off here.
        "ASSAY_BLOCK_PRIVATE_URLS": "false",
        "ASSAY_UNIFORM_CONNECT_ERRORS": "false",
        "SECRET_KEY": "test-secret-key-" + "s" * 40,
        "JWT_SECRET": "test-jwt-secret-" + "j" * 40,
    }


@pytest.fixture(scope="session")
def settings(test_env: dict[str, str]) -> Settings:
    return Settings.from_env(test_env)


@pytest.fixture(scope="session")
def app(settings: Settings, test_env: dict[str, str]) -> Flask:
    app = create_app(settings)
    previous = dict(os.environ)
    os.environ.update(test_env)  # `db upgrade` runs the real migrations against the test DB
    try:
        with app.app_context():
            from flask_migrate import upgrade

            upgrade()
    finally:
        os.environ.clear()
        os.environ.update(previous)
    _suite_database.append(db.engine.url.render_as_string(hide_password=False))
    return app


@pytest.fixture(scope="session")
def redis_conn() -> redis.Redis:
    return redis.Redis.from_url(REDIS_URL)


def _settle_warm_jobs(queue: Queue, timeout_s: float = 15) -> None:
    """Wait for a warm job a live worker took (it ends in a moment on test data): it
    writes rows of the run the tables' emptying deletes, and PostgreSQL may pick the
    emptying as the deadlock's victim."""
    registry = StartedJobRegistry(queue=queue)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        jobs = Job.fetch_many(registry.get_job_ids(), connection=queue.connection)
        if not any(job is not None and job.func_name == "assay.jobs.warm.warm_run"
                   for job in jobs):
            return
        time.sleep(0.05)


def _empty_tables() -> None:
    tables = [t.name for t in reversed(db.metadata.sorted_tables)]
    with db.engine.begin() as conn:
        for table in tables:  # DELETE beats TRUNCATE on PostgreSQL for tables this small
            conn.execute(text(f"DELETE FROM {table}"))


def _still_on_the_suite_database(nodeid: str) -> None:
    """A test that builds another app or runs a local eval in this process must put the
    database back (db.put_back): otherwise every later test writes to a file nobody reads,
    and fails far from the cause."""
    if _suite_database:
        bound = db.engine.url.render_as_string(hide_password=False)
        if bound != _suite_database[0]:
            pytest.fail(f"{nodeid} left the database bound to {bound}")


@pytest.fixture(autouse=True)
def clean_state(request: pytest.FixtureRequest) -> Iterator[None]:
    yield
    _still_on_the_suite_database(request.node.nodeid)
    if "app" in request.fixturenames:
        conn = redis.Redis.from_url(REDIS_URL)
        settings = request.getfixturevalue("settings")
        queue = Queue(settings.runs_queue, connection=conn)
        queue.empty()  # no job outlives its test's rows
        _settle_warm_jobs(queue)
        db.scoped.remove()
        app = request.getfixturevalue("app")
        kept_reads.forget(app)  # credentials too
        _empty_tables()
        prefix = settings.redis_prefix
        keys = list(conn.scan_iter(f"{prefix}:*", count=1000))  # RQ's keys stay: workers live on
        if keys:
            conn.delete(*keys)


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()


@pytest.fixture
def factory(app: Flask, settings: Settings) -> Factory:
    return Factory(app, settings)
