"""From a real `assay eval` run (fake provider, a reference check and a rubric judge) to
the report: `--output html` writes it, `assay report` reads the same run folder, and the
page shows the run's own figures in Chromium with no request."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from assay.cli import main
from assay.core.evalcli import runfiles
from assay.providers.fake import FakeProviderThread
from tests.evalcli.test_eval_e2e import SAYS, config, run
from tests.evalreport.test_report import packed_data
from tests.evalreport.test_report_browser import assert_clean, check

JUDGE = ("  - name: rubric\n    kind: llm_judge\n    params:\n      judges: [smart]\n"
         "      rubric: {criteria: [{name: accuracy, description: 'Is it right', weight: 0.5, "
         "scale: '1-10'}, {name: clarity, description: 'Is it clear', weight: 0.5, "
         "scale: '1-10'}]}\n")


def test_an_eval_run_reported(tmp_path: Path, fake_provider: FakeProviderThread) -> None:
    result = run(tmp_path, config(fake_provider.url, scorers=SAYS + JUDGE, cases=3), "-q",
                 "--output", "html", "-o", str(tmp_path / "eval.html"))
    assert result.exit_code == 0, result.output
    folder = runfiles.resolve(tmp_path / "runs", "latest")
    ran = runfiles.read_run(folder)
    data = packed_data((tmp_path / "eval.html").read_text())
    assert data["runs"][0]["id"] == ran.id
    assert sorted(t for t in data["outputs"]["text"]) == sorted(r["text"] for r in ran.responses)
    assert data["runs"][0]["summary"] == ran.metadata["summary"]

    again = CliRunner().invoke(main, ["report", "latest", "--runs-dir", str(tmp_path / "runs"),
                                      "-o", str(tmp_path / "report.html")])
    assert again.exit_code == 0, again.output
    assert packed_data((tmp_path / "report.html").read_text())["outputs"] == data["outputs"]
    seen = check(tmp_path / "report.html", width=1400)
    assert_clean(seen)
    assert seen["pageStatus"] == "Page 1 of 1 · 6 outputs"
    assert seen["openedEvaluations"] == 3  # says, rubric, composite
