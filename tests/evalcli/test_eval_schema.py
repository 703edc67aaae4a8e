"""A run folder's database is a copy of the runs folder's empty template (evalcli/schema.py):
made by the first run, copied by the next without creating a table, and complete."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from assay.cli import main
from assay.core.evalcli import runfiles, schema
from assay.core.evalcli.local import DB_FILE
from assay.core.models import Base
from assay.providers.fake import FakeProviderThread
from assay.providers.fake_config import FakeConfig
from tests.bench.evalcli import write_config


def _eval(config: Path, runs: Path) -> None:
    result = CliRunner().invoke(main, ["eval", str(config), "-q", "--no-cache",
                                       "--runs-dir", str(runs)],
                                env={"ASSAY_FAKE_PROVIDER_URL": ""})
    assert result.exit_code == 0, result.output


def test_the_second_run_copies_the_template_and_holds_every_table(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runs = tmp_path / "runs"
    with FakeProviderThread(FakeConfig(latency_ms=1.0)) as fake:
        config = write_config(fake.url, tmp_path, cases=3)
        _eval(config, runs)
        template = runs / ".cache" / f"schema-{schema.digest()}.db"
        assert template.exists()

        def no_ddl(*_args: object, **_kwargs: object) -> None:
            raise AssertionError("the schema was created again")

        monkeypatch.setattr(Base.metadata, "create_all", no_ddl)
        _eval(config, runs)
    folder = runfiles.resolve(runs, "latest")
    assert runfiles.read_run(folder).metadata["totals"]["succeeded"] == 6
    with sqlite3.connect(folder / DB_FILE) as conn:
        tables = {name for (name,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert set(Base.metadata.tables) <= tables
    assert [p.name for p in (runs / ".cache").iterdir() if p.suffix == ".tmp"] == []


def test_a_changed_schema_gets_a_template_of_its_own(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runs = tmp_path / "runs"
    with FakeProviderThread(FakeConfig(latency_ms=1.0)) as fake:
        config = write_config(fake.url, tmp_path, cases=2)
        _eval(config, runs)
        monkeypatch.setattr(schema, "digest", lambda: "changed")
        _eval(config, runs)
    names = sorted(p.name for p in (runs / ".cache").glob("schema-*.db"))
    assert len(names) == 2 and "schema-changed.db" in names
