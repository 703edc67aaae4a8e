"""Default call parameters of a model, checked against what its provider accepts. Pure.

    check_params("anthropic", {"temperature": 1.5}) -> {"temperature": ["... 0 to 1 ..."]}

Rules (``family`` is a provider kind's ``params_family``: "openai", "anthropic", "google"
or "bedrock"): temperature 0..2 (anthropic and bedrock 0..1); max_tokens an integer
1..context_window (1..1,000,000 without one); top_p 0..1; frequency_penalty and
presence_penalty -2..2 and seed an integer (not for anthropic, nor bedrock, whose Converse
API has none of them); stop a list of at most 4 non-empty strings. A null value means "not
set" and is dropped; any other key is refused.
"""

from __future__ import annotations

import math
from typing import Any

from assay.core.errors import Invalid

MAX_TOKENS_CAP = 1_000_000
SEED_MIN, SEED_MAX = -(2**63), 2**63 - 1
STOP_MAX, STOP_LENGTH = 4, 200
KNOWN = ("temperature", "max_tokens", "top_p", "frequency_penalty", "presence_penalty",
         "seed", "stop")
ANTHROPIC_REFUSES = ("frequency_penalty", "presence_penalty", "seed")
# family -> (what its models refuse, their highest temperature, the provider's name)
FAMILIES = {"anthropic": (ANTHROPIC_REFUSES, 1, "Anthropic"),
            "bedrock": (ANTHROPIC_REFUSES, 1, "Bedrock"),
            "google": ((), 2, "Google"), "openai": ((), 2, "OpenAI")}


def _number(value: Any, low: float, high: float) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return "Must be a number."
    if not math.isfinite(value):
        return "Must be a finite number."
    if not low <= value <= high:
        return f"Must be between {low:g} and {high:g}."
    return None


def _integer(value: Any, low: int, high: int, why: str = "") -> str | None:
    if isinstance(value, bool) or not isinstance(value, int):
        return "Must be an integer."
    if not low <= value <= high:
        return f"Must be between {low} and {high}{why}."
    return None


def _stop(value: Any) -> str | None:
    if not isinstance(value, list):
        return "Must be a list of strings."
    if len(value) > STOP_MAX:
        return f"At most {STOP_MAX} stop sequences."
    for item in value:
        if not isinstance(item, str) or not item:
            return "Each stop sequence must be a non-empty string."
        if len(item) > STOP_LENGTH:
            return f"Each stop sequence is at most {STOP_LENGTH} characters."
    return None


def check_params(family: str, params: dict[str, Any],
                 context_window: int | None = None) -> dict[str, list[str]]:
    """Field errors by parameter name; empty when the parameters are fine."""
    refuses, top_temperature, provider = FAMILIES.get(family, FAMILIES["openai"])
    errors: dict[str, list[str]] = {}
    for name, value in params.items():
        problem: str | None
        if name not in KNOWN:
            problem = f"Unknown parameter (allowed: {', '.join(KNOWN)})."
        elif value is None:
            continue
        elif name in refuses:
            problem = f"{provider} models do not take {name}."
        elif name == "temperature":
            problem = _number(value, 0, top_temperature)
            if problem and top_temperature < 2 and _number(value, 0, 2) is None:
                problem = f"Must be between 0 and 1 for {provider} models."
        elif name == "top_p":
            problem = _number(value, 0, 1)
        elif name in ("frequency_penalty", "presence_penalty"):
            problem = _number(value, -2, 2)
        elif name == "max_tokens":
            high = context_window or MAX_TOKENS_CAP
            problem = _integer(value, 1, high,
                               " (the model's context window)" if context_window else "")
        elif name == "seed":
            problem = _integer(value, SEED_MIN, SEED_MAX)
        else:  # stop
            problem = _stop(value)
        if problem:
            errors[name] = [problem]
    return errors


def clean_params(params: dict[str, Any]) -> dict[str, Any]:
    """The parameters as stored: nulls dropped, in a stable order."""
    return {name: params[name] for name in KNOWN if params.get(name) is not None}


def validate_params(family: str, params: dict[str, Any],
                    context_window: int | None = None) -> dict[str, Any]:
    """The cleaned parameters, or ``Invalid`` with errors under ``json.params``."""
    errors = check_params(family, params, context_window)
    if errors:
        raise Invalid("Some parameters are not valid for this provider",
                      {"json": {"params": errors}})
    return clean_params(params)
