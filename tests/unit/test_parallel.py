"""`make test`'s queue of targets (tests/parallel.py), driven with a stand-in for make: every
target runs, at most --jobs at once, in the order given, each on its own Redis database, its
output printed whole, and the exit status is the first failure's."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from tests.parallel import redis_url_for

# a stand-in for make: records when each target starts and ends, prints two lines, and
# fails the targets named fail-*
FAKE_MAKE = """#!/bin/sh
target="$2"
echo "start $target $(date +%s.%N)" >> "$LOG"
echo "$target line 1 on $ASSAY_TEST_REDIS_URL"
sleep 0.6
echo "$target line 2"
echo "end $target $(date +%s.%N)" >> "$LOG"
case "$target" in fail-*) exit 3;; esac
"""


def _run(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    make = tmp_path / "make"
    make.write_text(FAKE_MAKE)
    make.chmod(0o755)
    log = tmp_path / "log"
    done = subprocess.run(
        [sys.executable, "-m", "tests.parallel", *args], capture_output=True, text=True,
        timeout=60, cwd=Path(__file__).parents[2],
        env={"MAKE": str(make), "LOG": str(log), "PATH": "/usr/bin:/bin",
             "ASSAY_TEST_REDIS_URL": "redis://127.0.0.1:6379/13"})
    return done, log.read_text().splitlines() if log.exists() else []


def _most_at_once(events: list[str]) -> int:
    timeline = sorted((float(stamp), kind == "start") for kind, _, stamp in
                      (line.split() for line in events))
    running = most = 0
    for _, starting in timeline:
        running += 1 if starting else -1
        most = max(most, running)
    return most


def test_every_target_runs_two_at_a_time_in_order(tmp_path: Path) -> None:
    done, events = _run(tmp_path, "--jobs", "2", "a", "b", "c", "d")
    assert done.returncode == 0, done.stdout + done.stderr
    starts = [line.split()[1] for line in events if line.startswith("start")]
    assert starts[:2] == ["a", "b"] or starts[:2] == ["b", "a"]
    assert sorted(starts) == ["a", "b", "c", "d"] and set(starts[2:]) == {"c", "d"}
    assert _most_at_once(events) == 2
    # each target's output whole, with its own Redis database (13, 14, 15, then 0)
    for target, db in (("a", 13), ("b", 14), ("c", 15), ("d", 0)):
        assert (f"{target} line 1 on redis://127.0.0.1:6379/{db}\n{target} line 2\n"
                in done.stdout)
        assert f"===== {target}: exit 0 after" in done.stdout


def test_one_job_runs_them_one_after_another(tmp_path: Path) -> None:
    done, events = _run(tmp_path, "--jobs", "1", "a", "b", "c")
    assert done.returncode == 0
    assert [line.split()[:2] for line in events] == [
        ["start", "a"], ["end", "a"], ["start", "b"], ["end", "b"], ["start", "c"],
        ["end", "c"]]


def test_a_failure_is_the_exit_status_and_the_rest_still_run(tmp_path: Path) -> None:
    done, events = _run(tmp_path, "--jobs", "2", "a", "fail-b", "c")
    assert done.returncode == 3
    assert sorted(line.split()[1] for line in events if line.startswith("end")) == [
        "a", "c", "fail-b"]
    assert "===== fail-b: exit 3 after" in done.stdout


@pytest.mark.parametrize("args", [[], ["--jobs", "0", "a"], ["--jobs", "x", "a"]])
def test_bad_arguments_are_refused_and_nothing_runs(tmp_path: Path, args: list[str]) -> None:
    done, events = _run(tmp_path, *args)
    assert done.returncode == 2
    assert "usage: python -m tests.parallel" in done.stderr
    assert events == []


def test_redis_database_numbers_wrap_at_16() -> None:
    assert redis_url_for("redis://h:1/15", 1) == "redis://h:1/0"
    assert redis_url_for("redis://h:1", 2) == "redis://h:1/2"
