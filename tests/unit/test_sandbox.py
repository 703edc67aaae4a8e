"""The sandbox holds: limits, timeouts, process groups, environment, network, files."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import signal
import socket
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay.scorers import landlock, sandbox
from assay.scorers.sandbox import (
    Limits,
    SandboxError,
    SandboxResult,
    network_namespace_available,
    run_sandboxed,
    sandbox_python,
)


def run_python(code: str, **limits: int | float) -> SandboxResult:
    return run_sandboxed([sandbox_python(), "-I", "-S", "-c", code], limits=Limits(**limits))


def run_shell(script: str, **limits: int | float) -> SandboxResult:
    return run_sandboxed(["/bin/sh", "-c", script], limits=Limits(**limits))


def all_gone(token: str, within_s: float = 3.0) -> bool:
    """No process whose command line holds `token` runs any longer (absent, or a zombie
    waiting for its new parent). By token, not pid: inside the sandbox's pid namespace
    the program sees other pids than the host."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if not list(_running(token)):
            return True
        time.sleep(0.05)
    return False


def _running(token: str) -> Iterator[int]:
    needle = token.encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError, IndexError):
            continue
        if needle in cmdline and state != "Z":
            yield int(entry.name)


def test_fresh_directory_input_files_stdin_and_a_scrubbed_environment(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_SECRET_PROBE", "probe-7d41")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-probe-7d41")
    monkeypatch.setenv("SECRET_KEY", "key-probe-7d41")
    code = ("import json, os, sys; print(json.dumps({'env': dict(os.environ), "
            "'cwd': os.getcwd(), 'files': os.listdir('.'), 'stdin': sys.stdin.read(), "
            "'data': open('data.txt').read()}))")
    result = run_sandboxed([sandbox_python(), "-I", "-S", "-c", code],
                           files={"data.txt": "given"}, stdin="fed")
    assert result.returncode == 0, result.stderr
    seen = json.loads(result.stdout)
    assert set(seen["env"]) == {"PATH", "HOME", "TMPDIR", "PWD", "LANG", "LC_ALL"}
    assert seen["env"]["PATH"] == "/usr/bin:/bin"
    assert "probe-7d41" not in result.stdout
    assert (seen["files"], seen["stdin"], seen["data"]) == (["data.txt"], "fed", "given")
    # The working directory and the directory around it are gone.
    assert not os.path.exists(seen["cwd"])
    assert not os.path.exists(os.path.dirname(seen["cwd"]))


def test_runs_as_nobody_when_assay_is_root() -> None:
    if os.geteuid() != 0:
        pytest.skip("only root drops privileges")
    result = run_python("import os; print(os.getuid(), os.getgid(), os.getgroups())")
    nobody = pwd.getpwnam("nobody")
    # Inside a user namespace the unmapped account shows as the overflow id 65534.
    assert result.stdout.split()[:2] == [str(nobody.pw_uid), str(nobody.pw_gid)]


def test_wall_clock_timeout_kills_a_busy_loop() -> None:
    started = time.monotonic()
    result = run_python("while True: pass", wall_s=0.5, cpu_s=20)
    assert result.timed_out
    assert result.killed_by_limit is None
    assert result.returncode == -signal.SIGKILL
    assert 0.4 < result.duration_s < 2
    assert time.monotonic() - started < 4


def test_cpu_limit_stops_a_busy_loop_before_the_wall_clock() -> None:
    result = run_python("while True: pass", wall_s=20, cpu_s=1)
    assert not result.timed_out
    assert result.killed_by_limit == "cpu"
    assert result.returncode == -signal.SIGXCPU
    assert result.duration_s < 10


def test_memory_limit_makes_a_large_allocation_fail() -> None:
    hog = "b = bytearray(200 * 1024 * 1024); print(len(b))"
    refused = run_python(hog, memory_mb=64)
    assert refused.returncode == 1
    assert "MemoryError" in refused.stderr
    assert not refused.timed_out
    allowed = run_python(hog, memory_mb=512)  # the same program under a larger limit
    assert allowed.returncode == 0, allowed.stderr


def test_process_limit_stops_a_fork_bomb() -> None:
    token = f"bomb-{uuid.uuid4().hex}"
    bomb = f"# {token}" + """
import os, time
made, refused = [], None
for _ in range(200):
    try:
        pid = os.fork()
    except OSError as exc:
        refused = exc.errno
        break
    if pid == 0:
        time.sleep(60)
        os._exit(0)
    made.append(pid)
print(refused, *made)
"""
    result = run_python(bomb, max_processes=8, wall_s=10)
    refused, *made = result.stdout.split()
    assert refused == "11"  # EAGAIN: the limit, not the loop's end
    assert len(made) <= 7  # with the program itself, at most 8
    assert not result.timed_out
    assert all_gone(token)


def test_file_size_limit_stops_a_huge_file() -> None:
    shell = run_shell("exec head -c 8000000 /dev/zero > big", file_size_mb=1)
    assert shell.killed_by_limit == "file_size"
    assert shell.returncode == -signal.SIGXFSZ
    # Python ignores SIGXFSZ: its write fails instead, and the file stops at the limit.
    python = run_python(
        "import os\ntry:\n    open('big', 'wb').write(b'x' * 8000000)\n"
        "except OSError as exc:\n    print(exc.errno, os.path.getsize('big'))", file_size_mb=1)
    assert python.stdout.split() == ["27", str(1024 * 1024)]  # EFBIG


@pytest.mark.skipif(not network_namespace_available(),
                    reason="no unprivileged user namespaces here: Python code is kept off "
                           "the network by the code harness's audit hook instead")
def test_network_namespace_refuses_a_loopback_connection() -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        result = run_python(
            "import socket\ntry:\n"
            f"    socket.create_connection(('127.0.0.1', {port}), timeout=2)\n"
            "    print('connected')\nexcept OSError as exc:\n    print('refused', exc.errno)")
        listener.setblocking(False)
        with pytest.raises(BlockingIOError):
            listener.accept()
    assert result.network_namespace
    assert result.stdout.startswith("refused"), result.stdout


def test_stdout_and_stderr_are_capped_and_marked() -> None:
    result = run_python("import sys\nsys.stdout.write('x' * 5_000_000)\n"
                        "sys.stderr.write('e' * 3000)", output_bytes=2048)
    assert result.returncode == 0
    assert (len(result.stdout), result.stdout_truncated) == (2048, True)
    assert (len(result.stderr), result.stderr_truncated) == (2048, True)
    small = run_python("print('ok')")
    assert (small.stdout, small.stdout_truncated) == ("ok\n", False)


def test_children_left_behind_are_killed_with_the_group() -> None:
    # One child keeps the stdout pipe open, the other does not; the program exits at once.
    token = f"{uuid.uuid4().int % 10**9:09d}"  # sleep takes 60.<token> seconds
    result = run_shell(f"sleep 60.{token} & echo $!; sleep 61.{token} >/dev/null 2>&1 & "
                       "echo $!; exit 0", wall_s=20)
    pids = [int(pid) for pid in result.stdout.split()]
    assert len(pids) == 2
    assert not result.timed_out
    assert result.duration_s < 5
    assert all_gone(f".{token}")


def test_only_regular_files_are_collected(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("do-not-leak")
    code = ("import os\nopen('result.json', 'w').write('{\"ok\": true}')\n"
            "for make, name in ((lambda n: os.symlink(" f"{str(secret)!r}" ", n), 'link.json'),"
            " (os.mkfifo, 'fifo.json')):\n"
            "    try:\n        os.unlink(name)\n    except OSError:\n        pass\n"
            "    try:\n        make(name)\n    except OSError:\n"
            "        pass  # under bubblewrap a collected name is a bound file: it stays one\n")
    result = run_sandboxed([sandbox_python(), "-I", "-S", "-c", code],
                           collect=("result.json", "link.json", "fifo.json", "absent.json"))
    assert result.returncode == 0, result.stderr
    assert result.files == {"result.json": '{"ok": true}'}


def test_directories_the_program_locked_are_removed() -> None:
    result = run_python("import os\nos.makedirs('d/e')\nopen('d/e/f', 'w').write('x')\n"
                        "os.chmod('d/e', 0)\nos.chmod('d', 0)\nprint(os.getcwd())")
    assert result.returncode == 0, result.stderr
    assert not os.path.exists(os.path.dirname(result.stdout.strip()))


def test_a_program_that_cannot_start_is_a_sandbox_error() -> None:
    with pytest.raises(SandboxError, match="Cannot start"):
        run_sandboxed(["/nonexistent/program"])


def test_bad_file_names_and_limits_are_refused() -> None:
    with pytest.raises(ValueError, match="plain names"):
        run_sandboxed(["/bin/true"], files={"../escape": "x"})
    with pytest.raises(ValueError, match="wall_s"):
        Limits(wall_s=0)
    with pytest.raises(ValueError, match="max_processes"):
        Limits(max_processes=-1)


@pytest.mark.parametrize("mode", [
    pytest.param(sandbox.BWRAP, marks=pytest.mark.skipif(
        not sandbox.bubblewrap_available(), reason="no bubblewrap here")),
    pytest.param(sandbox.LANDLOCK, marks=pytest.mark.skipif(
        landlock.abi() < 1, reason="no Landlock here"))])
def test_any_program_sees_only_the_system_trees_and_its_directory(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, mode: str) -> None:
    """Not only the code scorer's Python: a shell gets no /etc, /proc, host /tmp, /root or
    instance folder, and writes only its own directory."""
    monkeypatch.setattr(sandbox, "isolation", lambda: mode)
    shared = Path(tempfile.mkdtemp(prefix="assay-visible-"))
    try:
        shared.chmod(0o777)
        (shared / "assay.db").write_text("secret-db")
        (shared / "assay.db").chmod(0o666)
        script = (f"cat /etc/passwd; cat /proc/self/status; cat {shared}/assay.db; "
                  f"echo planted > {shared}/planted; echo mine > mine.txt; cat mine.txt; "
                  "ls -a /tmp /root 2>/dev/null; exit 0")
        result = run_sandboxed(["/bin/sh", "-c", script])
        seen = result.stdout.split()
        assert "mine" in seen, (result.stdout, result.stderr)
        # bubblewrap's /tmp is its own, holding only the way to the working directory.
        assert all(word in {"mine", ".", "..", "/tmp:"} or word.startswith("assay-sandbox-")
                   for word in seen), result.stdout
        assert not (shared / "planted").exists()
    finally:
        shutil.rmtree(shared)


def test_no_isolation_or_no_filter_refuses_to_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox.seccomp, "program", lambda machine=None: None)
    with pytest.raises(SandboxError, match="seccomp filter"):
        run_sandboxed(["/bin/true"])
    monkeypatch.undo()
    monkeypatch.setattr(sandbox, "bubblewrap_available", lambda: False)
    monkeypatch.setattr(landlock, "abi", lambda: 0)
    with pytest.raises(SandboxError, match="install bubblewrap"):
        run_sandboxed(["/bin/true"])
