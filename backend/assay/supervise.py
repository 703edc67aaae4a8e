"""`assay up`: every process of a local Assay, started together and stopped together."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request

from assay.core.challenges.ship_judges import SETTING as SHIP_JUDGES
from assay.core.llm.service import JUDGE_MODEL
from assay.ports import Port, problems
from assay.seeds import DEMO_EMAIL, DEMO_PASSWORD
from assay.serve import share_embedded_redis
from assay.settings import REPO_ROOT, Settings

FRONTEND = REPO_ROOT / "frontend"


def _wait_http(url: str, timeout_s: float, procs: list[subprocess.Popen[bytes]]) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if any(p.poll() is not None for p in procs):
            return False
        try:
            with urllib.request.urlopen(url, timeout=1):
                return True
        except OSError:
            time.sleep(0.2)
    return False


def _signal_group(proc: subprocess.Popen[bytes], signum: int) -> None:
    """Each child leads its own process group: npm's grandchildren must stop too."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signum)


def _stop(procs: list[subprocess.Popen[bytes]]) -> None:
    for proc in procs:
        _signal_group(proc, signal.SIGTERM)
    deadline = time.monotonic() + 10
    for proc in procs:
        try:
            proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            _signal_group(proc, signal.SIGKILL)


def _interrupt(_signum: int, _frame: object) -> None:
    raise KeyboardInterrupt  # SIGTERM stops everything the same way Ctrl-C does


def run_all(settings: Settings, build: bool = True) -> int:
    api_port = os.environ.get("ASSAY_PORT", "8000")
    web_port = os.environ.get("ASSAY_WEB_PORT", "5173")
    fake_port = os.environ.get("ASSAY_FAKE_PORT", "8100")
    busy = problems([Port("the API", "ASSAY_PORT", int(api_port)),
                     Port("the SPA", "ASSAY_WEB_PORT", int(web_port)),
                     Port("the fake provider", "ASSAY_FAKE_PORT", int(fake_port))])
    if busy:  # before anything is built, seeded or started
        print("\n".join(["Assay cannot start:", *busy]), file=sys.stderr)
        return 2
    settings = share_embedded_redis(settings)  # children share this process's Redis
    assay = [sys.executable, "-m", "assay"]
    npm = shutil.which("npm") or "npm"
    if build:
        subprocess.run([npm, "run", "build"], cwd=FRONTEND, check=True)
    subprocess.run([*assay, "db", "upgrade"], check=True)
    subprocess.run([*assay, "seed"], check=True)
    _, judge, price_in, price_out = JUDGE_MODEL  # the demo's judge ships arena judge evals
    env = {"ASSAY_FAKE_LATENCY_MS": "400", "ASSAY_FAKE_JITTER_MS": "300",  # a demo you can watch
           SHIP_JUDGES: f"fake:{judge}={price_in}/{price_out}",
           **os.environ, "ASSAY_PORT": api_port, "ASSAY_WEB_PORT": web_port}
    commands = [
        [*assay, "fake-provider", "--port", fake_port],
        [*assay, "serve", "--port", api_port],
        [*assay, "worker"],
        [npm, "run", "preview", "--", "--port", web_port, "--strictPort"],
    ]
    procs: list[subprocess.Popen[bytes]] = []
    previous = signal.signal(signal.SIGTERM, _interrupt)
    signal.signal(signal.SIGINT, _interrupt)  # even when started with SIGINT ignored (`&`)
    try:
        for command in commands:
            cwd = FRONTEND if command[0] == npm else None
            procs.append(subprocess.Popen(command, cwd=cwd, env=env, start_new_session=True))
        url = f"http://127.0.0.1:{web_port}"
        api = f"http://127.0.0.1:{api_port}/api/health"
        if not (_wait_http(api, 60, procs) and _wait_http(f"{url}/api/health", 30, procs)):
            print("Assay failed to start; see the messages above.", file=sys.stderr)
            return 1
        print(f"\n  Assay is running at {url}  (API :{api_port}, fake provider :{fake_port})"
              f"\n  Demo login: {DEMO_EMAIL} / {DEMO_PASSWORD}"
              "\n  Press Ctrl-C to stop.\n", flush=True)
        while all(p.poll() is None for p in procs):
            time.sleep(0.5)
        print("A process of Assay exited; stopping the others.", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("\nStopping Assay...", flush=True)
        return 0
    finally:
        _stop(procs)
        signal.signal(signal.SIGTERM, previous)
