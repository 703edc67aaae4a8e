"""The sandbox's disk (issue 32 item 2): under bubblewrap the working folder is a tmpfs of
`Limits.disk_mb` bytes and `Limits.max_files` files, off the host's disk; writing past it
fails with ENOSPC inside the program, which goes on and ends normally."""

from __future__ import annotations

import glob
import os
import threading
import uuid

import pytest

from assay.scorers import sandbox

pytestmark = pytest.mark.skipif(not sandbox.bubblewrap_available(),
                                reason="no bubblewrap here")

FILL = r"""
import os, sys, time
made = 0
try:
    for i in range(20000):
        open(f"e{i}", "w").close()
        made += 1
except OSError as error:
    print("files", made, error.errno)
for i in range(made):
    os.unlink(f"e{i}")
big = 0
try:
    for i in range(70):
        with open(f"b{i}", "wb") as handle:
            handle.write(b"x" * 15 * 1024 * 1024)
        big += 1
except OSError as error:
    print("big", big, error.errno)
for i in range(big):
    os.unlink(f"b{i}")
open(sys.argv[1], "w").write("marker")
time.sleep(float(sys.argv[2]))
open("result.json", "w").write('{"done": true}')
"""


def _run(marker: str, pause: float, limits: sandbox.Limits) -> sandbox.SandboxResult:
    return sandbox.run_sandboxed([sandbox.sandbox_python(), "fill.py", marker, str(pause)],
                                 files={"fill.py": FILL}, limits=limits,
                                 collect=("result.json", "never.txt"))


def test_writing_past_the_folder_fails_cleanly_off_the_host_disk() -> None:
    limits = sandbox.Limits(wall_s=30, cpu_s=30, disk_mb=32, max_files=500)
    marker = f"marker-{uuid.uuid4().hex}"
    seen_on_host: list[str] = []
    done = threading.Event()
    results: list[sandbox.SandboxResult] = []

    def work() -> None:
        results.append(_run(marker, 2.0, limits))
        done.set()

    thread = threading.Thread(target=work)
    thread.start()
    while not done.wait(0.1):  # while it runs, its files are nowhere on the host
        for folder in glob.glob(os.path.join(os.environ.get("TMPDIR", "/tmp"),
                                             "assay-sandbox-*")):
            for root, _dirs, names in os.walk(folder):
                seen_on_host += [os.path.join(root, n) for n in names
                                 if n == marker or n.startswith(("e1", "b0"))]
    thread.join()
    result = results[0]
    assert result.returncode == 0 and not result.timed_out, result.stderr
    lines = dict(line.split(" ", 1) for line in result.stdout.splitlines())
    made, errno = lines["files"].split()
    assert int(made) < 500 and int(errno) == 28  # ENOSPC at max_files, not 20,000
    big, errno = lines["big"].split()
    assert int(big) <= 2 and int(errno) == 28  # 32 MB hold two 15 MB files, not 70
    assert result.files == {"result.json": '{"done": true}'}  # collected; never.txt absent
    assert not seen_on_host


def test_the_bounds_are_per_run_and_checked() -> None:
    result = _run("m", 0, sandbox.Limits(wall_s=30, cpu_s=30))  # the defaults: 64 MB, 2000
    assert "big 4 28" in result.stdout and result.files == {"result.json": '{"done": true}'}
    for bad in ({"disk_mb": 0}, {"max_files": -1}):
        with pytest.raises(ValueError, match="must be positive"):
            sandbox.Limits(**bad)  # type: ignore[arg-type]
