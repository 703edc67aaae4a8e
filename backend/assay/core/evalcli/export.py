"""A finished local run, from the run folder's database to run files (runfiles.py)."""

from __future__ import annotations

from datetime import timedelta
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from sqlalchemy import select

from assay.core.evalcli import runfiles, summary
from assay.core.evalcli.config import EvalConfig
from assay.core.evalcli.local import Planned
from assay.core.runs.models import Output, Run
from assay.core.scoring.models import Score

STATUSES = {"completed", "partial", "failed", "cancelled", "budget_exceeded"}


def assay_version() -> str:
    try:
        return version("assay")
    except PackageNotFoundError:
        return "0.0.0"


def prompt_file(cfg: EvalConfig, cache: bool, max_cost_micros: int | None,
                concurrency: int) -> dict[str, Any]:
    return {
        "schema_version": runfiles.SCHEMA_VERSION, "config_file": cfg.file,
        "description": cfg.description,
        "prompts": [{"name": p["name"], "template": p["template"], "system": p["system"]}
                    for p in cfg.prompts],
        "models": [{"name": m.name, "provider": m.provider, "kind": cfg.providers[m.provider].kind,
                    "model": m.model, "params": m.params,
                    "input_price_per_mtok": m.input_price_per_mtok,
                    "output_price_per_mtok": m.output_price_per_mtok} for m in cfg.models],
        "scorers": [{"name": s.name, "kind": s.kind, "params": s.params, "weight": s.weight,
                     "threshold": s.threshold} for s in cfg.scorers],
        "settings": {"concurrency": concurrency, "repeats": cfg.repeats, "cache": cache,
                     "max_cost_micros": max_cost_micros, "fail_under": cfg.fail_under}}


# the columns run files take: rows, not ORM objects (no raw request/reply JSON decoded for
# nothing, no identity map), as thousands of outputs are read in one go
_OUTPUT_COLUMNS = (Output.id, Output.target_id, Output.case_id, Output.repeat, Output.status,
                   Output.text, Output.error_class, Output.error_message, Output.tokens_in,
                   Output.tokens_out, Output.cost_micros, Output.latency_ms, Output.finished_at,
                   Output.cached, Output.attempts)
_SCORE_COLUMNS = (Score.output_id, Score.scorer_version_id, Score.kind, Score.value,
                  Score.passed, Score.criteria, Score.rationale, Score.details, Score.error)


def _response(o: Any, case: dict[str, Any], model: str, prompt: str) -> dict[str, Any]:
    ended = o.finished_at
    started = None if ended is None or o.latency_ms is None else ended - timedelta(
        milliseconds=o.latency_ms)
    status = o.status if o.status in ("succeeded", "failed") else "skipped"
    tokens_in, tokens_out = o.tokens_in or 0, o.tokens_out or 0
    return {"case_index": case["index"], "case_id": case["id"], "model": model,
            "prompt": prompt, "repeat": o.repeat, "status": status, "text": o.text,
            "error": None if not (o.error_class or o.error_message) else {
                "class": o.error_class or "error", "message": o.error_message or ""},
            "tokens": {"prompt": tokens_in, "completion": tokens_out,
                       "total": tokens_in + tokens_out},
            "cost_micros": o.cost_micros or 0,
            "latency_ms": None if o.latency_ms is None else float(o.latency_ms),
            "started_at": runfiles.iso(started), "ended_at": runfiles.iso(ended),
            "cached": bool(o.cached), "attempts": o.attempts}


def _evaluation(s: Any, key: dict[str, Any], name: str) -> dict[str, Any]:
    details = s.details or {}
    # per criterion the score on its own scale: what the judge gave (its details keep it;
    # the Score's criteria are normalised to 0..1), else the kind's own (rules: 1 or 0)
    raw = details.get("scores")
    given = raw if isinstance(raw, dict) and set(raw) == set(s.criteria or {}) else s.criteria
    criteria = {k: (None if v is None else float(v)) for k, v in (given or {}).items()}
    confidence = details.get("confidence")
    return {**key, "scorer": name, "kind": s.kind, "value": s.value, "passed": s.passed,
            "criteria": criteria, "reasoning": s.rationale or None,
            "confidence": confidence if isinstance(confidence, int | float) else None,
            "error": s.error, "cost_micros": int(details.get("cost_micros") or 0)}


def collect(cfg: EvalConfig, planned: Planned, cache: bool, max_cost_micros: int | None,
            concurrency: int) -> runfiles.RunWrite:
    rt = planned.rt
    cases = {c["index"]: c for c in cfg.cases}
    weights = {s.name: s.weight for s in cfg.scorers}
    thresholds = {s.name: s.threshold for s in cfg.scorers}
    responses: list[dict[str, Any]] = []
    evaluations: list[dict[str, Any]] = []
    keys: dict[int, dict[str, Any]] = {}
    with rt.db.factory() as session:
        run = session.get(Run, planned.run_id)
        assert run is not None
        for o in session.execute(select(*_OUTPUT_COLUMNS).where(Output.run_id == run.id)
                                 .order_by(Output.target_id, Output.case_id, Output.repeat)):
            model, prompt = planned.targets[o.target_id]
            case = cases[planned.case_index[o.case_id]]
            responses.append(_response(o, case, model, prompt))
            keys[o.id] = {"case_index": case["index"], "model": model, "prompt": prompt,
                          "repeat": o.repeat}
        for s in session.execute(select(*_SCORE_COLUMNS).where(Score.run_id == run.id)
                                 .order_by(Score.output_id, Score.id)):
            name = planned.scorer_names.get(s.scorer_version_id, (s.kind, s.kind))[0]
            row = _evaluation(s, keys[s.output_id], name)
            row["passed"] = summary.verdict(row, thresholds.get(name))
            evaluations.append(row)
        evaluations += summary.composite_rows(evaluations, weights, thresholds, None)
        judge_cost = int(run.judge_spent_micros or 0)
        metadata = {
            "schema_version": runfiles.SCHEMA_VERSION, "run_id": "", "name": run.name,
            "status": run.status if run.status in STATUSES else "failed", "mode": "local",
            "server_run_url": None, "created_at": runfiles.iso(run.created_at),
            "started_at": runfiles.iso(run.started_at),
            "finished_at": runfiles.iso(run.finished_at),
            "duration_ms": None if not (run.started_at and run.finished_at) else round(
                (run.finished_at - run.started_at).total_seconds() * 1000, 3),
            "assay_version": assay_version(),
            "totals": {
                "outputs": len(responses),
                "succeeded": sum(r["status"] == "succeeded" for r in responses),
                "failed": sum(r["status"] == "failed" for r in responses),
                "skipped": sum(r["status"] == "skipped" for r in responses),
                "cached": sum(r["cached"] for r in responses),
                "tokens": {k: sum(r["tokens"][k] for r in responses)
                           for k in ("prompt", "completion", "total")},
                "cost_micros": sum(r["cost_micros"] for r in responses),
                "judge_cost_micros": judge_cost},
            "summary": summary.summarize([m.name for m in cfg.models], responses, evaluations,
                                         [p["name"] for p in cfg.prompts]),
            "thresholds": {"fail_under": cfg.fail_under,
                           **{s.name: s.threshold for s in cfg.scorers
                              if s.threshold is not None}},
            "exit_code": None}
    return runfiles.RunWrite("", prompt_file(cfg, cache, max_cost_micros, concurrency),
                             list(cases.values()), responses, evaluations, metadata)
