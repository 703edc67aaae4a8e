"""The refiner: its prompt (weak criteria, refinement-set exemplars, judge rationales), the
strict reading of its reply, bounded retries with the error fed back, and its spend held
inside the experiment's budget. Calls go to the fake provider through LLMClient."""

from __future__ import annotations

import asyncio
import difflib

import pytest

from assay.core.experiments import refiner as r
from assay.providers.base import Endpoint
from assay.providers.client import LLMClient, RetryPolicy
from assay.providers.fake import FakeProviderThread
from assay.providers.fake_config import FakeConfig, Script

PROMPT = "\n".join([
    "You are a support agent for Acme.",
    "Answer the question: {{question}}",
    "Be brief.",
    "Cite the manual.",
    "Do not guess.",
    "Never share prices.",
    "Keep a calm tone.",
    "Sign with the team's name.",
] + [f"Rule {i}: stay on the topic of the customer's own product." for i in range(1, 13)]) + "\n"
RUBRIC = [
    {"name": "helpfulness", "description": "Solves the problem", "weight": 0.4,
     "scale": {"min": 1, "max": 5}},
    {"name": "empathy", "description": "Acknowledges the customer", "weight": 0.3,
     "scale": {"min": 1, "max": 5}},
    {"name": "accuracy", "description": "States only facts", "weight": 0.3,
     "scale": {"min": 1, "max": 5}},
]
GOOD_DIFF = "".join(difflib.unified_diff(
    PROMPT.splitlines(keepends=True),
    PROMPT.replace("Be brief.", "Be brief, and acknowledge how the customer feels.")
    .splitlines(keepends=True), "a/prompt.txt", "b/prompt.txt"))
GOOD = f"<diff>\n{GOOD_DIFF}</diff>\n\n<note>\nAdds an acknowledgement for empathy.\n</note>"
BAD_DIFF = GOOD.replace("Be brief.", "Be short.")  # context not in the prompt


class Purse:
    def __init__(self, cap: int | None) -> None:
        self.cap, self.spent, self.reserved, self.calls = cap, 0, 0, 0

    def reserve(self, micros: int) -> bool:
        if self.cap is not None and self.spent + self.reserved + micros > self.cap:
            return False
        self.reserved += micros
        return True

    def settle(self, reserved: int, spent: int, tokens_in: int, tokens_out: int,
               calls: int) -> None:
        self.reserved -= reserved
        self.spent += spent
        self.calls += 1


def exemplar(case_id: int, empathy: float, accuracy: float = 0.5) -> r.Exemplar:
    return r.Exemplar(case_id, {"question": f"q{case_id}"}, f"answer {case_id}",
                      {"helpfulness": 0.9, "empathy": empathy, "accuracy": accuracy},
                      {"empathy": f"cold reply to q{case_id}", "accuracy": "fine"})


def brief(exemplars: list[r.Exemplar] | None = None) -> r.Brief:
    weak = r.weak_criteria({"helpfulness": 0.9, "empathy": 0.2, "accuracy": 0.5}, RUBRIC)
    return r.Brief("Answer support questions well", RUBRIC, PROMPT, weak,
                   exemplars if exemplars is not None else [exemplar(1, 0.0)])


def model(fake: FakeProviderThread) -> r.RefinerModel:
    return r.RefinerModel(Endpoint("openai", fake.url, "sk-fake", {}, None), "fake-smart",
                          {"temperature": 0}, 2_500_000, 10_000_000)


def run(scripts: list[Script], purse: Purse, the_brief: r.Brief | None = None) -> r.Outcome:
    async def go(fake: FakeProviderThread) -> r.Outcome:
        async with LLMClient(retry=RetryPolicy(attempts=1)) as client:
            return await r.refine(client, model(fake), the_brief or brief(), purse)

    with FakeProviderThread(FakeConfig(latency_ms=0, scripts=scripts)) as fake:
        return asyncio.run(go(fake))


def test_weak_criteria_are_the_bottom_two() -> None:
    weak = r.weak_criteria({"helpfulness": 0.9, "empathy": 0.2, "accuracy": 0.5}, RUBRIC)
    assert [w.name for w in weak] == ["empathy", "accuracy"]
    assert weak[0].on_scale == pytest.approx(1.8)


def test_exemplars_come_from_the_refinement_set_only_worst_first() -> None:
    weak = r.weak_criteria({"helpfulness": 0.9, "empathy": 0.2, "accuracy": 0.5}, RUBRIC)
    candidates = [exemplar(i, empathy=i / 20) for i in range(1, 15)] + [exemplar(99, 0.0, 0.0)]
    picked = r.failing_exemplars(candidates, weak, refinement_cases=set(range(1, 15)))
    assert len(picked) == r.MAX_EXEMPLARS
    assert [e.case_id for e in picked] == list(range(1, 11))
    assert 99 not in {e.case_id for e in picked}  # a held-out case never reaches the refiner
    text = r.render(brief(picked))
    assert "cold reply to q1" in text and "q99" not in text  # the rationales are the feedback
    assert "**empathy** (avg score: 1.80/5)" in text
    assert "{{question}}" in text and "# Prompt Refinement Task" in text


def test_parse_reply_is_strict() -> None:
    diff, note = r.parse_reply(GOOD)
    assert diff.startswith("--- a/prompt.txt") and note.startswith("Adds")
    for bad in ("no tags at all", "<diff>x</diff>", "<note>only a note</note>",
                "<diff>x</diff><note>  </note>"):
        with pytest.raises(r.ReplyError):
            r.parse_reply(bad)
    fenced = GOOD.replace("<diff>\n", "<diff>\n```diff\n").replace("</diff>", "```\n</diff>")
    assert r.parse_reply(fenced)[0] == diff


def test_a_valid_reply_is_a_suggestion_charged_to_the_purse() -> None:
    purse = Purse(cap=None)
    outcome = run([Script(pattern="Prompt Refinement Task", reply=GOOD)], purse)
    assert outcome.diff == GOOD_DIFF and outcome.attempts == 1
    assert "acknowledge how the customer feels" in (outcome.new_text or "")
    assert outcome.cost_micros > 0 and purse.spent == outcome.cost_micros
    assert purse.reserved == 0


def test_an_invalid_diff_is_retried_with_the_error_fed_back() -> None:
    purse = Purse(cap=None)
    scripts = [Script(pattern="could not be used: The diff does not apply", reply=GOOD),
               Script(pattern="Prompt Refinement Task", reply=BAD_DIFF)]
    outcome = run(scripts, purse)
    assert outcome.attempts == 2 and outcome.diff == GOOD_DIFF
    assert outcome.errors and "does not apply" in outcome.errors[0]
    assert purse.calls == 2


def test_after_the_last_attempt_there_is_no_suggestion_with_the_reason() -> None:
    outcome = run([Script(pattern="", reply="I think the prompt is fine.")], Purse(None))
    assert outcome.diff is None and outcome.attempts == r.MAX_ATTEMPTS
    assert outcome.reason is not None and "<diff>" in outcome.reason


def test_no_room_in_the_budget_means_no_call() -> None:
    purse = Purse(cap=10)
    outcome = run([Script(pattern="", reply=GOOD)], purse)
    assert outcome.diff is None and outcome.attempts == 0 and purse.spent == 0
    assert outcome.reason is not None and "Budget" in outcome.reason


def test_nothing_scored_means_nothing_to_refine() -> None:
    empty = r.Brief("Answer support questions well", RUBRIC, PROMPT, [], [])
    outcome = run([], Purse(None), empty)
    assert outcome.diff is None and outcome.attempts == 0 and outcome.reason
