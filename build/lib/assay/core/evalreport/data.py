"""The report's one data document, built from run folders (RUNFILES.md).

Outputs are stored column by column (one array per field, one entry per output across every
run) rather than as 10,000 objects: the keys are not repeated, the page indexes arrays, and
the JSON stays small. Names that repeat (models, prompts, scorers, statuses) are indexes into
short lists. Scores of each scorer are one array aligned with the outputs; what only judges
have (criteria, reasoning, confidence, errors) is a sparse list of rows.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from assay.core.evalcli.runfiles import COMPOSITE, RunData
from assay.scorers.judging import FieldErrors
from assay.scorers.rubric import parse_rubric

FORMAT = 1

# the columns of `outputs`, in this order (the page reads them by name)
OUTPUT_FIELDS = ("run", "case", "model", "prompt", "repeat", "status", "text", "error",
                 "tokens_prompt", "tokens_completion", "cost_micros", "latency_ms",
                 "started_ms", "cached", "attempts")


class _Names:
    """A list of distinct strings and each one's index in it."""

    def __init__(self) -> None:
        self.items: list[str] = []
        self._index: dict[str, int] = {}

    def __call__(self, name: str) -> int:
        if name not in self._index:
            self._index[name] = len(self.items)
            self.items.append(name)
        return self._index[name]


def _epoch_ms(stamp: str | None) -> int | None:
    if not stamp:
        return None
    return round(datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() * 1000)


def _run_head(run: RunData) -> dict[str, Any]:
    meta, prompt = run.metadata, run.prompt
    return {
        "id": run.id, "name": meta.get("name"), "status": meta.get("status"),
        "mode": meta.get("mode"), "created_at": meta.get("created_at"),
        "started_at": meta.get("started_at"), "finished_at": meta.get("finished_at"),
        "duration_ms": meta.get("duration_ms"), "server_run_url": meta.get("server_run_url"),
        "exit_code": meta.get("exit_code"), "totals": meta.get("totals", {}),
        "summary": meta.get("summary", []), "thresholds": meta.get("thresholds", {}),
        "description": prompt.get("description"), "config_file": prompt.get("config_file"),
        "prompts": prompt.get("prompts", []), "models": prompt.get("models", []),
        "scorers": prompt.get("scorers", []), "settings": prompt.get("settings", {}),
        "cases": [{"id": c.get("id"), "vars": c.get("vars", {}), "expected": c.get("expected"),
                   "tags": c.get("tags", [])}
                  for c in sorted(run.cases, key=lambda c: int(c["index"]))],
    }


def build(runs: list[RunData], generated_at: datetime | None = None) -> dict[str, Any]:
    """The report's data for `runs` (oldest first, as the time series reads them)."""
    runs = sorted(runs, key=lambda r: (str(r.metadata.get("created_at")), r.id))
    models, prompts, scorers, statuses = _Names(), _Names(), _Names(), _Names()
    columns: dict[str, list[Any]] = {name: [] for name in OUTPUT_FIELDS}
    key_to_output: dict[tuple[int, int, str, str, int], int] = {}
    for r, run in enumerate(runs):
        case_position = {int(c["index"]): i for i, c in
                         enumerate(sorted(run.cases, key=lambda c: int(c["index"])))}
        for row in run.responses:
            key = (r, int(row["case_index"]), row["model"], row["prompt"], int(row["repeat"]))
            key_to_output[key] = len(columns["run"])
            error = row.get("error")
            tokens = row.get("tokens") or {}
            for name, value in (
                    ("run", r), ("case", case_position.get(int(row["case_index"]), -1)),
                    ("model", models(row["model"])), ("prompt", prompts(row["prompt"])),
                    ("repeat", row["repeat"]), ("status", statuses(row["status"])),
                    ("text", row.get("text")),
                    ("error", f"{error['class']}: {error['message']}" if error else None),
                    ("tokens_prompt", tokens.get("prompt", 0)),
                    ("tokens_completion", tokens.get("completion", 0)),
                    ("cost_micros", row.get("cost_micros", 0)),
                    ("latency_ms", row.get("latency_ms")),
                    ("started_ms", _epoch_ms(row.get("started_at"))),
                    ("cached", 1 if row.get("cached") else 0),
                    ("attempts", row.get("attempts", 0))):
                columns[name].append(value)
    total = len(columns["run"])
    values: dict[int, list[float | None]] = {}
    passed: dict[int, list[int | None]] = {}
    kinds: dict[int, str] = {}
    details: list[list[Any]] = []
    for r, run in enumerate(runs):
        for ev in run.evaluations:
            out = key_to_output.get((r, int(ev["case_index"]), ev["model"], ev["prompt"],
                                     int(ev["repeat"])))
            if out is None:  # a score of an output the run does not list: nothing to attach
                continue
            s = scorers(ev["scorer"])
            if s not in kinds:
                kinds[s], values[s], passed[s] = ev.get("kind", ""), [None] * total, [None] * total
            values[s][out] = ev.get("value")
            verdict = ev.get("passed")
            passed[s][out] = None if verdict is None else int(verdict)
            extra = [ev.get("criteria"), ev.get("reasoning"), ev.get("confidence"),
                     ev.get("error"), ev.get("cost_micros")]
            if any(x is not None for x in extra):
                details.append([out, s, *extra])
    return {
        "format": FORMAT,
        "generated_at": (generated_at or datetime.now(UTC)).isoformat().replace("+00:00", "Z"),
        "runs": [_run_head(run) for run in runs],
        "models": models.items, "prompts": prompts.items, "statuses": statuses.items,
        "scorers": [{"name": name, "kind": kinds.get(i, ""), "composite": name == COMPOSITE,
                     "scales": _criterion_scales(runs, name)}
                    for i, name in enumerate(scorers.items)],
        "outputs": {"count": total, **columns},
        "scores": {"values": [values.get(i, [None] * total) for i in range(len(scorers.items))],
                   "passed": [passed.get(i, [None] * total) for i in range(len(scorers.items))]},
        # [output, scorer, criteria, reasoning, confidence, error, cost_micros]
        "details": details,
    }


def _criterion_scales(runs: list[RunData], scorer: str) -> dict[str, list[int]]:
    """A judge's criteria and their scales ({name: [low, high]}), so the radar puts a 1-10
    and a 0-5 criterion on the same 0..1 axis."""
    for run in reversed(runs):
        for entry in run.prompt.get("scorers") or []:
            if entry.get("name") != scorer or "rubric" not in (entry.get("params") or {}):
                continue
            rubric = parse_rubric(entry["params"]["rubric"], FieldErrors())
            if rubric is not None:
                return {c.name: [c.low, c.high] for c in rubric.criteria}
    return {}
