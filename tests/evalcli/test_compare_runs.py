"""`assay compare` (paired verdicts, the per-case diff, exit 1 on a significant
regression) and `assay runs list|show|rm`, on fixture run folders."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from click.testing import CliRunner

from assay.cli import main
from assay.core.evalcli import runfiles
from assay.core.evalcli.compare import compare
from assay.core.evalcli.fixture import write_fixture_run

A_TIME = datetime(2026, 3, 1, 10, 0, 0, tzinfo=UTC)
B_TIME = datetime(2026, 3, 2, 10, 0, 0, tzinfo=UTC)


def _cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


def test_a_significant_regression_exits_1(tmp_path: Path) -> None:
    a = write_fixture_run(tmp_path, outputs=120, models=2, seed=3, quality=0.95, started=A_TIME)
    b = write_fixture_run(tmp_path, outputs=120, models=2, seed=3, quality=0.15, started=B_TIME)
    code, output = _cli("compare", str(a), str(b), "--json")
    assert code == 1, output
    found = json.loads(output)
    says = {v["model"]: v for v in found["verdicts"] if v["scorer"] == "mentions-answer"}
    assert says["gpt-4o-mini"]["verdict"] == "A better"
    assert says["gpt-4o-mini"]["mean_b"] < says["gpt-4o-mini"]["mean_a"]
    assert found["regressed"] and found["significant_regression"]
    # the other way round is an improvement: exit 0, the cases are "fixed"
    code, output = _cli("compare", str(b), str(a), "--runs-dir", str(tmp_path))
    assert code == 0, output
    assert "B better" in output and "fixed:" in output


def test_the_same_run_is_not_distinguishable(tmp_path: Path) -> None:
    a = write_fixture_run(tmp_path, outputs=40, models=2, seed=5, started=A_TIME)
    b = write_fixture_run(tmp_path, outputs=40, models=2, seed=5, started=B_TIME)
    result = compare(runfiles.read_run(a), runfiles.read_run(b))
    assert result.verdicts and all(v.verdict == "not distinguishable" for v in result.verdicts)
    assert (result.fixed, result.regressed, result.new_fail) == ([], [], [])
    assert _cli("compare", a.name, b.name, "--runs-dir", str(tmp_path))[0] == 0


def test_new_fail_is_a_case_only_b_ran_and_failed(tmp_path: Path) -> None:
    a = write_fixture_run(tmp_path, outputs=20, models=2, seed=1, started=A_TIME)
    b = write_fixture_run(tmp_path, outputs=40, models=2, seed=1, quality=0.0, started=B_TIME)
    result = compare(runfiles.read_run(a), runfiles.read_run(b))
    a_cases = {c["id"] for c in runfiles.read_run(a).cases}
    assert result.new_fail and all(case not in a_cases for _, case, _ in result.new_fail)


def test_runs_list_show_rm(tmp_path: Path) -> None:
    a = write_fixture_run(tmp_path, outputs=10, models=2, started=A_TIME)
    b = write_fixture_run(tmp_path, outputs=10, models=2, started=B_TIME)
    code, output = _cli("runs", "list", "--runs-dir", str(tmp_path), "--json")
    assert code == 0 and [r["id"] for r in json.loads(output)] == [a.name, b.name]
    code, output = _cli("runs", "show", "--runs-dir", str(tmp_path))
    assert code == 0 and b.name in output and "gpt-4o-mini" in output
    code, output = _cli("runs", "rm", a.name, "--runs-dir", str(tmp_path))
    assert code == 0 and not a.exists()
    code, output = _cli("runs", "show", a.name, "--runs-dir", str(tmp_path))
    assert code == 2 and "no run" in output
    (tmp_path / "index.json").unlink()
    code, output = _cli("runs", "list", "--rebuild", "--runs-dir", str(tmp_path), "--json")
    assert code == 0 and [r["id"] for r in json.loads(output)] == [b.name]
