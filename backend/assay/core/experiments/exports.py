"""The final report as files: Markdown, PDF (report_pdf.py, its layout and fonts), the best
prompt as .txt/.md, every score as CSV, and a bundle (zip: experiment.yaml, the prompt
versions, the cases, results.csv, report.md) that imports back into a new draft
(bundle.py)."""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from assay.core import csv_cells
from assay.core.experiments.models import Experiment, Iteration
from assay.core.llm.models import ModelConfig
from assay.core.runs.models import RunTarget
from assay.core.scoring.models import Score, ScorerVersion


def _usd(micros: int | None) -> str:
    return "-" if micros is None else f"${micros / 1_000_000:,.4f}"


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _ci(score: dict[str, Any] | None) -> str:
    if not score or score.get("mean") is None:
        return "-"
    if score.get("low") is None:
        return _num(score["mean"])
    return f"{score['mean']:.3f} [{score['low']:.3f}, {score['high']:.3f}]"


def _verdict(found: dict[str, Any] | None) -> str:
    if not found:
        return "not enough data"
    diff = found.get("mean_difference")
    low, high = found.get("low"), found.get("high")
    interval = f" [{low:+.3f}, {high:+.3f}]" if low is not None and high is not None else ""
    better = {"B better": "last better", "A better": "first better"}.get(
        found["verdict"], found["verdict"])
    return (f"{better}: difference {diff:+.3f}{interval} over {found['n']} cases"
            if diff is not None else better)


def lines(report: dict[str, Any]) -> list[tuple[str, str]]:
    """(kind, text) blocks shared by the Markdown and the PDF: h1, h2, p, li, row, pre."""
    e, cost, best = report["experiment"], report["cost"], report["best"]
    out: list[tuple[str, str]] = [("h1", f"Experiment report: {e['name']}")]
    out.append(("p", f"Objective: {e['objective'] or '-'}"))
    stop = e["stop_detail"] or e["stop_reason"] or "-"
    out.append(("p", f"Status: {e['status']} (stopped: {stop}). Iterations: "
                     f"{len(report['iterations'])}. Cases: {e['refinement_cases']} refinement, "
                     f"{e['holdout_cases']} held out. Duration: "
                     f"{round(e['duration_s']) if e['duration_s'] is not None else '-'} s."))
    out.append(("h2", "Best version"))
    if best:
        flag = " Flagged: likely overfitting." if best["likely_overfitting"] else ""
        out.append(("p", f"Prompt version {best['prompt_version']} (iteration "
                         f"{best['iteration']}), chosen on {best['chosen_on']} cases: "
                         f"{_ci(best['score'])}.{flag}"))
    else:
        out.append(("p", "No iteration has scores yet."))
    fvl = report["first_vs_last"]
    out.append(("h2", "First vs last (paired)"))
    if fvl:
        out.append(("li", f"All cases: {_verdict(fvl['all'])}"))
        out.append(("li", f"Held-out cases: {_verdict(fvl['holdout'])}"))
    else:
        out.append(("p", "Fewer than two iterations: nothing to compare."))
    out.append(("h2", "Iterations"))
    out.append(("row", "# | version | all cases | refinement | held-out | spend | note"))
    for row in report["iterations"]:
        note = "likely overfitting" if row["likely_overfitting"] else row["status"]
        out.append(("row", f"{row['number']} | v{row['prompt_version']} | {_ci(row['all'])} | "
                           f"{_ci(row['refinement'])} | {_ci(row['holdout'])} | "
                           f"{_usd(row['spent_micros'])} | {note}"))
    out.append(("h2", "Cost by phase"))
    for phase in ("execution", "judging", "refinement", "assist", "total"):
        out.append(("li", f"{phase.capitalize()}: {_usd(cost[f'{phase}_micros'])}"))
    tokens = report["tokens"]
    out.append(("p", f"Tokens: {tokens['input']:,} in, {tokens['output']:,} out."))
    out.append(("h2", "Recommended model"))
    model = report["recommended_model"]
    out.append(("p", f"{model['name']}: {_ci(model['score'])}, "
                     f"{_usd(model['cost_per_case_micros'])} per case." if model else "-"))
    out.append(("h2", "Remaining weak criteria"))
    for weak in report["weak_criteria"] or [{"name": "none found", "mean": None}]:
        out.append(("li", f"{weak['name']}: {_num(weak['mean'])}"))
    out.append(("h2", "Next steps"))
    out.extend(("li", step) for step in report["next_steps"])
    prompt = report["best_prompt"]
    if prompt:
        out.append(("h2", f"Best prompt (version {prompt['number']})"))
        if prompt["system"]:
            out.append(("pre", f"[system]\n{prompt['system']}"))
        out.append(("pre", prompt["template"]))
    return out


def markdown(report: dict[str, Any]) -> str:
    text: list[str] = []
    for kind, body in lines(report):
        if kind == "h1":
            text.append(f"# {body}\n")
        elif kind == "h2":
            text.append(f"\n## {body}\n")
        elif kind == "li":
            text.append(f"- {body}")
        elif kind == "row":
            text.append(f"| {body} |")
            if body.startswith("# |"):
                text.append("|" + " --- |" * (body.count("|") + 1))
        elif kind == "pre":
            text.append(f"\n```\n{body}\n```\n")
        else:
            text.append(f"{body}\n")
    return "\n".join(text) + "\n"


def pdf(report: dict[str, Any]) -> bytes:
    # imported here: fpdf2 (with fontTools and Pillow) costs seconds of CPU to import, which
    # every API and worker process would pay at start for a rarely used export
    from assay.core.experiments import report_pdf

    return report_pdf.render(report)


def best_prompt(report: dict[str, Any], fmt: str) -> str:
    prompt = report["best_prompt"]
    if prompt is None:
        return ""
    if fmt == "txt":
        system = f"{prompt['system']}\n\n---\n\n" if prompt["system"] else ""
        return system + prompt["template"] + "\n"
    parts = [f"# {report['experiment']['name']}: prompt version {prompt['number']}\n"]
    if prompt["note"]:
        parts.append(f"_{prompt['note']}_\n")
    if prompt["system"]:
        parts.append(f"## System\n\n```\n{prompt['system']}\n```\n")
    parts.append(f"## Prompt\n\n```\n{prompt['template']}\n```\n")
    return "\n".join(parts)


CSV_HEADER = ["iteration", "prompt_version_id", "split", "case_id", "model", "judge",
              "score", "criteria"]


def results_csv(session: Session, experiment: Experiment) -> Iterator[str]:
    """One row per rubric-judge score of every iteration, streamed."""
    buffer = io.StringIO()
    out = csv_cells.writer(buffer)
    out.writerow(CSV_HEADER)
    yield buffer.getvalue()
    held = set(experiment.holdout_case_ids or [])
    # judges by their model's name: the wizard's scorers refer to them by model id
    names = {str(i): name for i, name in session.execute(select(
        ModelConfig.id, ModelConfig.name).where(ModelConfig.project_id == experiment.project_id))}
    scorer_id = experiment.scorer_ids[0] if experiment.scorer_ids else None
    rows = session.execute(
        select(Iteration.number, Iteration.prompt_version_id, Score.case_id, ModelConfig.name,
               Score.source, Score.value, Score.criteria)
        .join(Score, Score.run_id == Iteration.run_id)
        .join(RunTarget, RunTarget.id == Score.target_id)
        .outerjoin(ModelConfig, ModelConfig.id == RunTarget.model_id)
        .join(ScorerVersion, ScorerVersion.id == Score.scorer_version_id)
        .where(Iteration.experiment_id == experiment.id, ScorerVersion.scorer_id == scorer_id)
        .order_by(Iteration.number, Score.case_id, Score.id)
        .execution_options(yield_per=1000))
    for number, version_id, case_id, model, judge, value, criteria in rows:
        buffer.seek(0)
        buffer.truncate()
        out.writerow([csv_cells.escape(v) for v in (
            number, version_id, "holdout" if case_id in held else "refinement", case_id,
            model or "", names.get(judge, judge), "" if value is None else f"{value:.6f}",
            ";".join(f"{k}={v:.4f}" for k, v in sorted((criteria or {}).items())))])
        yield buffer.getvalue()
