"""The report in Chromium, opened from a file:// URL with the network off and every request
blocked and counted (frontend/scripts/report-check.mjs drives it with playwright-core)."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

from assay.core.evalcli.runfiles import read_run
from assay.core.evalreport import Rendered, build_html, render_html
from tests.evalreport.conftest import HOSTILE

FRONTEND = Path(__file__).resolve().parents[2] / "frontend"
CHARTS = ("chart-radar", "chart-performance", "chart-cost", "chart-time")


def check(report: Path, **opts: Any) -> dict[str, Any]:
    out = subprocess.run(["node", "scripts/report-check.mjs", json.dumps({"file": str(report),
                                                                           **opts})],
                         cwd=FRONTEND, capture_output=True, text=True, timeout=240,
                         env={**os.environ})
    assert out.returncode == 0, out.stderr
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def assert_clean(result: dict[str, Any]) -> None:
    assert result["requests"] == []  # none attempted: not the chart library, not a font
    assert result["consoleErrors"] == []
    assert result["pageErrors"] == []
    assert result["loading"] is None  # the data was read
    for chart in CHARTS:
        drawn = result["charts"][chart]
        assert drawn["chart"] and drawn["points"] > 0 and drawn["painted"] > 1000, (chart, drawn)


def test_10000_outputs_render_offline_and_page(big_run: Path, big_report: Rendered) -> None:
    result = check(big_report.path, width=1400, search="answer 2499.")
    assert_clean(result)
    assert result["runRows"] == 1
    assert result["rows"] == 50
    assert result["pageStatus"] == "Page 1 of 200 · 10000 outputs"
    assert result["pageTwoStatus"] == "Page 2 of 200 · 10000 outputs"
    assert result["modelFilterStatus"] == "Page 1 of 50 · 2500 outputs"
    assert result["modelFilterModels"] == ["gpt-4o-mini"]
    assert result["scorerFilterVerdicts"] == ["fail"]
    # "answer 2499." is in the replies to case 2499 only (one per model, unless a call failed)
    found = sum("answer 2499." in (r["text"] or "") for r in read_run(big_run).responses)
    assert 1 <= found <= 4
    assert result["searchStatus"] == f"Page 1 of 1 · {found} outputs"
    assert result["openedText"].startswith("About topic 2499: answer 2499.")
    assert result["openedEvaluations"] == 3  # the reference check, the judge, the composite


def test_markup_in_an_output_is_shown_as_text_at_390_px(two_runs: list[Path],
                                                        tmp_path: Path) -> None:
    report = tmp_path / "report.html"
    render_html(two_runs, report)
    result = check(report, width=390)
    assert_clean(result)
    assert result["runRows"] == 2
    assert result["horizontalScroll"] is False
    assert result["injected"] is None
    # the newest run is shown first; its first output is the one with markup in it
    assert result["openedText"] == HOSTILE
    assert result["switchedHeading"] == f"Run {two_runs[0].name} · fixture"
    assert result["switchedStatus"] == "Page 1 of 1 · 30 outputs"
    assert result["switchedCharts"] == 4


def test_the_check_sees_a_request_and_the_policy_stops_it(two_runs: list[Path],
                                                          tmp_path: Path) -> None:
    """The harness is not blind: an image from the network put into a copy is counted (and
    refused by the harness) without the report's Content-Security-Policy; with it, the
    browser itself refuses it before it reaches the network."""
    page = build_html([read_run(p) for p in two_runs])
    probe = '<img src="http://127.0.0.1:9/probe.png" alt="">'
    with_policy = tmp_path / "with-policy.html"
    with_policy.write_text(page.replace("<main>", "<main>" + probe, 1))
    without = tmp_path / "without-policy.html"
    without.write_text(re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "",
                              with_policy.read_text()))
    seen = check(without, width=1400, quick=True)
    assert seen["requests"] == ["http://127.0.0.1:9/probe.png"]
    assert [(u, e.startswith("net::ERR_BLOCKED_BY_CLIENT")) for u, e in seen["failed"]] == [
        ("http://127.0.0.1:9/probe.png", True)]
    refused = check(with_policy, width=1400, quick=True)
    assert refused["failed"] == [["http://127.0.0.1:9/probe.png", "csp"]]
    assert any("Content Security Policy" in e for e in refused["consoleErrors"])
