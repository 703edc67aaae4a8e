"""`assay report`: run folders -> one self-contained HTML file.

Everything is inlined: the styles, Chart.js (vendored from npm into assets/, see
`make report-assets`), the page's script and the data. The data is one JSON document
(data.py), gzip-compressed and base64-encoded: the text of 10,000 outputs shrinks several
times, and base64 cannot close the script element whatever the outputs contain. A
Content-Security-Policy forbids every fetch, so the file works, and stays, offline.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import html
import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any

from assay.core.evalcli.runfiles import COMPOSITE, RunData, RunFileError, read_run
from assay.core.evalreport import data as report_data

CHART_JS = "chart.umd.min.js"
_SOURCE_MAP = re.compile(r"\n?//# sourceMappingURL=\S+\s*$")


@dataclass(frozen=True)
class Rendered:
    path: Path
    bytes: int
    runs: int
    outputs: int


def asset(name: str) -> str:
    return resources.files("assay.core.evalreport").joinpath("assets", name).read_text("utf-8")


def _inline_script(source: str, name: str) -> str:
    # A source map comment would make an open DevTools fetch the map: drop it.
    source = _SOURCE_MAP.sub("", source)
    if re.search(r"</script|<!--", source, re.IGNORECASE):
        raise RunFileError(f"{name} cannot be inlined: it contains '</script' or '<!--'")
    return source


def _sha256(source: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(source.encode()).digest()).decode() + "'"


def _cell(value: Any) -> str:
    return html.escape("\u2013" if value is None or value == "" else str(value))  # en dash


def _run_list(runs: list[RunData]) -> str:
    """The run list, written into the page itself: readable before the script runs."""
    rows = []
    for i, run in enumerate(runs):
        meta, prompt = run.metadata, run.prompt
        totals = meta.get("totals", {})
        composite = [e["value"] for e in run.evaluations
                     if e.get("scorer") == COMPOSITE and e.get("value") is not None]
        score = f"{sum(composite) / len(composite):.3f}" if composite else None
        first = (prompt.get("prompts") or [{}])[0].get("template", "")
        preview = first if len(first) <= 120 else first[:119] + "…"
        cost = totals.get("cost_micros", 0) + totals.get("judge_cost_micros", 0)
        models = ", ".join(m.get("name", "") for m in prompt.get("models", []))
        rows.append(
            f'<tr data-run="{i}"><td><button class="link" type="button" data-run="{i}">'
            f"{_cell(run.id)}</button></td><td>{_cell(meta.get('name'))}</td>"
            f"<td class=\"hide-sm\">{_cell(meta.get('created_at'))}</td>"
            f"<td>{_cell(meta.get('status'))}</td>"
            f'<td class="preview hide-sm">{_cell(preview)}</td>'
            f'<td class="hide-sm">{_cell(models)}</td>'
            f'<td class="num">{_cell(totals.get("outputs"))}</td>'
            f'<td class="num">{_cell(score)}</td><td class="num">${cost / 1e6:.6f}</td></tr>')
    head = "".join(f'<th scope="col"{attrs}>{name}</th>' for name, attrs in (
        ("run", ""), ("name", ""), ("created", ' class="hide-sm"'), ("status", ""),
        ("prompt", ' class="hide-sm"'), ("models", ' class="hide-sm"'), ("outputs", ' class="num"'),
        ("avg score", ' class="num"'), ("cost", ' class="num"')))
    return (f'<div class="scroll"><table><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table></div>")


def build_html(runs: list[RunData], generated_at: datetime | None = None) -> str:
    runs = sorted(runs, key=lambda r: (str(r.metadata.get("created_at")), r.id))
    generated_at = generated_at or datetime.now(UTC)
    document = report_data.build(runs, generated_at)
    packed = base64.b64encode(gzip.compress(
        json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode(), 6, mtime=0))
    chart = _inline_script(asset(CHART_JS), CHART_JS)
    script = _inline_script(asset("report.js"), "report.js")
    style = asset("report.css")
    csp = (f"default-src 'none'; script-src {_sha256(chart)} {_sha256(script)}; "
           "style-src 'unsafe-inline'; img-src data: blob:; base-uri 'none'; form-action 'none'")
    count = document["outputs"]["count"]
    title = f"Assay report: {runs[0].id}" if len(runs) == 1 else f"Assay report: {len(runs)} runs"
    subtitle = (f"{len(runs)} run{'s' if len(runs) != 1 else ''}, {count:,} outputs · generated "
                f"{generated_at.astimezone(UTC):%Y-%m-%d %H:%M} UTC")
    parts = {"CSP": csp, "TITLE": html.escape(title), "SUBTITLE": html.escape(subtitle),
             "STYLE": style, "RUNLIST": _run_list(runs), "DATA": packed.decode("ascii"),
             "CHART": chart, "SCRIPT": script}
    # one pass: text put in never gets its own @@...@@ replaced
    return re.sub(r"@@([A-Z]+)@@", lambda m: parts[m.group(1)], asset("report.html"))


def render_html(run_dirs: list[Path], out_path: Path) -> Rendered:
    """Read every run folder (a RunFileError names the one that is not readable) and write
    the report to `out_path`."""
    if not run_dirs:
        raise RunFileError("no run to report on")
    unique = list(dict.fromkeys(Path(d).resolve() for d in run_dirs))  # a run named twice
    runs = [read_run(d) for d in unique]
    text = build_html(runs)
    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text(text, encoding="utf-8")
    return Rendered(out_path, len(text.encode()), len(runs),
                    sum(len(run.responses) for run in runs))
