"""Default parameters per provider family: every rule of core/llm/params.py."""

from __future__ import annotations

from typing import Any

import pytest

from assay.core.errors import Invalid
from assay.core.llm.params import check_params, clean_params, validate_params

GOOD = {"temperature": 0.7, "max_tokens": 512, "top_p": 0.9, "frequency_penalty": -0.5,
        "presence_penalty": 1.5, "seed": 42, "stop": ["\n\n", "END"]}


def test_good_parameters_pass_and_nulls_are_dropped() -> None:
    assert validate_params("openai", GOOD) == GOOD
    assert validate_params("openai", {"temperature": None, "max_tokens": 1}) == {"max_tokens": 1}
    assert validate_params("anthropic", {"temperature": 1, "top_p": 0, "stop": []}) == \
        {"temperature": 1, "top_p": 0, "stop": []}
    assert clean_params({"seed": 1, "temperature": 0}) == {"temperature": 0, "seed": 1}


@pytest.mark.parametrize(("family", "params", "field", "fragment"), [
    ("openai", {"temperature": -0.1}, "temperature", "between 0 and 2"),
    ("openai", {"temperature": 2.01}, "temperature", "between 0 and 2"),
    ("anthropic", {"temperature": 1.5}, "temperature", "0 and 1 for Anthropic"),
    ("anthropic", {"temperature": 3}, "temperature", "between 0 and 1"),
    ("openai", {"temperature": "0.5"}, "temperature", "a number"),
    ("openai", {"temperature": True}, "temperature", "a number"),
    ("openai", {"temperature": float("nan")}, "temperature", "finite"),
    ("openai", {"max_tokens": 0}, "max_tokens", "between 1 and 1000000"),
    ("openai", {"max_tokens": 1_000_001}, "max_tokens", "between 1 and 1000000"),
    ("openai", {"max_tokens": 2.5}, "max_tokens", "an integer"),
    ("openai", {"top_p": 1.01}, "top_p", "between 0 and 1"),
    ("openai", {"top_p": -1}, "top_p", "between 0 and 1"),
    ("openai", {"frequency_penalty": -2.5}, "frequency_penalty", "between -2 and 2"),
    ("openai", {"presence_penalty": 2.5}, "presence_penalty", "between -2 and 2"),
    ("anthropic", {"frequency_penalty": 0}, "frequency_penalty", "do not take"),
    ("anthropic", {"presence_penalty": 0.1}, "presence_penalty", "do not take"),
    ("anthropic", {"seed": 1}, "seed", "do not take"),
    ("openai", {"seed": 1.0}, "seed", "an integer"),
    ("openai", {"seed": 2**63}, "seed", "between"),
    ("openai", {"stop": "END"}, "stop", "a list"),
    ("openai", {"stop": ["a", "b", "c", "d", "e"]}, "stop", "At most 4"),
    ("openai", {"stop": [""]}, "stop", "non-empty"),
    ("openai", {"stop": [1]}, "stop", "non-empty string"),
    ("openai", {"stop": ["x" * 201]}, "stop", "at most 200"),
    ("openai", {"logit_bias": {}}, "logit_bias", "Unknown parameter"),
    ("openai", {"top_k": None}, "top_k", "Unknown parameter"),
])
def test_each_rule(family: str, params: dict[str, Any], field: str, fragment: str) -> None:
    errors = check_params(family, params)
    assert list(errors) == [field]
    assert fragment in errors[field][0], errors
    with pytest.raises(Invalid) as info:
        validate_params(family, params)
    assert info.value.errors == {"json": {"params": errors}}


def test_max_tokens_is_bounded_by_the_context_window() -> None:
    assert check_params("openai", {"max_tokens": 8192}, context_window=8192) == {}
    errors = check_params("openai", {"max_tokens": 8193}, context_window=8192)
    assert "between 1 and 8192 (the model's context window)" in errors["max_tokens"][0]


def test_every_bad_parameter_is_reported_at_once() -> None:
    errors = check_params("anthropic", {"temperature": 1.5, "seed": 3, "top_p": 2, "x": 1})
    assert set(errors) == {"temperature", "seed", "top_p", "x"}
