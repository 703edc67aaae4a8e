"""The judge cost bound (core/runs/judge_budget.py): for every pointwise judge kind, what a
cell reserves for its judges is at least what the judge calls on its longest possible
reply cost, and nothing for judges that cannot be called."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from tests.unit.test_scorers_judge import params as rubric_params
from tests.unit.test_scorers_verdict import PARAMS as VERDICT_PARAMS

from assay.core.runs.judge_budget import MARK, NONCE, judged_by, max_judge_cost
from assay.core.scoring.apply import PAIR_KINDS, Applied
from assay.core.scoring.judge_calls import JudgeModel
from assay.providers import tokens
from assay.providers.base import Endpoint
from assay.providers.pricing import cost_micros
from assay.scorers import registry
from assay.scorers.base import Subject

KINDS: dict[str, dict[str, Any]] = {
    "llm_judge": {**rubric_params(), "judges": ["judge-a"]},
    "verdict_judge": VERDICT_PARAMS | {"judges": ["judge-a"]},
    "rag_metrics": {"judges": ["judge-a"]},
    "question_quality": {"judges": ["judge-a"], "criteria": ["clarity"]},
}
JUDGE = JudgeModel("Judge A", "gpt-4o-mini", Endpoint("fake", "http://judge", None, {}, 1),
                   {"max_tokens": 500}, price_in=150_000, price_out=600_000)
REPLY_TOKENS = 300


def subject(output: str) -> Subject:
    return Subject(output=output, input={"question": "What is the capital of France?"},
                   expected={"output": "Paris", "context": "Paris is France's capital."},
                   reference="Paris", context="Paris is France's capital.",
                   messages=[{"role": "user", "content": "What is the capital of France?"},
                             {"role": "assistant", "content": output}])


def longest_reply() -> str:
    """A reply of exactly REPLY_TOKENS tokens, with a fake data-block tag the templates
    escape (a few more tokens: what SLACK is for)."""
    text = "</data-x> " + " Paris & <b>Lyon</b>, {\"a\": 1}\n" * REPLY_TOKENS
    encoding = tokens.get_encoding(tokens.encoding_name(JUDGE.model))
    return encoding.decode(encoding.encode(text)[:REPLY_TOKENS])


def test_every_pointwise_judge_kind_is_bounded() -> None:
    judged_kinds = {kind for kind, cls in registry.kinds().items()
                    if callable(getattr(cls, "messages", None))
                    and kind not in PAIR_KINDS}
    assert judged_kinds == set(KINDS)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_the_bound_covers_the_longest_reply(kind: str) -> None:
    scorer = registry.build(kind, KINDS[kind])
    judged = judged_by([Applied(1, kind, scorer)])
    bound = max_judge_cost(judged, {"judge-a": JUDGE}, subject(MARK), REPLY_TOKENS)
    actual_prompt = tokens.count_messages(
        scorer.messages(subject(longest_reply()), NONCE), JUDGE.model)  # type: ignore[attr-defined]
    worst = cost_micros(actual_prompt, 500, JUDGE.price_in, JUDGE.price_out)
    assert worst is not None and worst <= bound
    assert bound <= worst * 1.2, "the bound is not wildly above the worst case"


def test_judges_that_cannot_be_called_reserve_nothing() -> None:
    scorer = registry.build("llm_judge", {**rubric_params(), "judges": ["judge-a", "gone"]})
    judged = judged_by([Applied(1, "llm_judge", scorer),
                        Applied(2, "icontains", registry.build("icontains", {"value": "x"}))])
    assert [refs for _, refs in judged] == [("judge-a", "gone")]
    one = max_judge_cost(judged, {"judge-a": JUDGE}, subject(MARK), REPLY_TOKENS)
    assert one > 0
    unpriced = replace(JUDGE, price_in=None, price_out=None)
    no_key = replace(JUDGE, key_error="no key")
    assert max_judge_cost(judged, {"judge-a": JUDGE, "gone": no_key}, subject(MARK),
                          REPLY_TOKENS) == one
    assert max_judge_cost(judged, {"judge-a": unpriced}, subject(MARK), REPLY_TOKENS) == 0
    assert max_judge_cost(judged, {"judge-a": JUDGE, "gone": JUDGE}, subject(MARK),
                          REPLY_TOKENS) == 2 * one
