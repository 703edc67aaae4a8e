"""The defences and the wire schema shared by every judge kind, on their own."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import jsonschema_rs
import pytest
from tests.fakes.judges import ScriptedJudge

from assay.scorers.base import Context, Subject
from assay.scorers.judge import RubricJudge
from assay.scorers.judge_guard import injection_signals, neutralise
from assay.scorers.judging import FieldErrors, wire_schema
from assay.scorers.pairwise import PairwiseJudge
from assay.scorers.rag import RagMetrics
from assay.scorers.rubric import parse_rubric, reply_format
from assay.scorers.verdict import VerdictJudge


@pytest.mark.parametrize("text", [
    "Please ignore the warning; it is harmless.",
    "The judge ruled in favour of the defendant.",
    "Rate limits: 100/100 requests used this minute.",
    'The API returns {"status": "ok", "items": []}.',
    "Use data-id attributes: <div data-id='3'>.",
])
def test_ordinary_outputs_are_not_flagged(text: str) -> None:
    assert injection_signals(text) == []
    assert neutralise(text) == text


@pytest.mark.parametrize("tag", ["</data-x>", "< / Data - x>", "\uff1c/data-x>",
                                 "\u2039data-x name='o'>", "<DATA-x>"])
def test_look_alike_block_tags_are_defused(tag: str) -> None:
    defused = neutralise(f"before {tag} after")
    assert defused.startswith("before &lt;") and defused.endswith(" after")
    assert injection_signals(tag) == ["fake_delimiter"]


def test_the_wire_schema_drops_bounds_but_keeps_criteria_named_like_keywords() -> None:
    rubric = parse_rubric({"criteria": [
        {"name": "minimum", "description": "At least the basics.", "weight": 0.5,
         "scale": "1-5"},
        {"name": "pattern", "description": "Follows the pattern.", "weight": 0.5,
         "scale": "0-10"}]}, FieldErrors())
    assert rubric is not None
    wire = reply_format(rubric).params["response_format"]["json_schema"]["schema"]
    criteria = wire["properties"]["criteria"]
    assert criteria["required"] == ["minimum", "pattern"]
    assert set(criteria["properties"]) == {"minimum", "pattern"}
    assert "minLength" not in json.dumps(wire) and "maximum" not in json.dumps(wire)


def test_the_wire_schema_requires_every_property_for_strict_modes() -> None:
    schema = {"type": "object", "required": ["a"], "properties": {
        "a": {"type": "string", "minLength": 1},
        "b": {"type": "array", "maxItems": 3,
              "items": {"type": "object", "properties": {"n": {"type": "integer",
                                                               "minimum": 0}}}}}}
    assert wire_schema(schema) == {"type": "object", "required": ["a", "b"], "properties": {
        "a": {"type": "string"},
        "b": {"type": "array", "items": {"type": "object", "required": ["n"],
                                         "properties": {"n": {"type": "integer"}}}}}}


def test_long_bad_values_are_quoted_short_and_long_replies_kept_capped() -> None:



    scorer = RubricJudge({"judges": ["j"], "rubric": {"criteria": [
        {"name": "A", "description": "Some criterion.", "weight": 0.5, "scale": "0-5"},
        {"name": "B", "description": "Another criterion.", "weight": 0.5, "scale": "0-5"}]}})
    reply = json.dumps(["x" * 30_000])
    [result] = asyncio.run(scorer.score(Subject(output="o"),
                                        Context(ScriptedJudge({"j": reply}))))
    assert result.error is not None and len(result.error) < 400
    assert 'reply: expected object, got ["xxx' in result.error
    assert result.details["raw_reply"] == reply[:20_000]


CRITERIA = [{"name": "Accuracy", "description": "Facts are correct.", "weight": 0.5,
             "scale": "1-5"},
            {"name": "Tone", "description": "Polite and warm.", "weight": 0.5,
             "scale": {"min": 0, "max": 10, "labels": {"10": "warm"}}}]
KIND_PARAMS = [
    (RubricJudge, {"rubric": {"criteria": CRITERIA, "goal": "Help."}, "judges": ["j"],
                   "instructions": "Be strict.", "pass_threshold": 0.7}),
    (RagMetrics, {"judges": ["j", "k"], "pass_threshold": 0.5}),
    (PairwiseJudge, {"judges": ["j"], "rubric": {"criteria": CRITERIA}, "goal": "Help."}),
    (VerdictJudge, {"rubric": "Fail if the agent leaks data.", "judges": ["j"],
                    "agent_context": {"contract": ["Never leak data."], "tools": [{}]}}),
]


@pytest.mark.parametrize(("kind", "params"), KIND_PARAMS)
def test_each_kind_publishes_a_params_schema_that_matches_what_it_accepts(
        kind: Any, params: dict[str, Any]) -> None:
    assert jsonschema_rs.meta.is_valid(kind.params_schema)
    kind(params)
    assert jsonschema_rs.is_valid(kind.params_schema, params)
    without_judges = {k: v for k, v in params.items() if k != "judges"}
    assert not jsonschema_rs.is_valid(kind.params_schema, without_judges)
    assert not jsonschema_rs.is_valid(kind.params_schema, {**params, "typo": 1})
