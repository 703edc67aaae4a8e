"""Reference-check scorers: every kind's pass and fail, its edge cases, and a ParamsError
naming the field for every bad parameter."""

from __future__ import annotations

import asyncio
from typing import Any

import jsonschema_rs
import pytest

from assay.providers.tokens import count_text
from assay.scorers import reference_regex
from assay.scorers.base import Context, ParamsError, ScoreResult, Subject
from assay.scorers.reference import SCORERS

# The fewest parameters each kind accepts.
MINIMAL: dict[str, dict[str, Any]] = {
    "equals": {}, "contains": {"value": "a"}, "icontains": {"value": "a"},
    "contains_all": {"values": ["a"]}, "contains_any": {"values": ["a"]},
    "regex": {"pattern": "a"}, "starts_with": {"value": "a"}, "is_json": {},
    "json_schema": {"schema": {"type": "object"}}, "key_points": {"points": ["a"]},
    "must_include": {"terms": ["a"]}, "must_not_include": {"terms": ["a"]},
    "length": {"max": 10}, "latency": {"max_ms": 100}, "cost": {"max_micros": 100},
    "similarity": {"value": "a"},
}


def score(kind: str, params: dict[str, Any], output: str | None = "", **fields: Any
          ) -> ScoreResult:
    scorer = SCORERS[kind](params)
    results = asyncio.run(scorer.score(Subject(output=output, **fields), Context()))
    assert len(results) == 1
    return results[0]


def params_error(kind: str, params: Any) -> dict[str, list[str]]:
    with pytest.raises(ParamsError) as caught:
        SCORERS[kind](params)
    return caught.value.errors


def test_every_kind_is_listed_under_its_name_and_needs_no_judge() -> None:
    assert set(SCORERS) == set(MINIMAL)
    for kind, cls in SCORERS.items():
        assert cls.kind == kind
        assert cls(MINIMAL[kind]).judges == ()


@pytest.mark.parametrize("kind", sorted(MINIMAL))
def test_params_schema_is_json_schema_that_accepts_the_minimal_params(kind: str) -> None:
    schema = SCORERS[kind].params_schema
    assert jsonschema_rs.meta.is_valid(schema)
    validator = jsonschema_rs.validator_for(schema)
    assert validator.is_valid(MINIMAL[kind])
    assert not validator.is_valid({**MINIMAL[kind], "surprise": 1})
    assert schema["description"]


@pytest.mark.parametrize("kind", sorted(MINIMAL))
def test_a_failed_call_gives_a_failed_score(kind: str) -> None:
    result = score(kind, MINIMAL[kind], None, reference="a", latency_ms=1, cost_micros=1)
    assert result.value is None and result.passed is None
    assert result.error is not None and "call failed" in result.error


@pytest.mark.parametrize("kind", sorted(MINIMAL))
def test_unknown_fields_and_non_objects_are_refused(kind: str) -> None:
    errors = params_error(kind, {**MINIMAL[kind], "valeu": "x"})
    assert list(errors) == ["valeu"] and "Unknown field" in errors["valeu"][0]
    assert params_error(kind, ["not", "an", "object"]) == {"params": ["must be an object"]}


@pytest.mark.parametrize(("kind", "params", "fields", "value", "passed"), [
    ("equals", {}, {"output": "  Paris\n", "reference": "Paris"}, 1.0, True),
    ("equals", {}, {"output": "paris", "reference": "Paris"}, 0.0, False),
    ("equals", {"case_sensitive": False}, {"output": "PARİS", "reference": "parİs"}, 1.0, True),
    ("equals", {"case_sensitive": False}, {"output": "STRASSE", "reference": "straße"}, 1.0,
     True),
    ("equals", {"strip": False}, {"output": " Paris", "reference": "Paris"}, 0.0, False),
    ("equals", {"value": "42"}, {"output": "42", "reference": "other"}, 1.0, True),
    ("equals", {"value": ""}, {"output": "  "}, 1.0, True),
    ("contains", {"value": "Paris"}, {"output": "It is Paris."}, 1.0, True),
    ("contains", {"value": "Paris"}, {"output": "It is paris."}, 0.0, False),
    ("contains", {"value": "Paris"}, {"output": ""}, 0.0, False),
    ("icontains", {"value": "PARIS"}, {"output": "It is paris."}, 1.0, True),
    ("icontains", {"value": "Émile"}, {"output": "by ÉMILE zola"}, 1.0, True),
    ("icontains", {"value": "Rome"}, {"output": "It is paris."}, 0.0, False),
    ("contains_all", {"values": ["a", "b"]}, {"output": "b then a"}, 1.0, True),
    ("contains_all", {"values": ["a", "B"]}, {"output": "b then a"}, 0.0, False),
    ("contains_all", {"values": ["a", "B"], "case_sensitive": False}, {"output": "b a"}, 1.0,
     True),
    ("contains_any", {"values": ["x", "a"]}, {"output": "b then a"}, 1.0, True),
    ("contains_any", {"values": ["x", "y"]}, {"output": "b then a"}, 0.0, False),
    ("starts_with", {"value": "Yes"}, {"output": "\n Yes, it is."}, 1.0, True),
    ("starts_with", {"value": "Yes", "strip": False}, {"output": " Yes"}, 0.0, False),
    ("starts_with", {"value": "yes"}, {"output": "Yes"}, 0.0, False),
    ("starts_with", {"value": "yes", "case_sensitive": False}, {"output": "Yes"}, 1.0, True),
    ("starts_with", {"value": "No"}, {"output": "Yes. No."}, 0.0, False),
    ("regex", {"pattern": r"^\d{3}-\d{4}$"}, {"output": "555-1234"}, 1.0, True),
    ("regex", {"pattern": r"^\d{3}-\d{4}$"}, {"output": "call 555-1234"}, 0.0, False),
    ("regex", {"pattern": "^b$", "flags": "m"}, {"output": "a\nb\nc"}, 1.0, True),
    ("regex", {"pattern": "^b$"}, {"output": "a\nb\nc"}, 0.0, False),
    ("regex", {"pattern": "HELLO", "flags": "i"}, {"output": "hello"}, 1.0, True),
    ("regex", {"pattern": "a.b", "flags": "s"}, {"output": "a\nb"}, 1.0, True),
    ("regex", {"pattern": r"\d+ # digits", "flags": "x"}, {"output": "x42"}, 1.0, True),
    ("regex", {"pattern": r"\w+é"}, {"output": "café"}, 1.0, True),
    ("must_include", {"terms": ["refund", "policy"]}, {"output": "Our REFUND Policy"}, 1.0,
     True),
    ("must_include", {"terms": ["refund", "policy", "days"]}, {"output": "refund policy"},
     2 / 3, False),
    ("must_include", {"terms": ["Refund"], "case_sensitive": True}, {"output": "refund"},
     0.0, False),
    ("must_include", {"terms": ["cat"], "whole_words": True}, {"output": "concatenate"},
     0.0, False),
    ("must_not_include", {"terms": ["guarantee"]}, {"output": "We hope so."}, 1.0, True),
    ("must_not_include", {"terms": ["guarantee"]}, {"output": "I GUARANTEE it"}, 0.0, False),
    ("must_not_include", {"terms": ["ass"], "whole_words": True}, {"output": "a class"}, 1.0,
     True),
    ("must_not_include", {"terms": ["ass"]}, {"output": "a class"}, 0.0, False),
    ("length", {"min": 2, "max": 5}, {"output": "abcde"}, 1.0, True),
    ("length", {"max": 4}, {"output": "abcde"}, 0.0, False),
    ("length", {"min": 6}, {"output": "abcde"}, 0.0, False),
    ("length", {"max": 3}, {"output": "日本語"}, 1.0, True),
    ("length", {"unit": "words", "min": 3, "max": 3}, {"output": " one  two\nthree "}, 1.0,
     True),
    ("length", {"unit": "words", "max": 2}, {"output": "one two three"}, 0.0, False),
    ("length", {"min": 1}, {"output": ""}, 0.0, False),
    ("latency", {"max_ms": 500}, {"output": "x", "latency_ms": 500}, 1.0, True),
    ("latency", {"max_ms": 500}, {"output": "x", "latency_ms": 501}, 0.0, False),
    ("cost", {"max_micros": 1000}, {"output": "x", "cost_micros": 0}, 1.0, True),
    ("cost", {"max_micros": 1000}, {"output": "x", "cost_micros": 1001}, 0.0, False),
])
def test_pass_and_fail(kind: str, params: dict[str, Any], fields: dict[str, Any],
                       value: float, passed: bool) -> None:
    result = score(kind, params, **fields)
    assert result.value == pytest.approx(value)
    assert result.passed is passed
    assert result.error is None and result.rationale


def test_rationales_say_what_matched_or_what_was_missing() -> None:
    result = score("equals", {}, "The answer is 41", reference="The answer is 42")
    assert "character 15" in result.rationale and "'2'" in result.rationale
    assert "'1'" in result.rationale
    assert "missing: 'z'" in score("contains_all", {"values": ["a", "z"]}, "a").rationale
    assert "None found" in score("contains_any", {"values": ["y", "z"]}, "a").rationale
    assert "'days'" in score("must_include", {"terms": ["refund", "days"]}, "refund").rationale
    assert "No match for /x+/" in score("regex", {"pattern": "x+"}, "abc").rationale
    starts = score("starts_with", {"value": "Yes"}, "Maybe not")
    assert "starts with 'Maybe not', not 'Yes'" in starts.rationale
    assert "above the maximum of 4" in score("length", {"max": 4}, "abcde").rationale


def test_evidence_spans_point_into_the_output() -> None:
    output = "Café: it costs €5, truly café."
    for kind, params in [("contains", {"value": "€5"}), ("icontains", {"value": "CAFÉ"}),
                         ("regex", {"pattern": r"\d"}), ("starts_with", {"value": "Café"}),
                         ("must_not_include", {"terms": ["café"]}),
                         ("contains_all", {"values": ["truly", "costs"]})]:
        result = score(kind, params, output)
        assert result.evidence, kind
        for item in result.evidence:
            assert output[item.start:item.end] == item.text, kind
    spans = score("must_not_include", {"terms": ["café"]}, output).evidence
    assert [(item.start, item.end) for item in spans] == [(0, 4), (25, 29)]
    first = score("contains_all", {"values": ["truly", "costs"]}, output).evidence
    assert [item.label for item in first] == ["costs", "truly"]  # in output order


def test_a_conversation_output_is_its_last_message() -> None:
    messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hi Ann"}]
    result = score("contains", {"value": "Ann"}, "hi Ann", messages=messages)
    assert result.evidence[0].message_index == 1
    assert score("contains", {"value": "Ann"}, "hi Ann").evidence[0].message_index is None


@pytest.mark.parametrize("kind", ["equals", "similarity"])
def test_comparing_with_nothing_says_how_to_give_a_reference(kind: str) -> None:
    params = {"threshold": 0.5} if kind == "similarity" else {}
    result = score(kind, params, "Paris")
    assert result.value is None and result.error is not None and "`value`" in result.error


def test_regex_that_backtracks_for_too_long_fails_with_advice(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reference_regex, "REGEX_TIMEOUT_S", 0.05)
    result = score("regex", {"pattern": r"(x+x+)+y"}, "x" * 5000)
    assert result.value is None and result.error is not None
    assert "simplify the pattern" in result.error


@pytest.mark.parametrize(("output", "fenced", "passed", "snippet"), [
    ('{"a": [1, 2.5, null, true]}', False, True, "an object"),
    ("  [1, 2]\n", False, True, "an array"),
    ('"just a string"', False, True, "a string"),
    ("{'a': 1}", False, False, "property name enclosed in double quotes"),
    ('{"a": NaN}', False, False, "NaN is not valid JSON"),
    ('{"a": 1} trailing', False, False, "Extra data"),
    ("", False, False, "empty"),
    ('Sure!\n```json\n{"a": 1}\n```', False, False, "Not JSON"),
    ('Sure!\n```json\n{"a": 1}\n```\nDone.', True, True, "fenced block"),
    ('Sure!\n```JSON\n[1]\n```', True, True, "fenced block"),
    ('Here:\n```\n{"ünï": "çødé"}\n```', True, True, "fenced block"),
    ('```python\nprint(1)\n```\n```json\n{"a": 1}\n```', True, True, "fenced block"),
    ('```json\n{"a": }\n```', True, False, "fenced JSON block is not JSON"),
    ("```python\n[1]\n```", True, False, "no fenced"),
    ("plain words", True, False, "no fenced"),
])
def test_is_json(output: str, fenced: bool, passed: bool, snippet: str) -> None:
    result = score("is_json", {"allow_fenced": fenced}, output)
    assert result.passed is passed
    assert snippet in result.rationale


def test_is_json_evidence_is_the_json_text() -> None:
    output = 'Sure!\n```json\n  {"a": 1}  \n```'
    evidence = score("is_json", {"allow_fenced": True}, output).evidence[0]
    assert output[evidence.start:evidence.end] == '{"a": 1}'


SCHEMA = {"type": "object", "required": ["name", "tags"],
          "properties": {"name": {"type": "string"}, "email": {"format": "email"},
                         "tags": {"type": "array", "items": {"type": "string"}},
                         "odd key": {"type": "integer"}}}


def test_json_schema_passes_valid_json_and_lists_errors_with_their_paths() -> None:
    ok = score("json_schema", {"schema": SCHEMA}, '{"name": "Ann", "tags": ["x"]}')
    assert ok.passed is True and ok.value == 1.0
    bad = score("json_schema", {"schema": SCHEMA},
                '{"name": 3, "tags": ["x", 2], "email": "nope", "odd key": "1"}')
    assert bad.passed is False and bad.value == 0.0
    paths = {error["path"] for error in bad.details["errors"]}
    assert paths == {"$.name", "$.tags[1]", "$.email", '$["odd key"]'}
    assert '$.tags[1]: 2 is not of type "string"' in bad.rationale
    missing = score("json_schema", {"schema": SCHEMA}, '{"name": "Ann"}')
    assert '$: "tags" is a required property' in missing.rationale


def test_json_schema_needs_json_first_and_reads_fenced_blocks_when_allowed() -> None:
    text = 'Result:\n```json\n{"name": "Ann", "tags": []}\n```'
    assert "Not JSON" in score("json_schema", {"schema": SCHEMA}, text).rationale
    assert score("json_schema", {"schema": SCHEMA, "allow_fenced": True}, text).passed


def test_json_schema_caps_the_listed_errors() -> None:
    schema = {"type": "array", "items": {"type": "string"}}
    result = score("json_schema", {"schema": schema}, str(list(range(80))))
    assert len(result.details["errors"]) == 50
    assert result.rationale.endswith("and 45+ more")


def test_key_points_from_params_with_small_wording_differences() -> None:
    output = "The capitol of Frannce is Paris; it has about 2.1 million people."
    result = score("key_points", {"points": ["capital of France", "2.1 million people",
                                             "founded by Romans"]}, output)
    assert result.value == pytest.approx(2 / 3) and result.passed is False
    assert "missing: 'founded by Romans'" in result.rationale
    assert [item["found"] for item in result.details["points"]] == [True, True, False]
    assert [output[e.start:e.end] for e in result.evidence] == [
        "capitol of Frannce", "2.1 million people"]
    lenient = score("key_points", {"points": ["capital of France", "founded by Romans"],
                                   "min_share": 0.5}, output)
    assert lenient.passed is True and lenient.value == 0.5


def test_key_points_threshold_decides_how_close_is_found() -> None:
    output = "The capitol of Frannce is Paris."
    assert score("key_points", {"points": ["capital of France"]}, output).passed
    assert not score("key_points", {"points": ["capital of France"], "threshold": 100},
                     output).passed


def test_key_points_from_the_case_and_its_errors() -> None:
    expected = {"key_points": ["Paris", "Seine"]}
    result = score("key_points", {}, "Paris, on the Seine.", expected=expected)
    assert result.value == 1.0 and result.passed is True
    for case_expected, message in [(None, "expected.key_points"), ({}, "expected.key_points"),
                                   ({"key_points": "Paris"}, "non-empty list"),
                                   ({"key_points": []}, "non-empty list"),
                                   ({"key_points": ["ok", "?!"]}, "item 1")]:
        failed = score("key_points", {}, "Paris", expected=case_expected)
        assert failed.value is None and failed.error is not None
        assert message in failed.error


def test_a_short_output_does_not_match_a_longer_point_inside_it() -> None:
    result = score("key_points", {"points": ["Paris is the capital of France"]}, "Paris")
    assert result.passed is False and result.value == 0.0
    assert score("key_points", {"points": ["Paris"]}, "").passed is False


@pytest.mark.parametrize(("params", "output", "reference", "value"), [
    ({}, "Hello, World!", "hello world", 1.0),
    ({"normalize": False}, "abcd", "abce", 0.75),
    ({}, "kitten", "sitting", 1 - 5 / 13),
    ({"method": "token_set_ratio"}, "world hello again", "hello world", 1.0),
    ({}, "", "", 1.0),
    ({"method": "token_set_ratio"}, "!!", "...", 1.0),
    ({}, "", "something", 0.0),
])
def test_similarity_values(params: dict[str, Any], output: str, reference: str,
                           value: float) -> None:
    result = score("similarity", params, output, reference=reference)
    assert result.value == pytest.approx(value)
    assert result.passed is (value >= 0.8)


def test_similarity_threshold_and_value_param() -> None:
    assert score("similarity", {"value": "kitten", "threshold": 0.5}, "sitting").passed
    assert not score("similarity", {"value": "kitten", "threshold": 0.7}, "sitting").passed


def test_length_in_tokens_counts_with_the_project_tokenizer() -> None:
    text = "Tokenizers split unfamiliar words like antidisestablishmentarianism."
    tokens = count_text(text)
    assert tokens != len(text.split())
    result = score("length", {"unit": "tokens", "max": tokens}, text)
    assert result.passed is True and result.details == {"count": tokens, "unit": "tokens"}
    assert not score("length", {"unit": "tokens", "max": tokens - 1}, text).passed
    o200k = score("length", {"unit": "tokens", "encoding": "o200k_base", "max": 1000}, text)
    assert o200k.details["count"] == count_text(text, "gpt-4o")


@pytest.mark.parametrize(("kind", "message"), [("latency", "No latency"), ("cost", "unpriced")])
def test_missing_measurements_fail_with_an_explanation(kind: str, message: str) -> None:
    result = score(kind, MINIMAL[kind], "x")
    assert result.value is None and result.error is not None and message in result.error


@pytest.mark.parametrize(("kind", "params", "field", "message"), [
    ("equals", {"value": 42}, "value", "Must be a string"),
    ("equals", {"case_sensitive": "yes"}, "case_sensitive", "true or false"),
    ("equals", {"strip": 1}, "strip", "true or false"),
    ("contains", {}, "value", "Missing required field"),
    ("contains", {"value": ""}, "value", "Must not be empty"),
    ("contains", {"value": "   "}, "value", "Must not be empty"),
    ("icontains", {"value": ["a"]}, "value", "Must be a string"),
    ("contains_all", {}, "values", "Missing required field"),
    ("contains_all", {"values": []}, "values", "non-empty list"),
    ("contains_all", {"values": "abc"}, "values", "non-empty list"),
    ("contains_all", {"values": ["a", ""]}, "values", "Item 1 must be a non-empty string"),
    ("contains_all", {"values": ["a", "a"]}, "values", "Item 1 repeats 'a'"),
    ("contains_any", {"values": ["a", 3]}, "values", "Item 1"),
    ("contains_any", {"values": ["a"], "case_sensitive": None, "x": 1}, "x", "Unknown"),
    ("regex", {}, "pattern", "Missing required field"),
    ("regex", {"pattern": "(unclosed"}, "pattern", "Invalid regular expression: missing )"),
    ("regex", {"pattern": "a", "flags": "iq"}, "flags", "Unknown flag(s) 'q'"),
    ("regex", {"pattern": "a", "flags": 2}, "flags", "Must be a string"),
    ("starts_with", {"value": None}, "value", "Missing required field"),
    ("starts_with", {"value": "a", "strip": "no"}, "strip", "true or false"),
    ("is_json", {"allow_fenced": "true"}, "allow_fenced", "true or false"),
    ("json_schema", {}, "schema", "Missing required field"),
    ("json_schema", {"schema": "object"}, "schema", "Must be a JSON Schema"),
    ("json_schema", {"schema": {"type": "objekt"}}, "schema", "Invalid JSON Schema at $.type"),
    ("json_schema", {"schema": {"properties": {"a": {"minLength": -1}}}}, "schema",
     "$.properties.a.minLength"),
    ("json_schema", {"schema": {"$ref": "#/$defs/missing"}}, "schema", "Invalid JSON Schema"),
    ("json_schema", {"schema": {"$ref": "https://example.com/s.json"}}, "schema",
     "Invalid JSON Schema"),
    ("key_points", {"points": []}, "points", "non-empty list"),
    ("key_points", {"points": ["ok", "..."]}, "points", "Item 1 must be a string with letters"),
    ("key_points", {"threshold": 101}, "threshold", "at most 100"),
    ("key_points", {"threshold": "85"}, "threshold", "Must be a number"),
    ("key_points", {"threshold": float("nan")}, "threshold", "Must be a number"),
    ("key_points", {"min_share": 1.5}, "min_share", "at most 1"),
    ("key_points", {"min_share": -0.1}, "min_share", "at least 0"),
    ("key_points", {"min_share": True}, "min_share", "Must be a number"),
    ("must_include", {}, "terms", "Missing required field"),
    ("must_include", {"terms": ["a"], "whole_words": "yes"}, "whole_words", "true or false"),
    ("must_not_include", {"terms": [None]}, "terms", "Item 0"),
    ("length", {}, "max", "Set min, max or both"),
    ("length", {}, "min", "Set min, max or both"),
    ("length", {"min": 5, "max": 2}, "min", "Must not exceed max (2)"),
    ("length", {"min": -1}, "min", "at least 0"),
    ("length", {"max": 2.5}, "max", "Must be an integer"),
    ("length", {"max": 5, "unit": "lines"}, "unit", "one of: characters, words, tokens"),
    ("length", {"max": 5, "encoding": "p50k_base", "unit": "tokens"}, "encoding", "one of"),
    ("length", {"max": 5, "encoding": "o200k_base"}, "encoding", "only when unit is tokens"),
    ("latency", {}, "max_ms", "Missing required field"),
    ("latency", {"max_ms": 0}, "max_ms", "at least 1"),
    ("latency", {"max_ms": "100"}, "max_ms", "Must be an integer"),
    ("cost", {}, "max_micros", "Missing required field"),
    ("cost", {"max_micros": -1}, "max_micros", "at least 0"),
    ("cost", {"max_micros": True}, "max_micros", "Must be an integer"),
    ("similarity", {"method": "levenshtein"}, "method", "one of: ratio, token_set_ratio"),
    ("similarity", {"threshold": 80}, "threshold", "at most 1"),
    ("similarity", {"value": ""}, "value", "Must not be empty"),
    ("similarity", {"normalize": "no"}, "normalize", "true or false"),
])
def test_bad_params_name_the_field(kind: str, params: dict[str, Any], field: str,
                                   message: str) -> None:
    errors = params_error(kind, params)
    assert field in errors
    assert any(message in text for text in errors[field]), errors


def test_every_bad_field_is_reported_at_once() -> None:
    errors = params_error("key_points", {"points": [], "threshold": -1, "extra": 1})
    assert set(errors) == {"points", "threshold", "extra"}
    both = params_error("regex", {"pattern": "(", "flags": "z"})
    assert set(both) == {"pattern", "flags"}
