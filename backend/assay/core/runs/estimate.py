"""What a planned run will cost, as a range (edison FR-EC-005 and FR-EC-007, made exact
where it can be).

Input tokens are counted, not guessed: every cell's rendered messages (prompt version,
few-shots, conversation turn and history) with the model's tokenizer and OpenAI's
per-message framing. Output tokens are the uncertain part: the high end
assumes every call writes its full `max_tokens` (the model's, else 1024), the
low end LOW_OUTPUT_SHARE of it. Unpriced models are listed and left out of the totals,
never counted as free; `complete` says whether the totals cover every model.
"""

from __future__ import annotations

import math
from typing import Any

from sqlalchemy.orm import Session

from assay.core.projects.models import Project
from assay.core.runs.planning import PlannedTarget, Resolved, RunSpec, resolve
from assay.core.runs.rendering import cell_messages, user_turns
from assay.core.runs.validation import collect_problems
from assay.providers import tokens
from assay.providers.pricing import cost_micros, is_priced

LOW_OUTPUT_SHARE = 0.25  # typical replies use about a quarter of their max_tokens


def _prompt_tokens(resolved: Resolved, target: PlannedTarget,
                   counted: dict[tuple[str, int | None], tuple[int, int]]) -> tuple[int, int]:
    """(calls, prompt tokens) of one repeat of a target over every case and turn, counted on
    the rendered messages; targets sharing an encoding and a prompt version count once."""
    assert target.model is not None
    key = (tokens.encoding_name(target.model.model),
           target.version.id if target.version else None)
    if key not in counted:
        parts, history = target.prompt_parts, resolved.spec.max_history_pairs
        calls = total = 0
        for _, data, _ in resolved.cases:
            for turn in range(user_turns(data)):
                calls += 1
                total += tokens.count_messages(cell_messages(data, parts, turn, history),
                                               target.model.model)
        counted[key] = (calls, total)
    return counted[key]


def estimate_run(session: Session, project: Project, spec: RunSpec) -> dict[str, Any]:
    """The cost range of a run of `spec`, per target and in total, with every reason it
    could not start (`problems`). Writes nothing."""
    resolved = resolve(session, project, spec)
    repeats = 1 if resolved.is_trace else spec.repeats
    counted: dict[tuple[str, int | None], tuple[int, int]] = {}
    per_target, unpriced = [], []
    low_total = high_total = calls_total = 0
    for target in resolved.targets:
        model = target.model
        if model is None:  # a recorded trace: nothing is called
            per_target.append({
                "label": target.label, "model_id": None, "calls": 0, "input_tokens": 0,
                "output_tokens_low": 0, "output_tokens_high": 0, "low_micros": 0,
                "high_micros": 0, "priced": True})
            continue
        calls, prompt_tokens = _prompt_tokens(resolved, target, counted)
        calls, input_tokens = calls * repeats, prompt_tokens * repeats
        high_out = tokens.max_output_tokens(target.effective_params)
        low_out = math.ceil(high_out * LOW_OUTPUT_SHARE)
        price_in, price_out = model.input_price_per_mtok_micros, model.output_price_per_mtok_micros
        low = cost_micros(input_tokens, calls * low_out, price_in, price_out)
        high = cost_micros(input_tokens, calls * high_out, price_in, price_out)
        if low is not None and high is not None:
            low_total += low
            high_total += high
        elif model.id not in unpriced:
            unpriced.append(model.id)
        calls_total += calls
        per_target.append({
            "label": target.label, "model_id": model.id, "calls": calls,
            "input_tokens": input_tokens, "output_tokens_low": calls * low_out,
            "output_tokens_high": calls * high_out, "low_micros": low, "high_micros": high,
            "priced": is_priced(price_in, price_out)})
    return {
        "dataset_version_id": resolved.version.id, "cases": resolved.version.case_count,
        "repeats": repeats, "calls": calls_total, "low_micros": low_total,
        "high_micros": high_total, "complete": not unpriced, "per_target": per_target,
        "unpriced_models": unpriced,
        "assumptions": {"low_output_share": LOW_OUTPUT_SHARE,
                        "default_max_tokens": tokens.DEFAULT_MAX_OUTPUT,
                        "tokens_per_message": tokens.TOKENS_PER_MESSAGE},
        "problems": collect_problems(resolved),
    }
