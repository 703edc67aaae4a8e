"""`assay up` beside another Assay: a port already taken (the fake provider's, the API's,
the SPA's) stops it at once with a message naming the port and the variable that moves it,
before anything is built, migrated, seeded or started (ports.py)."""

from __future__ import annotations

import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.faults.stack import free_port

from assay import supervise
from assay.ports import Port, is_free, problems
from assay.settings import Settings


@pytest.fixture
def listener() -> Iterator[int]:
    """Someone else's server on a port."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield int(sock.getsockname()[1])


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """What `assay up` would run or start (nothing may be, when a port is taken)."""
    calls: list[Any] = []
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: calls.append(("run", a)))
    monkeypatch.setattr(subprocess, "Popen", lambda *a, **k: calls.append(("Popen", a)))
    monkeypatch.setattr(supervise, "share_embedded_redis", lambda s: calls.append("redis"))
    return calls


@pytest.mark.parametrize(("env", "what"), [("ASSAY_FAKE_PORT", "the fake provider"),
                                           ("ASSAY_PORT", "the API"),
                                           ("ASSAY_WEB_PORT", "the SPA")])
def test_a_taken_port_stops_up_before_anything_starts(
        listener: int, started: list[Any], env: str, what: str, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("ASSAY_FAKE_PORT", "ASSAY_PORT", "ASSAY_WEB_PORT"):
        monkeypatch.setenv(name, str(free_port()))
    monkeypatch.setenv(env, str(listener))
    settings = Settings.from_env({"ASSAY_INSTANCE_PATH": str(tmp_path)})
    assert supervise.run_all(settings, build=False) == 2
    assert started == []  # no build, no migration, no seed, no process, no Redis
    message = capsys.readouterr().err
    assert f"Port {listener} ({what}) is already in use" in message
    suggested = int(message.split(f"{env}=")[1].split()[0])
    assert suggested != listener and is_free(suggested)


def test_free_ports_pass_and_one_port_twice_does_not(listener: int) -> None:
    free = free_port()
    assert is_free(free) and not is_free(listener)
    assert problems([Port("the API", "ASSAY_PORT", free)]) == []
    twice = problems([Port("the API", "ASSAY_PORT", free),
                      Port("the fake provider", "ASSAY_FAKE_PORT", free)])
    assert twice == [f"ASSAY_FAKE_PORT={free} is also ASSAY_PORT's port (the API): "
                     "give each its own."]
