"""`assay compare A B`: per scorer and model, the paired verdict of B against A on the
cases both ran (core/stats/paired.py), and the per-case diff: fixed, regressed, new fail.

A case is the same case in both runs when it has the same id and the same variables and
expected answer: ids alone ("1", "2", ...) are shared by unrelated configs. Runs sharing
no such case are refused (UnrelatedRuns). An output that errored counts as failing its
case, so a run that errored everywhere and one that passes show the cases as fixed."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from assay.core.errors import DomainError
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

    changed: list[str] = field(default_factory=list)  # ids both runs use for other cases

    @property
    def significant_regression(self) -> bool:
        return any(v.regressed for v in self.verdicts)


class UnrelatedRuns(DomainError):
    status = 422
    code = "UNRELATED_RUNS"


def _content(case: dict[str, Any]) -> str:
    return json.dumps([case.get("vars"), case.get("expected")], sort_keys=True, default=str)


def _shared_ids(a: RunData, b: RunData) -> tuple[set[str], list[str]]:
    """The case ids that name the same case in both runs, and those that name two."""
    content_a = {c["id"]: _content(c) for c in a.cases}
    content_b = {c["id"]: _content(c) for c in b.cases}
    both = content_a.keys() & content_b.keys()
    same = {i for i in both if content_a[i] == content_b[i]}
    return same, sorted(both - same, key=case_order)


def case_order(case_id: str) -> tuple[Any, ...]:
    """Case ids in their natural order: "2" before "10", "case-9" before "case-10"."""
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part)
                 for part in re.split(r"(\d+)", case_id) if part)


def _row_order(row: tuple[str, str, str]) -> tuple[Any, ...]:
    model, case, prompt = row
    return (model, case_order(case), prompt)


def _values(run: RunData, shared: set[str]) -> dict[tuple[str, str], dict[Key, list[float]]]:
    case_ids = {c["index"]: c["id"] for c in run.cases}
    out: dict[tuple[str, str], dict[Key, list[float]]] = defaultdict(lambda: defaultdict(list))
    for ev in run.evaluations:
        case = case_ids[ev["case_index"]]
        if ev["value"] is not None and case in shared:
            out[(ev["model"], ev["scorer"])][(case, ev["prompt"])].append(float(ev["value"]))
    return out


def _passes(run: RunData, cases: set[str] | None = None) -> dict[tuple[str, Key], bool]:
    """Each (model, case) passes when every repeat of it passed its assertions; an output
    that errored (no reply to score) fails its case."""
    case_ids = {c["index"]: c["id"] for c in run.cases}
    out: dict[tuple[str, Key], bool] = {}

    def note(model: str, index: int, prompt: str, passed: bool) -> None:
        case = case_ids[index]
        if cases is None or case in cases:
            key = (model, (case, prompt))
            out[key] = out.get(key, True) and passed

    for ev in run.evaluations:
        if ev["scorer"] == COMPOSITE and ev["passed"] is not None:
            note(ev["model"], ev["case_index"], ev["prompt"], bool(ev["passed"]))
    for response in run.responses:
        if response.get("status") == "failed":
            note(response["model"], response["case_index"], response["prompt"], False)
    return out


def _mean(values: dict[Key, list[float]]) -> dict[Key, float]:
    return {k: sum(v) / len(v) for k, v in values.items() if v}


def compare(a: RunData, b: RunData) -> Comparison:
    """B against A; UnrelatedRuns when they share no case (same id, same variables)."""
    shared, changed = _shared_ids(a, b)
    if not shared:
        raise UnrelatedRuns(
            f"runs {a.id} and {b.id} share no test case (the same id with the same "
            "variables and expected answer): they are not runs of the same tests")
    result = Comparison(changed=changed)
    values_a, values_b = _values(a, shared), _values(b, shared)
    for pair in sorted(set(values_a) & set(values_b)):
        model, scorer = pair
        paired = compare_paired(_mean(values_a[pair]), _mean(values_b[pair]))
        result.verdicts.append(ScorerVerdict(
            model, scorer, paired.n, paired.mean_a, paired.mean_b, paired.mean_difference,
            paired.low, paired.high, paired.p_value, paired.verdict))
    # a changed id is another case in B: new there, so only the shared ones are in A's
    passes_a, passes_b = _passes(a, shared), _passes(b)
    for key, passed_b in sorted(passes_b.items(), key=lambda kv: _row_order(
            (kv[0][0], *kv[0][1]))):
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
            "changed_cases": c.changed,
            "significant_regression": c.significant_regression}
