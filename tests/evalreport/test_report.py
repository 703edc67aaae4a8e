"""`assay report`: the HTML file, its data, its size, the vendored chart library, the command."""

from __future__ import annotations

import base64
import gzip
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from assay.cli import main
from assay.core.evalcli.runfiles import COMPOSITE, read_run
from assay.core.evalreport import Rendered, build_html
from assay.core.evalreport.render import CHART_JS, asset
from tests.evalreport.conftest import HOSTILE

ROOT = Path(__file__).resolve().parents[2]


def packed_data(page: str) -> dict:
    blob = re.search(r'<script type="application/octet-stream" id="assay-data" '
                     r'data-encoding="gzip\+base64">([^<]*)</script>', page)
    assert blob, "the data element is missing"
    return json.loads(gzip.decompress(base64.b64decode(blob.group(1))))


def test_vendored_chart_js_is_the_one_in_node_modules() -> None:
    vendored = ROOT / "backend/assay/core/evalreport/assets" / CHART_JS
    installed = ROOT / "frontend/node_modules/chart.js/dist" / CHART_JS
    assert vendored.read_bytes() == installed.read_bytes(), \
        "run `make report-assets` after upgrading chart.js"
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert '"core/evalreport/assets/*"' in pyproject  # shipped by `pip install`


def test_every_output_and_score_is_in_the_data(two_runs: list[Path]) -> None:
    page = build_html([read_run(p) for p in reversed(two_runs)])
    data = packed_data(page)
    runs = [read_run(p) for p in two_runs]
    assert [r["id"] for r in data["runs"]] == [r.id for r in runs]  # oldest first
    out = data["outputs"]
    assert out["count"] == sum(len(r.responses) for r in runs) == 60
    index = {}
    for i in range(out["count"]):
        run = runs[out["run"][i]]
        case = run.cases[out["case"][i]]
        key = (out["run"][i], case["index"], data["models"][out["model"][i]],
               data["prompts"][out["prompt"][i]], out["repeat"][i])
        index[key] = i
    for r, run in enumerate(runs):
        for row in run.responses:
            i = index[(r, row["case_index"], row["model"], row["prompt"], row["repeat"])]
            assert out["text"][i] == row["text"]
            assert data["statuses"][out["status"][i]] == row["status"]
            assert out["cost_micros"][i] == row["cost_micros"]
            assert out["latency_ms"][i] == row["latency_ms"]
            assert out["tokens_completion"][i] == row["tokens"]["completion"]
            assert bool(out["cached"][i]) == row["cached"]
            if row["error"]:
                assert out["error"][i] == f"{row['error']['class']}: {row['error']['message']}"
        judged = 0
        for ev in run.evaluations:
            i = index[(r, ev["case_index"], ev["model"], ev["prompt"], ev["repeat"])]
            k = [s["name"] for s in data["scorers"]].index(ev["scorer"])
            assert data["scores"]["values"][k][i] == ev["value"]
            assert data["scores"]["passed"][k][i] == (None if ev["passed"] is None
                                                      else int(ev["passed"]))
            assert data["scorers"][k]["composite"] == (ev["scorer"] == COMPOSITE)
            if ev.get("criteria"):
                judged += 1
                detail = next(d for d in data["details"] if d[0] == i and d[1] == k)
                assert detail[2:] == [ev["criteria"], ev["reasoning"], ev["confidence"],
                                      ev["error"], ev["cost_micros"]]
        assert judged > 0
    rubric = next(s for s in data["scorers"] if s["name"] == "rubric")
    judged_row = next(ev for ev in runs[0].evaluations if ev.get("criteria"))
    assert rubric["scales"] == {c: [1, 10] for c in judged_row["criteria"]}
    assert [c["id"] for c in data["runs"][0]["cases"]] == [c["id"] for c in runs[0].cases]
    assert data["runs"][1]["summary"] == runs[1].metadata["summary"]


def test_markup_in_outputs_and_names_stays_text(two_runs: list[Path]) -> None:
    page = build_html([read_run(p) for p in two_runs])
    assert "__assayInjected = \"script\"" not in page  # the output: only in the base64 data
    assert "<img" not in page
    assert "&lt;img src=x onerror=" in page  # the run's name, escaped in the run list
    assert page.count("</script>") == 3  # data, chart.js, the page's script
    texts = packed_data(page)["outputs"]["text"]
    assert HOSTILE in texts


def test_the_page_allows_no_request(two_runs: list[Path]) -> None:
    page = build_html([read_run(p) for p in two_runs])
    meta = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page)
    assert meta
    csp = meta.group(1)
    assert "default-src 'none'" in csp and "unsafe-inline" not in csp.split(";")[1]
    assert "sourceMappingURL" not in page
    assert not re.search(r'(src|href)="(https?:)?//', page)


def test_a_report_of_10000_outputs_is_under_3_mb(big_report: Rendered) -> None:
    assert big_report.outputs == 10_000
    assert big_report.bytes == big_report.path.stat().st_size
    assert big_report.bytes < 3_000_000, f"{big_report.bytes:,} bytes"
    assert asset(CHART_JS)[:20] in big_report.path.read_text()


# ---- the command ---------------------------------------------------------------------------

@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.setenv("ASSAY_INSTANCE_PATH", str(tmp_path / "instance"))
    monkeypatch.chdir(tmp_path)
    return CliRunner()


def test_report_by_folder_id_and_latest(cli: CliRunner, two_runs: list[Path],
                                        tmp_path: Path) -> None:
    root = two_runs[0].parent
    result = cli.invoke(main, ["report", str(two_runs[0]), two_runs[1].name, "latest",
                               "--runs-dir", str(root), "-o", "out/report.html"])
    assert result.exit_code == 0, result.output
    assert "Wrote out/report.html (2 runs, 60 outputs" in result.output  # latest = the 2nd
    data = packed_data((tmp_path / "out/report.html").read_text())
    assert [r["id"] for r in data["runs"]] == [p.name for p in two_runs]


def test_default_output_and_runs_dir(cli: CliRunner, two_runs: list[Path],
                                     tmp_path: Path) -> None:
    result = cli.invoke(main, ["report", "latest"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "report.html").exists()


@pytest.mark.parametrize("breakage, message", [
    ("missing", "no run 'run_missing'"),
    ("bad-json", "not a readable run folder"),
    ("future-version", "schema_version 99 is not 1"),
])
def test_a_run_that_cannot_be_read_exits_2(cli: CliRunner, two_runs: list[Path],
                                           tmp_path: Path, breakage: str,
                                           message: str) -> None:
    run = two_runs[1]
    ref = str(run)
    if breakage == "missing":
        ref = "run_missing"
    elif breakage == "bad-json":
        (run / "responses.jsonl").write_text('{"case_index": 0,\n')
    else:
        meta = json.loads((run / "metadata.json").read_text())
        (run / "metadata.json").write_text(json.dumps({**meta, "schema_version": 99}))
    result = cli.invoke(main, ["report", str(two_runs[0]), ref, "-o", "r.html"])
    assert result.exit_code == 2
    assert message in result.output
    assert not (tmp_path / "r.html").exists()  # nothing half-written


def test_an_output_path_that_cannot_be_written_exits_2(cli: CliRunner, two_runs: list[Path],
                                                       tmp_path: Path) -> None:
    (tmp_path / "taken").write_text("a file, not a folder")
    result = cli.invoke(main, ["report", str(two_runs[0]), "-o", "taken/report.html"])
    assert result.exit_code == 2
    assert "cannot write taken/report.html" in result.output


def test_no_run_is_a_usage_error(cli: CliRunner) -> None:
    result = cli.invoke(main, ["report"])
    assert result.exit_code == 2
    assert "Missing argument 'RUNS...'" in result.output
