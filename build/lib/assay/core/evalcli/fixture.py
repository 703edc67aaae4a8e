"""A realistic run folder of N outputs, for tests and benches (the report's and compare's):
several models, a reference check, a rubric judge with criteria, reasoning and confidence,
some failures and cache hits, timings, tokens and cost. Deterministic for a given seed."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from assay.core.evalcli import runfiles, summary
from assay.core.evalcli.runfiles import RunWrite

MODELS = (("gpt-4o-mini", "openai", "gpt-4o-mini", 0.15, 0.6),
          ("claude-haiku", "anthropic", "claude-3-5-haiku-latest", 0.8, 4.0),
          ("llama3", "ollama", "llama3.2", None, None))
CRITERIA = ("accuracy", "completeness", "relevance", "clarity")


def write_fixture_run(root: Path, outputs: int = 30, models: int = 3, seed: int = 0,
                      started: datetime | None = None, quality: float = 0.7,
                      run_id: str | None = None) -> Path:
    """Write a completed run of `outputs` outputs (split over `models` models) under `root`
    and index it; returns the run folder. `quality` moves the pass rates up or down."""
    rng = random.Random(seed)
    chosen = [MODELS[i % len(MODELS)] for i in range(models)]
    names = [m[0] if i < len(MODELS) else f"{m[0]}-{i}" for i, m in enumerate(chosen)]
    n_cases = max(1, outputs // models)
    started = started or datetime(2026, 3, 25, 19, 15, 31, tzinfo=UTC)
    run_id = run_id or runfiles.new_run_id(root, started)
    cases: list[dict[str, Any]] = [
        {"index": i, "id": f"case-{i + 1}", "vars": {"topic": f"topic {i + 1}"},
         "expected": f"answer {i + 1}", "tags": ["fixture", ["easy", "hard"][i % 2]],
         "metadata": {}} for i in range(n_cases)]
    responses: list[dict[str, Any]] = []
    evaluations: list[dict[str, Any]] = []
    clock = started
    for n in range(outputs):
        case, m = n % n_cases, (n // n_cases) % models
        price_in, price_out = chosen[m][3], chosen[m][4]
        model = names[m]
        failed = rng.random() < 0.02
        cached = not failed and rng.random() < 0.1
        latency = round(rng.lognormvariate(6.2 + 0.3 * m, 0.35), 3)
        prompt_tokens, completion_tokens = rng.randint(20, 60), rng.randint(40, 400)
        cost = 0 if cached or failed or price_in is None else round(
            prompt_tokens * price_in + completion_tokens * (price_out or 0))
        began = clock + timedelta(milliseconds=n * 7)
        responses.append({
            "case_index": case, "case_id": cases[case]["id"], "model": model,
            "prompt": "explain", "repeat": 0,
            "status": "failed" if failed else "succeeded",
            "text": None if failed else f"About topic {case + 1}: answer "
                                        f"{case + 1}. " + "More detail. " * rng.randint(1, 8),
            "error": {"class": "rate_limited", "message": "429 Too Many Requests"} if failed
            else None,
            "tokens": {"prompt": 0 if failed else prompt_tokens,
                       "completion": 0 if failed else completion_tokens,
                       "total": 0 if failed else prompt_tokens + completion_tokens},
            "cost_micros": cost, "latency_ms": None if failed else (0.0 if cached else latency),
            "started_at": runfiles.iso(began),
            "ended_at": runfiles.iso(began + timedelta(milliseconds=0 if cached else latency)),
            "cached": cached, "attempts": 3 if failed else (0 if cached else 1)})
        if failed:
            continue
        hit = rng.random() < quality - 0.1 * m
        evaluations.append({"case_index": case, "model": model, "prompt": "explain",
                            "repeat": 0, "scorer": "mentions-answer", "kind": "contains",
                            "value": 1.0 if hit else 0.0, "passed": hit})
        criteria = {c: float(min(10, max(1, round(rng.gauss(7.5 - m + 2 * hit, 1.5)))))
                    for c in CRITERIA}
        value = round((sum(criteria.values()) / len(criteria) - 1) / 9, 6)
        evaluations.append({"case_index": case, "model": model, "prompt": "explain",
                            "repeat": 0, "scorer": "rubric", "kind": "llm_judge",
                            "value": value, "passed": value >= 0.6, "criteria": criteria,
                            "reasoning": "Covers the main points; "
                                         + ("clear." if hit else "misses the answer."),
                            "confidence": round(rng.uniform(0.6, 0.95), 3),
                            "error": None, "cost_micros": 40})
    evaluations += summary.composite_rows(evaluations, {"mentions-answer": 1.0, "rubric": 2.0},
                                          {}, None)
    finished = clock + timedelta(milliseconds=outputs * 7 + 900)
    prompt = {
        "schema_version": runfiles.SCHEMA_VERSION, "config_file": "assay.yaml",
        "description": "fixture run",
        "prompts": [{"name": "explain", "template": "Explain {{topic}} in two sentences.",
                     "system": "You are a concise teacher."}],
        "models": [{"name": names[i], "provider": chosen[i][1], "kind": chosen[i][1],
                    "model": chosen[i][2], "params": {"temperature": 0, "max_tokens": 400},
                    "input_price_per_mtok": chosen[i][3], "output_price_per_mtok": chosen[i][4]}
                   for i in range(models)],
        "scorers": [{"name": "mentions-answer", "kind": "contains",
                     "params": {"value": "answer"}, "weight": 1.0, "threshold": None},
                    {"name": "rubric", "kind": "llm_judge", "params": {"rubric": {"criteria": [
                        {"name": c, "description": f"How well the answer does on {c}.",
                         "weight": 1 / len(CRITERIA), "scale": "1-10"} for c in CRITERIA]}},
                     "weight": 2.0,
                     "threshold": 0.6}],
        "settings": {"concurrency": 20, "repeats": 1, "cache": True, "max_cost_micros": None,
                     "fail_under": None}}
    totals = {
        "outputs": outputs, "succeeded": sum(r["status"] == "succeeded" for r in responses),
        "failed": sum(r["status"] == "failed" for r in responses), "skipped": 0,
        "cached": sum(r["cached"] for r in responses),
        "tokens": {k: sum(r["tokens"][k] for r in responses)
                   for k in ("prompt", "completion", "total")},
        "cost_micros": sum(r["cost_micros"] for r in responses),
        "judge_cost_micros": sum(e.get("cost_micros", 0) for e in evaluations)}
    metadata = {
        "schema_version": runfiles.SCHEMA_VERSION, "run_id": run_id, "name": "fixture",
        "status": "partial" if totals["failed"] else "completed", "mode": "local",
        "server_run_url": None, "created_at": runfiles.iso(started),
        "started_at": runfiles.iso(started), "finished_at": runfiles.iso(finished),
        "duration_ms": (finished - started).total_seconds() * 1000, "assay_version": "0.1.0",
        "totals": totals, "summary": summary.summarize(names, responses, evaluations),
        "thresholds": {}, "exit_code": None}
    return runfiles.write_run(root, RunWrite(run_id, prompt, cases, responses, evaluations,
                                             metadata))
