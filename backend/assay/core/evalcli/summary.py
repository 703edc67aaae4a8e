"""Per model and prompt, the figures of a run from its responses and evaluations (the
terminal table, the metadata's summary, the report): score with its interval, pass rate,
the judges' mean confidence, cost, latency."""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

from assay.core.evalcli.runfiles import COMPOSITE
from assay.core.stats.bootstrap import mean_ci
from assay.core.stats.intervals import wilson_interval

N_RESAMPLES = 1000
Key = tuple[str, str, str]  # (model, prompt, scorer)
# a value this close under a threshold is at it (0.6 stored as 0.599999...)
AT_THRESHOLD = 1e-9


def interval(values_by_case: dict[Any, list[float]]) -> dict[str, Any] | None:
    if not values_by_case:
        return None
    ci = mean_ci(values_by_case, n_resamples=N_RESAMPLES)
    if ci.mean is None:
        return None
    return {"mean": round(ci.mean, 6), "low": None if ci.low is None else round(ci.low, 6),
            "high": None if ci.high is None else round(ci.high, 6), "n": ci.n_values}


def rate(passes: list[bool]) -> dict[str, Any] | None:
    if not passes:
        return None
    p = wilson_interval(sum(passes), len(passes))
    assert p.estimate is not None and p.low is not None and p.high is not None
    return {"rate": round(p.estimate, 6), "low": round(p.low, 6), "high": round(p.high, 6),
            "passed": p.k, "total": p.n}


def mean_confidence(values: list[float]) -> dict[str, Any] | None:
    """The judges' mean confidence over their scores (None: no judge gave one)."""
    if not values:
        return None
    return {"mean": round(sum(values) / len(values), 6), "n": len(values)}


def _percentile(values: list[float], q: float) -> float | None:
    """numpy.percentile's default (linear) to the last bit, in plain Python: NumPy's
    imports numpy.ma on first use, a twentieth of a second inside every `assay eval`."""
    if not values:
        return None
    ordered = sorted(float(v) for v in values)
    at = (len(ordered) - 1) * (q / 100)
    below = math.floor(at)
    a, b = ordered[below], ordered[min(below + 1, len(ordered) - 1)]
    t, step = at - below, b - a
    # numpy's _lerp: from the nearer end, so the result stays inside [a, b]
    return round(b - step * (1 - t) if t >= 0.5 else a + step * t, 3)


def summarize(models: list[str], responses: list[dict[str, Any]],
              evaluations: list[dict[str, Any]],
              prompts: list[str] | None = None) -> list[dict[str, Any]]:
    """One row per model and prompt (two prompts on a model are two rows, never merged),
    in the config's order; `prompts` None: the prompts as the responses name them."""
    if prompts is None:
        prompts = list(dict.fromkeys(r["prompt"] for r in responses))
    by_target: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for row in responses:
        by_target[(row["model"], row["prompt"])].append(row)
    scores: dict[Key, dict[Any, list[float]]] = defaultdict(lambda: defaultdict(list))
    passes: dict[Key, list[bool]] = defaultdict(list)
    sure: dict[Key, list[float]] = defaultdict(list)
    for ev in evaluations:
        key = (ev["model"], ev["prompt"], ev["scorer"])
        if ev["value"] is not None:
            scores[key][ev["case_index"]].append(float(ev["value"]))
        if ev["passed"] is not None:
            passes[key].append(bool(ev["passed"]))
        if ev.get("confidence") is not None:
            sure[key].append(float(ev["confidence"]))
    scorer_names = sorted({ev["scorer"] for ev in evaluations} - {COMPOSITE})
    out = []
    for model in models:
        for prompt in prompts:
            rows = by_target.get((model, prompt), [])
            if not rows and len(prompts) > 1:
                continue
            out.append(_row(model, prompt, rows, scorer_names, scores, passes, sure))
    return out


def _row(model: str, prompt: str, rows: list[dict[str, Any]], scorer_names: list[str],
         scores: dict[Any, dict[Any, list[float]]], passes: dict[Any, list[bool]],
         sure: dict[Any, list[float]]) -> dict[str, Any]:
    latencies = [r["latency_ms"] for r in rows
                 if r["status"] == "succeeded" and r["latency_ms"] is not None
                 and not r["cached"]]
    tokens = {k: sum(r["tokens"][k] for r in rows) for k in ("prompt", "completion", "total")}
    return {
        "model": model, "prompt": prompt, "outputs": len(rows),
        "succeeded": sum(r["status"] == "succeeded" for r in rows),
        "failed": sum(r["status"] == "failed" for r in rows),
        "score": interval(scores.get((model, prompt, COMPOSITE), {})),
        "pass_rate": rate(passes.get((model, prompt, COMPOSITE), [])),
        "confidence": mean_confidence([c for name in scorer_names
                                       for c in sure.get((model, prompt, name), [])]),
        "cost_micros": sum(r["cost_micros"] for r in rows), "tokens": tokens,
        "latency_ms": {"p50": _percentile(latencies, 50), "p95": _percentile(latencies, 95),
                       "mean": round(sum(latencies) / len(latencies), 3) if latencies
                       else None},
        "scorers": {name: {"score": interval(scores.get((model, prompt, name), {})),
                           "pass_rate": rate(passes.get((model, prompt, name), [])),
                           "confidence": mean_confidence(sure.get((model, prompt, name), []))}
                    for name in scorer_names},
    }


def verdict(ev: dict[str, Any], threshold: float | None) -> bool | None:
    """A scorer's threshold is its pass mark: an output passes at or above it, whatever
    the scorer's own default mark; without one, the scorer's own verdict."""
    if threshold is not None and ev["value"] is not None:
        return float(ev["value"]) >= threshold - AT_THRESHOLD
    return None if ev["passed"] is None else bool(ev["passed"])


def composite_rows(evaluations: list[dict[str, Any]], weights: dict[str, float],
                   thresholds: dict[str, float | None], fail_under: float | None
                   ) -> list[dict[str, Any]]:
    """The weighted composite of each output's scores (scorers without a value are left out
    of its weights). It passes when every scorer with a verdict passed and the composite
    reaches `fail_under` (when given)."""
    grouped: dict[tuple[int, str, str, int], list[dict[str, Any]]] = defaultdict(list)
    for ev in evaluations:
        grouped[(ev["case_index"], ev["model"], ev["prompt"], ev["repeat"])].append(ev)
    rows = []
    for (case_index, model, prompt, repeat), evs in grouped.items():
        weighted = [(weights.get(e["scorer"], 1.0), e["value"]) for e in evs
                    if e["value"] is not None and weights.get(e["scorer"], 1.0) > 0]
        total = sum(w for w, _ in weighted)
        value = round(sum(w * v for w, v in weighted) / total, 6) if total else None
        verdicts = [verdict(e, thresholds.get(e["scorer"])) for e in evs]
        verdicts = [v for v in verdicts if v is not None]
        if fail_under is not None and value is not None:
            verdicts.append(value >= fail_under)
        passed = all(verdicts) if verdicts else None
        if value is None and evs and all(e["value"] is None for e in evs):
            passed = False if any(e.get("error") for e in evs) else passed
        rows.append({"case_index": case_index, "model": model, "prompt": prompt,
                     "repeat": repeat, "scorer": COMPOSITE, "kind": COMPOSITE,
                     "value": value, "passed": passed})
    return rows
