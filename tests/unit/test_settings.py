from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

import pytest
from sqlalchemy import text

from assay.db import make_engine
from assay.settings import Settings


def test_defaults_need_nothing(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        settings = Settings.from_env({"ASSAY_INSTANCE_PATH": str(tmp_path)})
    assert settings.database_url == f"sqlite:///{tmp_path / 'assay.db'}"
    assert settings.redis_url is None
    assert settings.bcrypt_rounds == 12
    assert len(settings.jwt_secret) >= 32
    assert "JWT_SECRET is not set" in caplog.text
    assert (tmp_path / "jwt_secret.key").stat().st_mode & 0o777 == 0o600


def test_generated_secrets_are_kept(tmp_path: Path) -> None:
    first = Settings.from_env({"ASSAY_INSTANCE_PATH": str(tmp_path)})
    second = Settings.from_env({"ASSAY_INSTANCE_PATH": str(tmp_path)})
    assert (first.secret_key, first.jwt_secret) == (second.secret_key, second.jwt_secret)


def test_environment_wins(tmp_path: Path) -> None:
    settings = Settings.from_env({
        "ASSAY_INSTANCE_PATH": str(tmp_path), "DATABASE_URL": "postgres://u@h/db",
        "REDIS_URL": "redis://h:6379/2", "JWT_SECRET": "x" * 40, "ASSAY_BCRYPT_ROUNDS": "10",
    })
    assert settings.database_url == "postgresql+psycopg://u@h/db"
    assert settings.redis_url == "redis://h:6379/2"
    assert settings.jwt_secret == "x" * 40 and settings.bcrypt_rounds == 10


def test_the_account_wide_login_limit_is_read_from_the_environment(tmp_path: Path) -> None:
    default = Settings.from_env({"ASSAY_INSTANCE_PATH": str(tmp_path)})
    assert (default.login_account_failures, default.login_account_window_s,
            default.login_account_backoff_max_s) == (20, 900, 30)
    chosen = Settings.from_env({"ASSAY_INSTANCE_PATH": str(tmp_path),
                                "ASSAY_LOGIN_ACCOUNT_FAILURES": "40",
                                "ASSAY_LOGIN_ACCOUNT_WINDOW_S": "3600",
                                "ASSAY_LOGIN_ACCOUNT_BACKOFF_MAX_S": "5"})
    assert (chosen.login_account_failures, chosen.login_account_window_s,
            chosen.login_account_backoff_max_s) == (40, 3600, 5)


@pytest.mark.parametrize("env, message", [
    ({"JWT_SECRET": "short"}, "at least 32"),
    ({"ASSAY_BCRYPT_ROUNDS": "twelve"}, "must be an integer"),
])
def test_bad_settings_fail_clearly(tmp_path: Path, env: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Settings.from_env({"ASSAY_INSTANCE_PATH": str(tmp_path), **env})


def test_sqlite_runs_with_wal_busy_timeout_and_foreign_keys(tmp_path: Path) -> None:
    engine = make_engine(Settings.from_env({"ASSAY_INSTANCE_PATH": str(tmp_path)}))
    with engine.connect() as conn:
        assert conn.execute(text("PRAGMA journal_mode")).scalar() == "wal"
        assert conn.execute(text("PRAGMA foreign_keys")).scalar() == 1
        assert conn.execute(text("PRAGMA busy_timeout")).scalar() == 10000
    engine.dispose()
    assert sqlite3.connect(tmp_path / "assay.db").execute("PRAGMA journal_mode").fetchone()[0] \
        == "wal"


def test_behind_a_proxy_the_client_address_comes_from_x_forwarded_for(tmp_path: Path) -> None:
    from flask import request

    from assay import runtime
    from assay.app import create_app

    previous = runtime._current  # create_app rewires the process: put it back afterwards
    try:
        for proxies, expected in ((0, "10.0.0.1"), (1, "203.0.113.7")):
            settings = Settings.from_env({"ASSAY_INSTANCE_PATH": str(tmp_path),
                                          "ASSAY_TRUSTED_PROXIES": str(proxies)})
            app = create_app(settings)
            app.add_url_rule("/probe", "probe", lambda: request.remote_addr or "")
            reply = app.test_client().get("/probe", headers={"X-Forwarded-For": "203.0.113.7"},
                                          environ_base={"REMOTE_ADDR": "10.0.0.1"})
            assert reply.text == expected
    finally:
        if previous is not None:
            runtime.configure(previous.settings)
