"""schemathesis's command line against the served API, over HTTP, with every check
(`--checks all`) and every phase, for a fixed time, as its own account (an API token of a
user of its own: whatever it creates or deletes is that user's). Its NDJSON report is read
afterwards for the failures of each check and the requests behind them.

Left out: `DELETE /api/auth/tokens/{token_id}` (operation tokens_delete), which would
revoke the fuzzer's own token within seconds (the first ids it tries are the smallest) and
leave it 401s for the rest of the soak; tests/api/test_schemathesis.py fuzzes it in
process, each time with a fresh token.
"""

from __future__ import annotations

import base64
import json
import os
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SPARED = ("tokens_delete",)


@dataclass
class FuzzFinding:
    check: str  # e.g. not_a_server_error
    operation: str
    request: str  # "POST http://.../api/... {body...}"
    status: int | None
    body: str


@dataclass
class FuzzReport:
    requests: int = 0
    statuses: dict[int, int] = field(default_factory=dict)
    failures: dict[str, int] = field(default_factory=dict)  # check -> failing cases
    findings: list[FuzzFinding] = field(default_factory=list)  # the first of each kind
    exit_code: int | None = None
    output_tail: str = ""

    @property
    def server_errors(self) -> list[FuzzFinding]:
        return [f for f in self.findings if f.status is not None and f.status >= 500]


class Fuzzer:
    def __init__(self, api_url: str, token: str, seconds: float, workdir: Path,
                 workers: int = 1, seed: int = 31):
        self.workdir = workdir / "schemathesis"
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.report = self.workdir / "events.ndjson"
        self.output = self.workdir / "output.txt"
        st = Path(sys.executable).with_name("st")
        self.command = [
            str(st), "run", f"{api_url}/api/openapi.json", "--checks", "all",
            "--max-time", str(max(1, int(seconds))), "--workers", str(workers),
            "--header", f"Authorization: Bearer {token}", "--request-timeout", "60",
            "--seed", str(seed), "--no-color", "--generation-database", "none",
            "--suppress-health-check", "all", "--report", "ndjson",
            "--report-ndjson-path", str(self.report),
            *[arg for op in SPARED for arg in ("--exclude-operation-id", op)]]
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with self.output.open("wb") as out:
            self.proc = subprocess.Popen(self.command, stdout=out, stderr=subprocess.STDOUT,
                                         cwd=self.workdir, start_new_session=True,
                                         env={**os.environ, "NO_COLOR": "1"})

    def finish(self, grace_s: float = 5.0) -> FuzzReport:
        """Wait for its own time limit to end it (then a little longer), interrupt it
        otherwise (it overruns --max-time by tens of seconds, finishing its phases; the
        report of what it sent is written all the same), and read the report."""
        assert self.proc is not None
        try:
            self.proc.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGINT)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)
        report = read_report(self.report) if self.report.exists() else FuzzReport()
        report.exit_code = self.proc.returncode
        report.output_tail = "\n".join(
            self.output.read_text(errors="replace").splitlines()[-25:])
        return report


def _request_text(request: dict[str, Any]) -> str:
    body = request.get("body")
    text = ""
    if isinstance(body, dict) and "$base64" in body:
        text = base64.b64decode(body["$base64"]).decode(errors="replace")
    elif body is not None:
        text = json.dumps(body)
    return f"{request.get('method')} {request.get('uri')} {text[:400]}".rstrip()


def _response(interaction: dict[str, Any] | None) -> tuple[int | None, str]:
    response = (interaction or {}).get("response") or {}
    body = response.get("body")
    text = ""
    if isinstance(body, dict) and "$base64" in body:
        text = base64.b64decode(body["$base64"]).decode(errors="replace")
    return response.get("status_code"), text[:300]


def read_report(path: Path) -> FuzzReport:
    report = FuzzReport()
    seen: set[tuple[str, str]] = set()
    with path.open() as handle:
        for line in handle:
            if not line.startswith('{"ScenarioFinished"'):
                continue
            recorder = json.loads(line)["ScenarioFinished"]["recorder"]
            interactions = recorder.get("interactions") or {}
            for interaction in interactions.values():
                report.requests += 1
                status, _ = _response(interaction)
                if status is not None:
                    report.statuses[status] = report.statuses.get(status, 0) + 1
            for case_id, checks in (recorder.get("checks") or {}).items():
                for check in checks:
                    if check.get("status") != "failure":
                        continue
                    name = check["name"]
                    report.failures[name] = report.failures.get(name, 0) + 1
                    interaction = interactions.get(case_id)
                    status, body = _response(interaction)
                    key = (name, recorder.get("label", ""))
                    if key in seen and ((status or 0) < 500 or len(report.findings) >= 100):
                        continue  # the first of each kind; every server error, to 100
                    seen.add(key)
                    request = (interaction or {}).get("request") or {}
                    report.findings.append(FuzzFinding(
                        name, recorder.get("label", ""), _request_text(request), status, body))
    return report
