"""Question quality (question_quality): judges rate a dataset's question on chosen 1-10
criteria and/or a free-form instruction, on the shared strict-JSON judge path."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from tests.fakes.judges import ScriptedJudge, rubric_reply

from assay.scorers import registry
from assay.scorers.base import Context, ParamsError, ScoreResult, Subject
from assay.scorers.judging import NO_OUTPUT
from assay.scorers.question_quality import NO_QUESTION, QuestionQuality, overall_rating

QUESTION = Subject(output="Which river flows through Vienna, Bratislava and Budapest?",
                   input={"question": "Which river flows through Vienna, Bratislava and "
                                      "Budapest?"},
                   reference="The Danube.", tags=("geography", "rivers"), difficulty="easy")


def score(scorer: QuestionQuality, judge: ScriptedJudge | None,
          subject: Subject = QUESTION) -> list[ScoreResult]:
    return asyncio.run(scorer.score(subject, Context(judge=judge)))


def errors_of(raw: dict[str, Any]) -> dict[str, list[str]]:
    with pytest.raises(ParamsError) as caught:
        QuestionQuality(raw)
    return caught.value.errors


@pytest.mark.parametrize(("raw", "path"), [
    ({"criteria": ["clarity"]}, "judges"),
    ({"judges": [], "criteria": ["clarity"]}, "judges"),
    ({"judges": ["j"]}, "criteria"),  # neither a criterion nor an instruction
    ({"judges": ["j"], "criteria": []}, "criteria"),
    ({"judges": ["j"], "criteria": "clarity"}, "criteria"),
    ({"judges": ["j"], "criteria": ["clarity", "beauty"]}, "criteria[1]"),
    ({"judges": ["j"], "criteria": ["clarity", "Clarity"]}, "criteria[1]"),
    ({"judges": ["j"], "criteria": [7]}, "criteria[0]"),
    ({"judges": ["j"], "instruction": "x" * 4001}, "instruction"),
    ({"judges": ["j"], "instruction": "   "}, "criteria"),  # blank: no instruction
    ({"judges": ["j"], "criteria": ["clarity"], "rubric": {}}, "rubric"),
])
def test_bad_params_name_their_field(raw: dict[str, Any], path: str) -> None:
    assert path in errors_of(raw)


def test_registered_as_a_kind() -> None:
    built = registry.build("question_quality", {"judges": ["j"], "criteria": ["clarity"]})
    assert isinstance(built, QuestionQuality) and built.judges == ("j",)


def test_ratings_per_judge_value_is_the_mean_of_the_normalised_criteria() -> None:
    judge = ScriptedJudge({
        "a": rubric_reply({"clarity": 10, "difficulty": 4}, summary="Clear but easy."),
        "b": rubric_reply({"clarity": 7, "difficulty": 1})})
    first, second = score(QuestionQuality({"judges": ["a", "b"],
                                           "criteria": ["clarity", "difficulty"]}), judge)
    assert first.judge_model == "a" and first.error is None
    assert first.criteria == {"clarity": 1.0, "difficulty": pytest.approx(1 / 3)}
    assert first.value == pytest.approx((1.0 + 1 / 3) / 2)
    assert first.rationale == "Clear but easy."
    assert first.details["scores"] == {"clarity": 10, "difficulty": 4}
    assert first.details["overall"] == 7.0  # the mean of the ratings: no overall criterion
    assert first.details["rationales"]["clarity"] == "clarity is fine."
    assert second.value == pytest.approx((6 / 9 + 0) / 2)
    assert second.details["overall"] == 4.0


def test_the_overall_criterion_is_the_overall_rating() -> None:
    judge = ScriptedJudge({"a": rubric_reply({"clarity": 9, "overall": 3})})
    [result] = score(QuestionQuality({"judges": ["a"], "criteria": ["clarity", "overall"]}),
                     judge)
    assert result.details["overall"] == 3.0
    assert overall_rating({"clarity": 9, "overall": 3}) == 3.0
    assert overall_rating({"clarity": 9, "relevance": 4}) == 6.5


def test_the_judge_sees_the_question_as_data_and_the_criteria_on_1_to_10() -> None:
    judge = ScriptedJudge({"a": rubric_reply({"clarity": 8, "relevance": 6,
                                              "originality": 2})})
    score(QuestionQuality({"judges": ["a"],
                           "criteria": ["clarity", "relevance", "originality"],
                           "instruction": "The dataset tests European geography."}), judge)
    call = judge.calls[0]
    assert call.params["temperature"] == 0.3 and call.params["seed"] == 42
    assert call.params["response_format"]["json_schema"]["name"] == "assay_question_quality"
    data = call.blocks()
    assert data["output under test"] == QUESTION.output
    assert data["reference answer"] == "The Danube."
    assert data["tags"] == "geography, rivers" and data["stated difficulty"] == "easy"
    instructions = call.outside_blocks()
    assert "it is a question (or task) from an evaluation" in instructions
    assert "do not answer it" in instructions
    for name in ("clarity", "relevance", "originality"):
        assert f'"{name}" (weight 0.333333, scale 1-10)' in instructions
    assert '"difficulty"' not in instructions
    assert "The dataset tests European geography." in instructions


def test_an_instruction_alone_asks_for_one_overall_rating() -> None:
    judge = ScriptedJudge({"a": rubric_reply({"overall": 8}, summary="A fair question.")})
    scorer = QuestionQuality({"judges": ["a"], "criteria": [],
                              "instruction": "Rate the quality of this question from 1-10 "
                                             "and explain why."})
    [result] = score(scorer, judge)
    assert scorer.criteria == ("overall",)
    assert result.criteria == {"overall": pytest.approx(7 / 9)}
    assert result.details["overall"] == 8.0 and result.rationale == "A fair question."
    assert "Rate the quality of this question" in judge.calls[0].outside_blocks()


def test_a_rating_outside_1_to_10_is_a_failed_score_with_the_reason() -> None:
    judge = ScriptedJudge({"a": rubric_reply({"clarity": 11}), "b": "I like it."})
    first, second = score(QuestionQuality({"judges": ["a", "b"], "criteria": ["clarity"]}),
                          judge)
    assert first.value is None and "11 outside 1-10" in (first.error or "")
    assert second.value is None and "not JSON" in (second.error or "")
    assert second.details["raw_reply"] == "I like it."


def test_nothing_to_judge_fails_each_judge_without_calling_it() -> None:
    scorer = QuestionQuality({"judges": ["a", "b"], "criteria": ["clarity"]})
    judge = ScriptedJudge({})
    blank = score(scorer, judge, Subject(output="  \n"))
    assert [(r.judge_model, r.error) for r in blank] == [("a", NO_QUESTION),
                                                        ("b", NO_QUESTION)]
    failed_call = score(scorer, judge, Subject(output=None))
    assert {r.error for r in failed_call} == {NO_OUTPUT}
    assert judge.calls == []
    unreachable = score(scorer, None)
    assert all(r.value is None and "judge calls" in (r.error or "") for r in unreachable)
