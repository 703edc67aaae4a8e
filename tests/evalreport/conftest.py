"""Run folders for the report's tests, written by the run-file fixture writer."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from assay.core.evalcli.fixture import write_fixture_run
from assay.core.evalreport import Rendered, render_html

# Outputs whose text would break or script a page that pasted it in as HTML.
HOSTILE = ('</script><script>window.__assayInjected = "script"</script>'
           '<img src=x onerror="window.__assayInjected = \'img\'"> & <b>bold</b>')


def make_hostile(run: Path) -> None:
    """Give the run's first succeeded output, and its name, markup as text."""
    lines = (run / "responses.jsonl").read_text().splitlines()
    for n, line in enumerate(lines):
        row = json.loads(line)
        if row["status"] == "succeeded":
            row["text"] = HOSTILE
            lines[n] = json.dumps(row)
            break
    (run / "responses.jsonl").write_text("\n".join(lines) + "\n")
    meta = json.loads((run / "metadata.json").read_text())
    meta["name"] = '<img src=x onerror="window.__assayInjected = \'name\'">'
    (run / "metadata.json").write_text(json.dumps(meta))


@pytest.fixture
def two_runs(tmp_path: Path) -> list[Path]:
    """Two small runs a day apart (the second one better), the second with hostile text."""
    root = tmp_path / "runs"
    first = write_fixture_run(root, outputs=30, models=3, seed=1, quality=0.5,
                              started=datetime(2026, 3, 24, 9, 0, tzinfo=UTC))
    second = write_fixture_run(root, outputs=30, models=3, seed=2, quality=0.9,
                               started=datetime(2026, 3, 25, 9, 0, tzinfo=UTC))
    make_hostile(second)
    return [first, second]


@pytest.fixture(scope="session")
def big_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """10,000 outputs: 2,500 cases x 4 models (the size the report's bar is set at)."""
    return write_fixture_run(tmp_path_factory.mktemp("big") / "runs", outputs=10_000, models=4,
                             seed=7)


@pytest.fixture(scope="session")
def big_report(big_run: Path) -> Rendered:
    """`big_run` as a report (written once: the size test and the browser test read it)."""
    return render_html([big_run], big_run.parent.parent / "report.html")
