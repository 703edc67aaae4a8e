"""What a planned run will cost, as a range (edison FR-EC-005 and FR-EC-007, made exact
where it can be).

Input tokens are counted, not guessed: every case's messages with the model's tokenizer
and OpenAI's per-message framing. Output tokens are the uncertain part: the high end
assumes every call writes its full `max_tokens` (the model's, else DEFAULT_MAX_TOKENS), the
low end LOW_OUTPUT_SHARE of it. Unpriced models are listed and left out of the totals,
never counted as free; `complete` says whether the totals cover every model.
"""

from __future__ import annotations

import math
from typing import Any

from sqlalchemy.orm import Session

from assay.core.datasets.service import get_dataset, latest_version, version_cases
from assay.core.llm.service import models_by_id
from assay.core.projects.models import Project
from assay.core.runs.service import case_messages
from assay.providers import tokens
from assay.providers.pricing import cost_micros, is_priced

DEFAULT_MAX_TOKENS = 1024  # a model without max_tokens: the Anthropic adapter's default too
LOW_OUTPUT_SHARE = 0.25  # typical replies use about a quarter of their max_tokens


def max_output_tokens(params: dict[str, Any]) -> int:
    for name in ("max_tokens", "max_completion_tokens"):
        value = params.get(name)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return DEFAULT_MAX_TOKENS


def estimate_run(session: Session, project: Project, dataset_id: int, model_ids: list[int],
                 repeats: int = 1) -> dict[str, Any]:
    dataset = get_dataset(session, project, dataset_id)
    version = latest_version(session, dataset.id)
    models = models_by_id(session, project, list(dict.fromkeys(model_ids)))
    chats = [case_messages(case) for case in version_cases(session, version.id)]
    prompt_tokens: dict[str, int] = {}  # per encoding: models sharing one count once
    per_model, unpriced = [], []
    low_total = high_total = 0
    for model in models:
        encoding = tokens.encoding_name(model.model)
        if encoding not in prompt_tokens:
            prompt_tokens[encoding] = sum(tokens.count_messages(chat, model.model)
                                          for chat in chats)
        calls = len(chats) * repeats
        input_tokens = prompt_tokens[encoding] * repeats
        high_out = max_output_tokens(model.params or {})
        low_out = math.ceil(high_out * LOW_OUTPUT_SHARE)
        price_in, price_out = model.input_price_per_mtok_micros, model.output_price_per_mtok_micros
        low = cost_micros(input_tokens, calls * low_out, price_in, price_out)
        high = cost_micros(input_tokens, calls * high_out, price_in, price_out)
        priced = is_priced(price_in, price_out)
        if low is not None and high is not None:
            low_total += low
            high_total += high
        else:
            unpriced.append(model.id)
        per_model.append({
            "model_id": model.id, "name": model.name, "calls": calls,
            "input_tokens": input_tokens, "output_tokens_low": calls * low_out,
            "output_tokens_high": calls * high_out, "low_micros": low, "high_micros": high,
            "priced": priced})
    return {
        "dataset_version_id": version.id, "cases": len(chats), "repeats": repeats,
        "calls": len(chats) * repeats * len(models), "low_micros": low_total,
        "high_micros": high_total, "complete": not unpriced, "per_model": per_model,
        "unpriced_models": unpriced,
        "assumptions": {"low_output_share": LOW_OUTPUT_SHARE,
                        "default_max_tokens": DEFAULT_MAX_TOKENS,
                        "tokens_per_message": tokens.TOKENS_PER_MESSAGE},
    }
