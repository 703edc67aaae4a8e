"""Exit codes of `assay eval` and how a run earns them (README "assay eval")."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from assay.core.evalcli.codes import BUDGET, FAILED_CHECKS, OK, PROVIDER_ERRORS, USAGE
from assay.core.evalcli.runfiles import COMPOSITE, RunData

__all__ = ["BUDGET", "FAILED_CHECKS", "OK", "PROVIDER_ERRORS", "USAGE", "Verdict", "judge"]


@dataclass
class Verdict:
    code: int
    reasons: list[str] = field(default_factory=list)


def judge(run: RunData, fail_under: float | None) -> Verdict:
    """3 when the budget stopped the run, 4 when provider or network errors left cells
    failed, 1 when a threshold or an assertion failed, else 0. `fail_under` (the flag, or
    settings.fail_under) is a bar for each model's mean of each scorer and of the
    composite; without it every output must pass its assertions. A scorer's `threshold`
    is the pass mark of its value on each output."""
    meta = run.metadata
    if meta["status"] == "budget_exceeded":
        skipped = meta["totals"]["skipped"]
        return Verdict(BUDGET, [f"the budget stopped the run ({skipped} cells not run)"])
    if meta["totals"]["failed"]:
        classes = sorted({r["error"]["class"] for r in run.responses if r["error"]})
        return Verdict(PROVIDER_ERRORS, [f"{meta['totals']['failed']} calls failed "
                                         f"({', '.join(classes)})"])
    reasons: list[str] = []
    if fail_under is not None:
        for row in meta["summary"]:
            figures: list[tuple[str, Any]] = [(COMPOSITE, row["score"])]
            figures += [(name, s["score"]) for name, s in row["scorers"].items()]
            for name, score in figures:
                if score is not None and score["mean"] < fail_under:
                    reasons.append(f"{row['model']}: {name} {score['mean']:.3f} < "
                                   f"{fail_under}")
    else:
        composite = [e for e in run.evaluations if e["scorer"] == COMPOSITE]
        failed = [e for e in composite if e["passed"] is False]
        if failed:
            reasons.append(f"{len(failed)} of {len(composite)} outputs failed an assertion")
    return Verdict(FAILED_CHECKS if reasons else OK, reasons)
