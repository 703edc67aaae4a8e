"""Grading a learner's eval (issue 17, "Our reading of pass"): what is scored is the eval,
not the agent. A trace passes when the eval's verdict agrees with its label; pass_rate is
the agreement rate; critical_count the labelled critical failures the eval let through;
ready = pass_rate >= pass_threshold and critical_count == 0. Misses are the
disagreements: a missed failure (label fail, eval pass) or a false alarm (label pass,
eval fail)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from assay.scorers.rules import PatternTimeout, RuleSet, evaluate
from assay.scorers.rules_dsl import SEVERITIES

MISSED, FALSE_ALARM = "missed_failure", "false_alarm"


@dataclass(frozen=True)
class Verdict:
    """What the learner's eval concluded about one trace."""

    passed: bool
    severity: str | None = None  # low | high | critical, on a fail
    cluster: str = ""
    evidence: tuple[dict[str, Any], ...] = ()  # {message_index, start, end, label, detail, level}
    reasoning: str = ""
    error: str | None = None
    details: Mapping[str, Any] = field(default_factory=dict)


class TraceLike:  # the fields grading reads (ChallengeTrace rows and TraceSpecs have them)
    key: str
    label: str
    severity: str | None
    violated_clause: int | None
    messages: list[Any]


def rules_verdict(rules: RuleSet, messages: Sequence[Mapping[str, Any]]) -> Verdict:
    try:
        outcomes = evaluate(rules, messages)
    except PatternTimeout as error:
        return Verdict(False, "high", "pattern timeout", error=str(error))
    failed = [o for o in outcomes if not o.passed]
    if not failed:
        return Verdict(True, reasoning=f"All {len(outcomes)} rules passed.")
    severity = max((o.rule.severity for o in failed), key=SEVERITIES.index)
    evidence = tuple({"message_index": e.message_index, "start": e.start, "end": e.end,
                      "label": o.rule.id, "detail": o.message,
                      "level": "bad" if o.rule.severity != "low" else "warn"}
                     for o in failed for e in o.triggers)
    return Verdict(False, severity, failed[0].rule.id, evidence,
                   "; ".join(f"{o.rule.id} ({o.rule.severity}): {o.message}" for o in failed))


def trace_result(trace: Any, verdict: Verdict) -> dict[str, Any]:
    label_passes = trace.label == "pass"
    agreed = verdict.passed == label_passes
    miss = None if agreed else (MISSED if not label_passes else FALSE_ALARM)
    return {"trace_id": trace.key, "label": trace.label,
            "verdict": "pass" if verdict.passed else "fail", "agreed": agreed, "miss": miss,
            "severity": verdict.severity, "cluster": verdict.cluster,
            "evidence": list(verdict.evidence), "reasoning": verdict.reasoning,
            "error": verdict.error, "label_severity": trace.severity,
            "violated_clause": trace.violated_clause}


def summarise(results: Sequence[Mapping[str, Any]], threshold: float) -> dict[str, Any]:
    total = len(results)
    passed = sum(1 for r in results if r["agreed"])
    rate = passed / total if total else 0.0
    critical = sum(1 for r in results if r["miss"] == MISSED and r["label_severity"] == "critical")
    return {"pass_rate": rate, "critical_count": critical, "passed": passed, "total": total,
            "ready": total > 0 and rate >= threshold and critical == 0,
            "threshold": threshold,
            "missed_failures": sum(1 for r in results if r["miss"] == MISSED),
            "false_alarms": sum(1 for r in results if r["miss"] == FALSE_ALARM)}


def diff(previous: Sequence[Mapping[str, Any]] | None, current: Sequence[Mapping[str, Any]],
         previous_id: int | None) -> dict[str, Any]:
    """Against the previous attempt of the same tab and set: fixed (a miss then, agreed
    now), regressed (agreed then, a miss now), new_fail (a miss on a trace the previous
    attempt did not have: every miss of a first attempt)."""
    before = {r["trace_id"]: bool(r["agreed"]) for r in previous or ()}
    fixed, regressed, new_fail = [], [], []
    for result in current:
        key, agreed = result["trace_id"], bool(result["agreed"])
        if key not in before:
            if not agreed:
                new_fail.append(key)
        elif agreed and not before[key]:
            fixed.append(key)
        elif not agreed and before[key]:
            regressed.append(key)
    return {"previous_attempt_id": previous_id, "fixed": fixed, "regressed": regressed,
            "new_fail": new_fail}
