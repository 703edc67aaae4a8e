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


def _rewrite(folder: Path, name: str, change) -> None:  # type: ignore[no-untyped-def]
    """Rewrite one JSONL file of a run folder line by line."""
    path = folder / name
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    path.write_text("".join(json.dumps(change(row)) + "\n" for row in rows))


def test_unrelated_runs_are_refused_with_exit_2(tmp_path: Path) -> None:
    """Same case ids, other variables: not runs of the same tests."""
    a = write_fixture_run(tmp_path, outputs=20, models=2, seed=1, started=A_TIME)
    b = write_fixture_run(tmp_path, outputs=20, models=2, seed=1, started=B_TIME)
    _rewrite(b, "cases.jsonl", lambda c: {**c, "vars": {"topic": "something else"}})
    code, output = _cli("compare", str(a), str(b))
    assert code == 2, output
    assert "share no test case" in output


def test_a_changed_case_is_new_in_b_and_named(tmp_path: Path) -> None:
    a = write_fixture_run(tmp_path, outputs=20, models=2, seed=1, started=A_TIME)
    b = write_fixture_run(tmp_path, outputs=20, models=2, seed=1, started=B_TIME)
    _rewrite(b, "cases.jsonl", lambda c: {**c, "vars": {"topic": "other"}}
             if c["id"] == "case-3" else c)
    result = compare(runfiles.read_run(a), runfiles.read_run(b))
    assert result.changed == ["case-3"]
    assert all(v.n == 9 for v in result.verdicts)  # 10 cases, one of them changed
    code, output = _cli("compare", str(a), str(b))
    assert code == 0 and "case-3" in output and "other cases in B" in output


def test_three_cases_all_one_way_are_not_distinguishable(tmp_path: Path) -> None:
    """n=3, every difference equal: the bootstrap interval has zero width and excludes 0,
    but the exact test's p is 0.25, so no side is called better and the exit is 0."""
    a = write_fixture_run(tmp_path, outputs=6, models=2, seed=2, quality=2.0, started=A_TIME)
    b = write_fixture_run(tmp_path, outputs=6, models=2, seed=2, quality=-1.0, started=B_TIME)
    result = compare(runfiles.read_run(a), runfiles.read_run(b))
    mentions = [v for v in result.verdicts if v.scorer == "mentions-answer"]
    assert mentions and all(v.n == 3 for v in mentions)
    assert all(v.verdict == "not distinguishable" for v in result.verdicts), result.verdicts
    assert any(v.p_value is not None and v.p_value > 0.05 and v.low is not None
               and v.high is not None and v.high < 0 for v in mentions)
    assert _cli("compare", str(a), str(b))[0] == 0


def test_a_side_that_errored_everywhere_fails_its_cases(tmp_path: Path) -> None:
    """A errored on every output (no evaluation at all); B passes: the cases are fixed."""
    a = write_fixture_run(tmp_path, outputs=20, models=1, seed=4, started=A_TIME)
    b = write_fixture_run(tmp_path, outputs=20, models=1, seed=4, quality=2.0, started=B_TIME)
    _rewrite(a, "responses.jsonl", lambda r: {**r, "status": "failed", "text": None,
                                              "error": {"class": "auth", "message": "401"}})
    (a / "evaluations.jsonl").write_text("")
    result = compare(runfiles.read_run(a), runfiles.read_run(b))
    assert len(result.fixed) == 20 and not result.new_fail


def test_cases_are_listed_in_their_natural_order(tmp_path: Path) -> None:
    a = write_fixture_run(tmp_path, outputs=24, models=1, seed=6, quality=2.0, started=A_TIME)
    b = write_fixture_run(tmp_path, outputs=24, models=1, seed=6, quality=-1.0, started=B_TIME)
    result = compare(runfiles.read_run(a), runfiles.read_run(b))
    numbers = [int(case.split("-")[1]) for _, case, _ in result.regressed]
    assert len(numbers) > 10 and max(numbers) >= 10
    assert numbers == sorted(numbers)  # as text, "case-10" would come before "case-2"
