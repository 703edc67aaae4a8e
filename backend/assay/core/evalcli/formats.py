"""`--output json|csv|junit`: a run's results in the formats CI tools read."""

from __future__ import annotations

import csv
import io
import json
from collections import defaultdict
from typing import TYPE_CHECKING, Any
from xml.etree import ElementTree as ET

if TYPE_CHECKING:  # `assay eval` reads FORMATS before it reads any run
    from assay.core.evalcli.runfiles import RunData

COMPOSITE = "composite"  # runfiles.COMPOSITE (a test keeps them equal)

FORMATS = ("json", "csv", "junit", "html")


def _key(row: dict[str, Any]) -> tuple[int, str, str, int]:
    return (row["case_index"], row["model"], row["prompt"], row["repeat"])


def _scores(run: RunData) -> dict[tuple[int, str, str, int], dict[str, dict[str, Any]]]:
    out: dict[tuple[int, str, str, int], dict[str, dict[str, Any]]] = defaultdict(dict)
    for ev in run.evaluations:
        out[_key(ev)][ev["scorer"]] = ev
    return out


def to_json(run: RunData) -> str:
    return json.dumps({"run_id": run.id, "status": run.metadata["status"],
                       "totals": run.metadata["totals"], "summary": run.metadata["summary"],
                       "thresholds": run.metadata.get("thresholds"),
                       "exit_code": run.metadata.get("exit_code")}, indent=2)


def to_csv(run: RunData) -> str:
    scorers = [s["name"] for s in run.prompt["scorers"]]
    scores = _scores(run)
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["case_id", "model", "prompt", "repeat", "status", "text", "error",
                     "tokens_in", "tokens_out", "cost_usd", "latency_ms", "cached",
                     *scorers, COMPOSITE, "passed"])
    for r in run.responses:
        mine = scores.get(_key(r), {})
        composite = mine.get(COMPOSITE, {})
        writer.writerow([r["case_id"], r["model"], r["prompt"], r["repeat"], r["status"],
                         r["text"] or "", (r["error"] or {}).get("message", ""),
                         r["tokens"]["prompt"], r["tokens"]["completion"],
                         f"{r['cost_micros'] / 1e6:.6f}", r["latency_ms"] or "", r["cached"],
                         *[mine.get(s, {}).get("value", "") for s in scorers],
                         composite.get("value", ""), composite.get("passed", "")])
    return buffer.getvalue()


def to_junit(run: RunData) -> str:
    """A test suite per model, a test case per output: failed when it failed an assertion,
    an error when its call failed."""
    scores = _scores(run)
    suites = ET.Element("testsuites", name=f"assay eval {run.id}")
    by_model: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in run.responses:
        by_model[r["model"]].append(r)
    for model, rows in by_model.items():
        suite = ET.SubElement(suites, "testsuite", name=model, tests=str(len(rows)))
        failures = errors = skipped = 0
        for r in rows:
            name = f"{r['prompt']} / case {r['case_id']}" + (
                f" / repeat {r['repeat']}" if r["repeat"] else "")
            case = ET.SubElement(suite, "testcase", classname=f"assay.{model}", name=name,
                                 time=f"{(r['latency_ms'] or 0) / 1000:.3f}")
            mine = scores.get(_key(r), {})
            if r["status"] == "failed":
                errors += 1
                ET.SubElement(case, "error", type=r["error"]["class"],
                              message=r["error"]["message"][:500])
            elif r["status"] == "skipped":
                skipped += 1
                ET.SubElement(case, "skipped", message="not run (budget or cancel)")
            elif mine.get(COMPOSITE, {}).get("passed") is False:
                failures += 1
                failed = [f"{n}={e['value']}" for n, e in mine.items()
                          if n != COMPOSITE and (e["passed"] is False or e.get("error"))]
                node = ET.SubElement(case, "failure", message="; ".join(failed)[:500])
                node.text = (r["text"] or "")[:2000]
        suite.set("failures", str(failures))
        suite.set("errors", str(errors))
        suite.set("skipped", str(skipped))
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"


SUFFIX_FORMATS = {".json": "json", ".csv": "csv", ".xml": "junit", ".html": "html",
                  ".htm": "html"}


def format_for(path: Any) -> str | None:
    """The format a file's suffix names (`-o results.json`), None when it names none."""
    from pathlib import Path

    return SUFFIX_FORMATS.get(Path(path).suffix.lower())
