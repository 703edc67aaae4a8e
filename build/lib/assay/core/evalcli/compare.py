"""`assay compare A B`: per scorer and model, the paired verdict of B against A on the
cases both ran (core/stats/paired.py), and the per-case diff: fixed, regressed, new fail."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from assay.core.evalcli.runfiles import COMPOSITE, RunData
from assay.core.stats.paired import A_BETTER, compare_paired

Key = tuple[str, str]  # (case id, prompt)


@dataclass
class ScorerVerdict:
    model: str
    scorer: str
    n: int
    mean_a: float | None
    mean_b: float | None
    difference: float | None
    low: float | None
    high: float | None
    p_value: float | None
    verdict: str

    @property
    def regressed(self) -> bool:
        return self.verdict == A_BETTER  # A (the baseline) is better: B regressed


@dataclass
class Comparison:
    verdicts: list[ScorerVerdict] = field(default_factory=list)
    fixed: list[tuple[str, str, str]] = field(default_factory=list)  # model, case, prompt
    regressed: list[tuple[str, str, str]] = field(default_factory=list)
    new_fail: list[tuple[str, str, str]] = field(default_factory=list)

    @property
    def significant_regression(self) -> bool:
        return any(v.regressed for v in self.verdicts)


def _values(run: RunData) -> dict[tuple[str, str], dict[Key, list[float]]]:
    case_ids = {c["index"]: c["id"] for c in run.cases}
    out: dict[tuple[str, str], dict[Key, list[float]]] = defaultdict(lambda: defaultdict(list))
    for ev in run.evaluations:
        if ev["value"] is not None:
            out[(ev["model"], ev["scorer"])][(case_ids[ev["case_index"]], ev["prompt"])].append(
                float(ev["value"]))
    return out


def _passes(run: RunData) -> dict[tuple[str, Key], bool]:
    """Each (model, case) passes when every repeat of it passed its assertions."""
    case_ids = {c["index"]: c["id"] for c in run.cases}
    out: dict[tuple[str, Key], bool] = {}
    for ev in run.evaluations:
        if ev["scorer"] == COMPOSITE and ev["passed"] is not None:
            key = (ev["model"], (case_ids[ev["case_index"]], ev["prompt"]))
            out[key] = out.get(key, True) and bool(ev["passed"])
    return out


def _mean(values: dict[Key, list[float]]) -> dict[Key, float]:
    return {k: sum(v) / len(v) for k, v in values.items() if v}


def compare(a: RunData, b: RunData) -> Comparison:
    result = Comparison()
    values_a, values_b = _values(a), _values(b)
    for pair in sorted(set(values_a) & set(values_b)):
        model, scorer = pair
        paired = compare_paired(_mean(values_a[pair]), _mean(values_b[pair]))
        result.verdicts.append(ScorerVerdict(
            model, scorer, paired.n, paired.mean_a, paired.mean_b, paired.mean_difference,
            paired.low, paired.high, paired.p_value, paired.verdict))
    passes_a, passes_b = _passes(a), _passes(b)
    for key, passed_b in sorted(passes_b.items()):
        model, (case, prompt) = key
        row: tuple[str, str, str] = (model, case, prompt)
        if key not in passes_a:
            if not passed_b:
                result.new_fail.append(row)
        elif passes_a[key] and not passed_b:
            result.regressed.append(row)
        elif not passes_a[key] and passed_b:
            result.fixed.append(row)
    return result


def as_dict(c: Comparison) -> dict[str, Any]:
    return {"verdicts": [v.__dict__ for v in c.verdicts],
            "fixed": c.fixed, "regressed": c.regressed, "new_fail": c.new_fail,
            "significant_regression": c.significant_regression}
