"""What a whole experiment may cost (edison FR-EC-007): every iteration's execution,
judging and refinement, as a low and a high figure, from a draft (nothing is written).

Execution is counted the way core/runs/estimate.py counts a run: each case's rendered
messages with the model's tokenizer, the output between LOW_OUTPUT_SHARE of max_tokens and
all of it. A judge call reads the case's prompt, the reply and the rubric (counted) plus
JUDGE_FRAMING tokens of instructions, and writes up to JUDGE_TOKENS_PER_CRITERION per
criterion. A refinement call reads the prompt, the rubric and up to REFINER_EXEMPLARS
failing cases with their replies, and writes up to a diff of the whole prompt plus a note.
Iterations: the low figure assumes the loop stops at 60% of max iterations (the spec's
early-stopping assumption), the high one that it runs them all. Unpriced models are
listed and left out, never counted as free.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Mapping
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from assay.core.datasets.service import version_cases
from assay.core.experiments import config as config_
from assay.core.experiments.config import step_errors
from assay.core.llm.models import ModelConfig
from assay.core.llm.params import clean_params
from assay.core.runs.estimate import LOW_OUTPUT_SHARE
from assay.core.runs.rendering import PromptParts, cell_messages
from assay.providers import tokens
from assay.providers.pricing import cost_micros

JUDGE_FRAMING = 400
JUDGE_TOKENS_PER_CRITERION = 80
REFINER_EXEMPLARS = 10
REFINER_FRAMING = 600
REFINER_NOTE = 300
LOW_ITERATION_SHARE = 0.6
SAMPLE = 200  # cases whose prompts are rendered and counted; the rest priced at their mean


def _grid(target: Mapping[str, Any]) -> list[dict[str, Any]]:
    grid = target.get("grid") or {}
    names = list(grid)
    combos = itertools.product(*(grid[n] for n in names)) if names else [()]
    return [clean_params({**(target.get("params") or {}), **dict(zip(names, c, strict=True))})
            for c in combos]


def _cost(model: ModelConfig, tokens_in: int, tokens_out: int) -> int | None:
    return cost_micros(tokens_in, tokens_out, model.input_price_per_mtok_micros,
                       model.output_price_per_mtok_micros)


def estimate(session: Session, project_id: int, config: Mapping[str, Any]) -> dict[str, Any]:
    """{low_micros, high_micros, per_iteration: {execution, judging, refinement}: {low,
    high}, iterations: {low, high}, complete, unpriced_models, problems}."""
    problems = step_errors(session, project_id, config, ("rubric", "prompt", "data", "models",
                                                         "judges", "stop"))
    empty = {"low_micros": 0, "high_micros": 0, "iterations": {"low": 0, "high": 0},
             "per_iteration": {p: {"low_micros": 0, "high_micros": 0}
                               for p in ("execution", "judging", "refinement")},
             "cases": 0, "calls_per_iteration": 0, "complete": False, "unpriced_models": [],
             "problems": problems}
    if problems:
        return empty
    prompt, judges = config["prompt"], config["judges"]
    parts = PromptParts(prompt["template"], prompt.get("system"),
                        tuple(prompt.get("few_shots") or ()))
    cases = version_cases(session, config["data"]["dataset_version_id"])
    sample = cases[::max(1, len(cases) // SAMPLE)][:SAMPLE]
    ids = {t["model_id"] for t in config["models"]["targets"]} | set(judges["pointwise"])
    refiner_id = int(config_.refiner(config) or judges["pointwise"][0])  # checked: an id
    ids |= {refiner_id} | ({judges["pairwise_judge"]} if judges.get("pairwise") else set())
    models = {m.id: m for m in session.scalars(select(ModelConfig).where(
        ModelConfig.id.in_(ids)))}
    rubric_tokens = tokens.count_text(json.dumps(config["rubric"]["criteria"]))
    criteria = len(config["rubric"]["criteria"])
    unpriced: set[int] = {m.id for m in models.values()
                          if _cost(m, 1, 1) is None}
    totals = {p: [0, 0] for p in ("execution", "judging", "refinement")}
    calls = 0
    for target in config["models"]["targets"]:
        model = models[target["model_id"]]
        prompt_tokens = sum(tokens.count_messages(cell_messages(c.input, parts), model.model)
                            for c in sample) / max(len(sample), 1)
        for params in _grid(target):
            high_out = tokens.max_output_tokens(params)
            low_out = math.ceil(high_out * LOW_OUTPUT_SHARE)
            n = len(cases)
            calls += n
            for i, out in enumerate((low_out, high_out)):
                totals["execution"][i] += _cost(model, round(prompt_tokens * n), out * n) or 0
                for judge_id in judges["pointwise"]:
                    judge = models[judge_id]
                    read = round(prompt_tokens + out + rubric_tokens + JUDGE_FRAMING)
                    write = JUDGE_TOKENS_PER_CRITERION * criteria
                    write = write if i else math.ceil(write * LOW_OUTPUT_SHARE)
                    totals["judging"][i] += _cost(judge, read * n, write * n) or 0
                if judges.get("pairwise") and judges.get("pairwise_judge") in models:
                    judge = models[judges["pairwise_judge"]]
                    read = round(prompt_tokens + 2 * out + rubric_tokens + JUDGE_FRAMING)
                    totals["judging"][i] += _cost(judge, 2 * read * n, 2 * 200 * n) or 0
    refiner = models[refiner_id]
    template_tokens = tokens.count_text(f"{prompt['template']}\n{prompt.get('system') or ''}")
    exemplars = min(REFINER_EXEMPLARS, len(cases))
    for i in (0, 1):
        reply = tokens.max_output_tokens(config["models"]["targets"][0].get("params") or {})
        reply = reply if i else math.ceil(reply * LOW_OUTPUT_SHARE)
        read = REFINER_FRAMING + template_tokens + rubric_tokens + exemplars * (
            reply + 100 + JUDGE_TOKENS_PER_CRITERION * criteria)
        write = template_tokens * 2 + REFINER_NOTE
        totals["refinement"][i] += _cost(refiner, read, write if i else write // 2) or 0
    max_iterations = int(config["stop"]["max_iterations"])
    low_iterations = math.ceil(max_iterations * LOW_ITERATION_SHARE)
    per_low = sum(v[0] for v in totals.values())
    per_high = sum(v[1] for v in totals.values())
    return {**empty, "low_micros": per_low * low_iterations,
            "high_micros": per_high * max_iterations,
            "iterations": {"low": low_iterations, "high": max_iterations},
            "per_iteration": {p: {"low_micros": v[0], "high_micros": v[1]}
                              for p, v in totals.items()},
            "cases": len(cases), "calls_per_iteration": calls, "complete": not unpriced,
            "unpriced_models": sorted(unpriced)}
