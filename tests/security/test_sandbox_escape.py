"""Escape attempts against the code_execution scorer: every one must fail.

Each attack is the code a model under test could write. It runs twice over: through the
real harness (audit hook and operating system), and through a harness whose audit hook
was removed, under each isolation the machine offers (bubblewrap, Landlock), which
proves the operating system holds on its own once the hook is beaten. An attack returns
"ESCAPED ..." when it got through; whatever it returns or raises lands in the score's
details, which must hold no escape and no secret.

The "instance" the attacks go after is a world-readable folder outside the sandbox with
a database and key files of mode 0644 (the modes the issue found): only the sandbox
stands between the code and them.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assay.scorers import code as code_module
from assay.scorers import landlock, sandbox
from assay.scorers.base import Context, Subject
from assay.scorers.code import CodeExecutionScorer

SECRET = "assay-escape-secret-4f1c"
ISOLATIONS = [pytest.param(sandbox.BWRAP, marks=pytest.mark.skipif(
                  not sandbox.bubblewrap_available(), reason="no bubblewrap here")),
              pytest.param(sandbox.LANDLOCK, marks=pytest.mark.skipif(
                  landlock.abi() < 1, reason="no Landlock here"))]


@pytest.fixture
def instance() -> Iterator[Path]:
    """A fake instance folder any account could read and write, were it not sandboxed."""
    folder = Path(tempfile.mkdtemp(prefix="assay-escape-"))
    try:
        folder.chmod(0o777)
        for name in ("assay.db", "secret_key.key", "jwt_secret.key"):
            (folder / name).write_text(f"{SECRET} {name}")
            (folder / name).chmod(0o644)
        yield folder
    finally:
        shutil.rmtree(folder)


@pytest.fixture(params=["hook", *ISOLATIONS])
def layer(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """"hook": the real harness; an isolation: the harness without its audit hook."""
    if request.param != "hook":
        monkeypatch.setattr(sandbox, "isolation", lambda: request.param)
        real = code_module._source

        def hookless(name: str) -> str:
            text = real(name)
            if name == "code_harness.py":
                assert "    sys.addaudithook(hook)\n" in text
                text = text.replace("    sys.addaudithook(hook)\n", "    pass\n")
            return text
        monkeypatch.setattr(code_module, "_source", hookless)
    return str(request.param)


def attempt(body: str, timeout_s: float = 5) -> str:
    """Run `def f():` + body as a call test; the details as JSON."""
    code = "import os, sys\n\ndef f():\n" + "".join(
        f"    {line}\n" for line in body.strip("\n").splitlines())
    scorer = CodeExecutionScorer({"tests": [{"call": "f()", "expected": "never"}],
                                  "timeout_s": timeout_s})
    [result] = asyncio.run(scorer.score(Subject(output=code), Context(code_execution=True)))
    assert result.error is None, result.error  # it ran: the sandbox is available
    assert result.passed is False
    return json.dumps(result.details)


def assert_held(details: str) -> None:
    assert "ESCAPED" not in details, details
    assert SECRET not in details, details
    assert "root:x:0:0" not in details, details
    assert "uid=" not in details, details


READ_SECRETS = """
found = []
for name in ("assay.db", "secret_key.key", "jwt_secret.key"):
    try:
        found.append(open(os.path.join({folder!r}, name)).read())
    except OSError as exc:
        found.append(type(exc).__name__)
try:
    found.append(open("/etc/passwd").read())
except OSError as exc:
    found.append(type(exc).__name__)
return "ESCAPED " + " ".join(found) if any("secret" in t or "root:" in t for t in found) \\
    else " ".join(found)
"""


def test_rebinding_the_hook_globals_opens_nothing(instance: Path) -> None:
    """The issue's bypass: the harness is __main__; rebind what its hook consulted (and
    the builtins it called) and then run `id`, read the secrets, write outside."""
    rebind = """
import __main__, builtins
class Everything:
    def __contains__(self, item):
        return True
    def __iter__(self):
        return iter(())
for name in ("DEVICES", "PROCESS_EVENTS", "NATIVE_MODULES", "INTROSPECTION_EVENTS",
             "SIGNAL_EVENTS", "LIMIT_EVENTS", "CHANGE_EVENTS"):
    setattr(__main__, name, Everything() if name == "DEVICES" else frozenset())
__main__.WRITE_FLAGS = 0
builtins.isinstance = lambda value, types: False
os.path.realpath = lambda path: "/dev/null"
"""
    details = attempt(rebind + READ_SECRETS.format(folder=str(instance)))
    assert_held(details)
    details = attempt(rebind + "import subprocess\n"
                      "return 'ESCAPED ' + subprocess.run(['id'], capture_output=True, "
                      "text=True).stdout")
    assert_held(details)
    details = attempt(rebind + f"open({str(instance / 'planted')!r}, 'w').write('x')\n"
                      "return 'ESCAPED wrote'")
    assert_held(details)
    assert not (instance / "planted").exists()


def test_reading_the_database_the_keys_and_passwd_fails(layer: str, instance: Path) -> None:
    assert_held(attempt(READ_SECRETS.format(folder=str(instance))))


def test_writing_outside_the_working_directory_fails(layer: str, instance: Path) -> None:
    body = f"""
done = []
for path in ({str(instance / 'planted')!r}, "/tmp/assay-planted", "/usr/planted"):
    try:
        with open(path, "w") as handle:
            handle.write("x")
        done.append(path)
    except OSError:
        pass
return "ESCAPED " + " ".join(done) if done else "held"
"""
    assert_held(attempt(body))
    assert not (instance / "planted").exists()
    assert not Path("/usr/planted").exists()


@pytest.mark.parametrize("start", [
    "import subprocess\nout = subprocess.run(['id'], capture_output=True, text=True).stdout",
    "os.system('id > out.txt')\nout = open('out.txt').read()",
    "os.execv('/usr/bin/id', ['id'])\nout = ''",
    "pid = os.posix_spawn('/usr/bin/id', ['id'], {})\nos.waitpid(pid, 0)\nout = ''",
])
def test_starting_a_program_fails(layer: str, start: str) -> None:
    assert_held(attempt(start + "\nreturn 'ESCAPED ' + out if out else 'no output'"))


def test_ctypes_reaches_nothing(layer: str, instance: Path) -> None:
    body = f"""
import ctypes
libc = ctypes.CDLL(None)
libc.system(b"id > out.txt")
fd = libc.open({str(instance / 'assay.db').encode()!r}, 0)
got = open("out.txt").read() if os.path.exists("out.txt") else ""
return "ESCAPED " + got if got or fd >= 0 else "held"
"""
    assert_held(attempt(body))


def test_writing_process_memory_fails(layer: str) -> None:
    body = """
with open("/proc/self/mem", "r+b") as mem:
    mem.seek(id(f))
    mem.write(b"\\0" * 8)
return "ESCAPED wrote its own memory"
"""
    assert_held(attempt(body))


def test_the_hook_cannot_be_found_or_traced() -> None:
    for body in ("import gc\nreturn 'ESCAPED ' + repr(gc.get_referrers(sys.addaudithook))",
                 "import gc\nreturn 'ESCAPED ' + str(len(gc.get_objects()))",
                 "sys.settrace(lambda *a: None)\nreturn 'ESCAPED traced'",
                 "sys.setprofile(lambda *a: None)\nreturn 'ESCAPED profiled'"):
        details = attempt(body)
        assert_held(details)
        assert "is not allowed in the sandbox" in details


def test_a_fork_bomb_is_contained(layer: str) -> None:
    token = f"bomb-{uuid.uuid4().hex}"
    body = f"""
import time
marker = open({token!r}, "w")
for _ in range(100000):
    if os.fork() == 0:
        time.sleep(30)
        os._exit(0)
return "ESCAPED forked without limit"
"""
    started = time.monotonic()
    assert_held(attempt(body, timeout_s=5))
    assert time.monotonic() - started < 15
    deadline = time.monotonic() + 3
    while _running(token) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _running(token)


@pytest.mark.parametrize("leave", ["os.setsid()", "os.setpgid(0, 0)"])
def test_a_child_that_leaves_the_process_group_dies_with_the_sandbox(
        layer: str, leave: str) -> None:
    """A child that made itself a group (or session) of its own would outlive the
    timeout's kill of the program's group."""
    token = f"orphan-{uuid.uuid4().hex}"
    body = f"""
import time
marker = open({token!r}, "w")
if os.fork() == 0:
    try:
        {leave}
    except OSError:
        pass
    time.sleep(60)
    os._exit(0)
time.sleep(0.3)
return "child left"
"""
    assert_held(attempt(body))
    deadline = time.monotonic() + 3
    while _running(token) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _running(token)


def _running(token: str) -> list[int]:
    """Processes holding a file named `token` open (the attack's processes open one in
    their working directory: pids inside a pid namespace are not the host's, and the
    code's text is not on any command line)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            targets = [os.readlink(fd) for fd in (entry / "fd").iterdir()]
        except OSError:
            continue
        if any(token in target for target in targets):
            found.append(int(entry.name))
    return found


def test_tcp_to_a_local_listener_fails(layer: str) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        details = attempt("import socket\n"
                          f"socket.create_connection(('127.0.0.1', {port}), timeout=2)\n"
                          "return 'ESCAPED connected'")
        listener.setblocking(False)
        with pytest.raises(BlockingIOError):
            listener.accept()
    assert_held(details)


def test_udp_to_a_local_socket_fails(layer: str) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as receiver:
        receiver.bind(("127.0.0.1", 0))
        port = receiver.getsockname()[1]
        details = attempt("import socket\n"
                          "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
                          f"s.sendto(b'ESCAPED', ('127.0.0.1', {port}))\n"
                          "return 'ESCAPED sent'")
        receiver.setblocking(False)
        with pytest.raises(BlockingIOError):
            receiver.recvfrom(100)
    assert_held(details)


@pytest.mark.parametrize("abstract", [False, True])
def test_unix_sockets_fail(layer: str, instance: Path, abstract: bool) -> None:
    address: Any = f"\0assay-escape-{uuid.uuid4().hex}" if abstract \
        else str(instance / "listener.sock")
    with socket.socket(socket.AF_UNIX) as listener:
        listener.bind(address)
        if not abstract:
            os.chmod(address, 0o777)
        listener.listen()
        details = attempt("import socket\n"
                          "s = socket.socket(socket.AF_UNIX)\n"
                          f"s.connect({address!r})\n"
                          "return 'ESCAPED connected'")
        listener.setblocking(False)
        with pytest.raises(BlockingIOError):
            listener.accept()
    assert_held(details)


def test_no_isolation_means_no_code_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without bubblewrap and Landlock the scorer refuses, and says why."""
    monkeypatch.setattr(sandbox, "bubblewrap_available", lambda: False)
    monkeypatch.setattr(landlock, "abi", lambda: 0)
    scorer = CodeExecutionScorer({"tests": [{"call": "f()", "expected": 1}]})
    [result] = asyncio.run(scorer.score(Subject(output="def f():\n    return 1\n"),
                                        Context(code_execution=True)))
    assert result.error is not None
    assert "install bubblewrap" in result.error
    assert result.details is None or "tests" not in result.details
