"""promptfoo beside `assay eval` (issue 18): the same workload, measured the same way.

promptfoo (a pinned version) is installed from the npm registry into the bench's cache
folder (ASSAY_BENCH_CACHE, default ~/.cache/assay-bench) the first time, then reused. The
config it gets: the same 1,000 questions x 2 models, each model an OpenAI-compatible
provider pointed at the fake provider's /v1 (100 ms), one `contains` assertion, `-j 200`
(its maxConcurrency), cache off. Its figure is its whole process, start to exit, as the
parent sees it (node and promptfoo's start included, as Assay's whole-process figure
includes Python's). If npm is missing, the install fails or the machine is offline, the
figure is skipped with the reason. Never part of `make test`: a bench section only.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.bench import evalcli

VERSION = "0.121.20"  # the newest that runs on Node 20 (0.122 on needs Node >= 22.22)
INSTALL_TIMEOUT_S = 900
RUN_TIMEOUT_S = 900


class Skipped(Exception):
    """promptfoo could not be measured here; the message says why."""


def cache_dir() -> Path:
    return evalcli.bench_cache() / f"promptfoo-{VERSION}"


def installed() -> Path:
    """The promptfoo executable of the pinned version, installed first if need be."""
    folder = cache_dir()
    binary = folder / "node_modules" / ".bin" / "promptfoo"
    if binary.exists():
        return binary
    npm = shutil.which("npm")
    if npm is None:
        raise Skipped("npm is not installed")
    folder.mkdir(parents=True, exist_ok=True)
    try:
        out = subprocess.run([npm, "install", "--prefix", str(folder), f"promptfoo@{VERSION}",
                              "--no-audit", "--no-fund", "--loglevel=error"],
                             capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise Skipped(f"npm install promptfoo@{VERSION} took over {INSTALL_TIMEOUT_S} s "
                      "(offline?)") from None
    if out.returncode != 0 or not binary.exists():
        last = (out.stderr.strip().splitlines() or ["no output"])[-1]
        raise Skipped(f"npm install promptfoo@{VERSION} failed (offline?): {last[:200]}")
    return binary


def write_config(fake_url: str, folder: Path) -> Path:
    """JSON is YAML: promptfoo reads this file as its promptfooconfig.yaml."""
    provider = {"apiBaseUrl": f"{fake_url}/v1", "apiKey": "fake-key", "temperature": 0,
                "max_tokens": 32}
    config = {
        "description": "assay bench: 1,000 cases x 2 models",
        "prompts": ["{{question}}"],
        "providers": [{"id": "openai:chat:fake-fast", "label": f"fake-{i}", "config": provider}
                      for i in range(evalcli.MODELS)],
        "defaultTest": {"assert": [{"type": "contains", "value": "question"}]},
        "tests": [{"vars": {"question": q}} for q in evalcli.questions()],
    }
    path = folder / "promptfooconfig.yaml"
    path.write_text(json.dumps(config, indent=1))
    return path


def throughput(fake_url: str) -> dict[str, Any]:
    """`promptfoo eval` on the bench's workload; raises Skipped with the reason."""
    binary = installed()
    with tempfile.TemporaryDirectory(prefix="assay-bench-promptfoo-") as tmp:
        folder = Path(tmp)
        config = write_config(fake_url, folder)
        results = folder / "results.json"
        env = {**os.environ, "PROMPTFOO_CONFIG_DIR": str(folder / "home"),
               "PROMPTFOO_DISABLE_TELEMETRY": "1", "PROMPTFOO_DISABLE_UPDATE": "1",
               "PROMPTFOO_DISABLE_SHARING": "1", "PROMPTFOO_CACHE_ENABLED": "false",
               "OPENAI_API_KEY": "fake-key", "NO_COLOR": "1"}
        command = [str(binary), "eval", "-c", str(config), "-j", str(evalcli.CONCURRENCY),
                   "--no-cache", "--no-progress-bar", "--no-table", "-o", str(results)]
        started = time.perf_counter()
        try:
            out = subprocess.run(command, capture_output=True, text=True, cwd=folder, env=env,
                                 timeout=RUN_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise Skipped(f"promptfoo eval took over {RUN_TIMEOUT_S} s") from None
        elapsed = time.perf_counter() - started
        if not results.exists():
            raise Skipped(f"promptfoo eval wrote no results (exit {out.returncode}): "
                          f"{(out.stderr or out.stdout).strip()[-300:]}")
        data = json.loads(results.read_text())
    stats = data.get("results", {}).get("stats", {})
    rows = data.get("results", {}).get("results", [])
    errors = sum(1 for r in rows if r.get("error") and not r.get("response", {}).get("output"))
    if len(rows) != evalcli.CALLS or errors:
        raise Skipped(f"promptfoo eval returned {len(rows)} results of {evalcli.CALLS}, "
                      f"{errors} with provider errors")
    return {"version": VERSION, "calls": len(rows), "seconds": round(elapsed, 2),
            "ratio": evalcli.ratio(elapsed), "passed": stats.get("successes"),
            "failed": stats.get("failures")}


def report(figures: dict[str, Any]) -> str:
    return (f"promptfoo {figures['version']}, same workload (-j {evalcli.CONCURRENCY}, cache "
            f"off): whole process {figures['seconds']} s = {figures['ratio']:.3f} of the limit; "
            f"{figures['calls']} calls, {figures['passed']} passed, {figures['failed']} failed")
