"""The results of a local run as the terminal shows them: one row per model x prompt x
scorer (the composite first), then the failing cases (input, output, reason) and the
first provider message of each error class."""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

from rich.console import Console
from rich.table import Table

from assay.cli.common import interval, money, number, rate
from assay.core.evalcli.runfiles import COMPOSITE, RunData

FAILURES_SHOWN = 10  # per scorer; the run files hold all of them
CLIP = 160  # characters of an input, output or reason in the failure list


def _clip(text: Any) -> str:
    flat = " ".join(str(text if text is not None else "").split())
    return flat if len(flat) <= CLIP else flat[:CLIP - 1] + "…"


def thresholds(run: RunData) -> dict[str, float | None]:
    return {s["name"]: s.get("threshold") for s in run.prompt.get("scorers", [])}


def results_table(run: RunData) -> Table:
    summary = run.metadata["summary"]
    judged = any(row.get("confidence") for row in summary)
    marks = thresholds(run)
    fail_under = (run.metadata.get("thresholds") or {}).get("fail_under")
    table = Table(title=f"{run.id}: {run.metadata['status']}",
                  caption="pass at: an output passes a scorer at or above its threshold"
                          + ("; conf.: the judges' mean confidence (0-1)" if judged else ""))
    columns = ("model", "prompt", "scorer", "score [95% CI]", "pass rate", "pass at",
               *(("conf.",) if judged else ()), "ok/failed", "cost", "p50 ms", "p95 ms")
    for column in columns:
        table.add_column(column, justify="left" if column in ("model", "prompt", "scorer")
                         else "right", no_wrap=True)
    for row in summary:
        prompt = row.get("prompt") or "-"
        calls = (f"{row['succeeded']}/{row['failed']}", money(row["cost_micros"]),
                 number(row["latency_ms"]["p50"]), number(row["latency_ms"]["p95"]))
        sure = row.get("confidence")
        table.add_row(row["model"], prompt, f"[bold]{COMPOSITE}[/]", interval(row["score"]),
                      rate(row["pass_rate"]), number(fail_under, 2) if fail_under else "-",
                      *((number(sure and sure["mean"], 2),) if judged else ()), *calls)
        for name, figures in row["scorers"].items():
            sure = figures.get("confidence")
            table.add_row("", "", name, interval(figures["score"]), rate(figures["pass_rate"]),
                          number(marks.get(name), 2) if marks.get(name) is not None else "-",
                          *((number(sure and sure["mean"], 2),) if judged else ()),
                          "", "", "", "")
    return table


def print_failures(console: Console, run: RunData) -> None:
    """Per scorer the first failing outputs with their input, output and reason; per
    error class the first provider message."""
    cases = {c["index"]: c for c in run.cases}
    texts = {(r["case_index"], r["model"], r["prompt"], r["repeat"]): r for r in run.responses}
    failing: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
    for ev in run.evaluations:
        if ev["scorer"] != COMPOSITE and (ev["passed"] is False or ev.get("error")):
            failing[(ev["model"], ev["prompt"], ev["scorer"])].append(ev)
    for (model, prompt, scorer), rows in failing.items():
        console.print(f"[bold red]{scorer}[/] failed {len(rows)} output(s) of {model} / "
                      f"{prompt}:")
        for ev in rows[:FAILURES_SHOWN]:
            case = cases.get(ev["case_index"], {})
            reply = texts.get((ev["case_index"], ev["model"], ev["prompt"], ev["repeat"]), {})
            value = "-" if ev["value"] is None else f"{ev['value']:.3f}"
            reason = ev.get("error") or ev.get("reasoning") or f"score {value}"
            console.print(f"  case {case.get('id', ev['case_index'] + 1)}: input "
                          f"{_clip(json.dumps(case.get('vars', {}), ensure_ascii=False))}",
                          markup=False)
            console.print(f"    output: {_clip(reply.get('text'))}", markup=False)
            console.print(f"    reason: {_clip(reason)} (score {value})", markup=False)
        if len(rows) > FAILURES_SHOWN:
            console.print(f"  ... and {len(rows) - FAILURES_SHOWN} more (evaluations.jsonl)")
    first: dict[str, tuple[int, str]] = {}
    for r in run.responses:
        if r["error"]:
            count, message = first.get(r["error"]["class"], (0, r["error"]["message"]))
            first[r["error"]["class"]] = (count + 1, message)
    for error_class, (count, message) in first.items():
        console.print(f"[bold red]{count} call(s) failed ({error_class})[/]: first message: "
                      f"{_clip(message)}", highlight=False)
