"""The single-file HTML report of a 10,000-output run (issue 18: < 3 MB, first contentful
paint < 1 s in Chromium, no network request).

In a process of its own (`python -m tests.bench.report_html`, one JSON line out; `--report`
for the printed lines): writes a fixture run of 10,000 outputs (2,500 cases x 4 models, a
reference check and a rubric judge), renders it with `assay report`, and opens the file in
/usr/bin/chromium from a file:// URL with every request blocked
(frontend/scripts/report-check.mjs), a fresh browser context per sample (cold). Besides FCP
it prints when the outputs table (the data unpacked) and then the charts were first in a frame.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from assay.core.evalcli.fixture import write_fixture_run
from assay.core.evalreport import render_html

FRONTEND = Path(__file__).resolve().parents[2] / "frontend"
OUTPUTS = 10_000
SIZE_BAR = 3_000_000
FCP_BAR_MS = 1000.0
SAMPLES = 5


def measure() -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="assay-bench-report-"))
    run = write_fixture_run(work / "runs", outputs=OUTPUTS, models=4, seed=7)
    started = time.perf_counter()
    done = render_html([run], work / "report.html")
    render_s = time.perf_counter() - started
    out = subprocess.run(["node", "scripts/report-check.mjs", json.dumps({
        "file": str(done.path), "width": 1400, "samples": SAMPLES})], cwd=FRONTEND,
        capture_output=True, text=True, check=True, timeout=600)
    browser = json.loads(out.stdout.strip().splitlines()[-1])
    return {"outputs": done.outputs, "bytes": done.bytes, "render_s": round(render_s, 2),
            "fcp_ms": browser["fcpSamples"], "table_ms": browser["tableSamples"],
            "ready_ms": browser["readySamples"],
            "requests": len(browser["requests"]),
            "console_errors": len(browser["consoleErrors"]) + len(browser["pageErrors"])}


def report(figures: dict[str, Any]) -> list[str]:
    fcp, table, ready = figures["fcp_ms"], figures["table_ms"], figures["ready_ms"]
    return [
        f"HTML report, {figures['outputs']:,} outputs: {figures['bytes'] / 1e6:.2f} MB "
        f"= {figures['bytes'] / SIZE_BAR:.3f} of the 3 MB bar (written in "
        f"{figures['render_s']} s)",
        f"HTML report first contentful paint (file://, Chromium, cold, {len(fcp)} samples): "
        f"median {statistics.median(fcp):.0f} ms, worst {max(fcp)} ms = "
        f"{max(fcp) / FCP_BAR_MS:.3f} of the 1 s bar; outputs table painted at median "
        f"{statistics.median(table):.0f} ms, the four charts drawn at median "
        f"{statistics.median(ready):.0f} ms (worst {max(table)}, {max(ready)} ms); "
        f"{figures['requests']} network requests, {figures['console_errors']} console errors"]


if __name__ == "__main__":
    result = measure()
    if sys.argv[1:2] == ["--report"]:
        print("\n".join(report(result)))
    else:
        print(json.dumps(result))
