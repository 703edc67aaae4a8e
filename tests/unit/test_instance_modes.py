"""The instance folder is private: 0700, and every file Assay writes there 0600."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import redis
from sqlalchemy import text

from assay import redis_conn
from assay.db import make_engine
from assay.settings import Settings


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_new_instance_is_private_with_its_database_and_keys(tmp_path: Path) -> None:
    folder = tmp_path / "instance"
    previous = os.umask(0o022)  # the usual umask, which made them 0755 and 0644
    try:
        settings = Settings.from_env({"ASSAY_INSTANCE_PATH": str(folder)})
        engine = make_engine(settings)
        with engine.begin() as conn:  # SQLite writes the database, its WAL and shm files
            conn.execute(text("CREATE TABLE t (x INTEGER)"))
            conn.execute(text("INSERT INTO t VALUES (1)"))
            files = sorted(path.name for path in folder.iterdir())
            modes = {name: mode(folder / name) for name in files}
        engine.dispose()
    finally:
        os.umask(previous)
    assert mode(folder) == 0o700
    assert {"assay.db", "secret_key.key", "jwt_secret.key"} <= set(files)
    assert modes == {name: 0o600 for name in files}, modes


def test_an_existing_instance_is_tightened(tmp_path: Path) -> None:
    folder = tmp_path / "instance"
    folder.mkdir(mode=0o755)
    folder.chmod(0o755)
    for name in ("assay.db", "secret_key.key", "jwt_secret.key", "redis.rdb"):
        (folder / name).write_text("x" * 48)
        (folder / name).chmod(0o644)
    Settings.from_env({"ASSAY_INSTANCE_PATH": str(folder)})
    assert mode(folder) == 0o700
    assert {path.name: mode(path) for path in folder.iterdir()} == {
        "assay.db": 0o600, "secret_key.key": 0o600, "jwt_secret.key": 0o600,
        "redis.rdb": 0o600}


def test_the_embedded_redis_dump_is_private(tmp_path: Path) -> None:
    settings = Settings.from_env({"ASSAY_INSTANCE_PATH": str(tmp_path / "instance")})
    previous = os.umask(0o022)
    try:
        client = redis.Redis.from_url(redis_conn.embedded_url(settings))
        client.set("k", "v")
        client.save()
    finally:
        os.umask(previous)
        server = redis_conn._embedded.pop(str(settings.instance_path), None)
        if server is not None:
            server.shutdown()  # type: ignore[no-untyped-call]
    assert mode(settings.instance_path / "redis.rdb") == 0o600
