"""Reading generated questions, cases and conversations out of a model's reply, in every
shape models answer in, with what came back reported (asked for N, got M)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assay.core.generation.parsing import (
    extract_items,
    parse_cases,
    parse_conversations,
    parse_questions,
)

THREE = ["What is 2+2?", "Who wrote Hamlet?", "Why is the sky blue?"]


@pytest.mark.parametrize("reply", [
    json.dumps(THREE),
    "```json\n" + json.dumps(THREE, indent=2) + "\n```",
    "Here you go:\n```\n" + json.dumps(THREE) + "\n```\nEnjoy!",
    "Sure! Here are the questions: " + json.dumps(THREE) + " Let me know if you need more.",
    json.dumps({"questions": THREE}),
    "```json\n" + json.dumps({"questions": [{"question": q} for q in THREE]}) + "\n```",
    "\n".join(json.dumps({"question": q}) for q in THREE),
    "Here are 3 questions:\n\n1. What is 2+2?\n2. Who wrote Hamlet?\n3. Why is the sky blue?\n"
    "\nI hope these help!",
    "1) What is 2+2?\n2) Who wrote Hamlet?\n3) Why is the sky blue?",
    "- What is 2+2?\n- Who wrote Hamlet?\n* Why is the sky blue?",
    "\u2022 What is 2+2?\n\u2022 Who wrote Hamlet?\n\u2022 Why is the sky blue?",
    "Q1: What is 2+2?\nQ2: Who wrote Hamlet?\nQuestion 3: Why is the sky blue?",
    "1. **What is 2+2?**\n2. \"Who wrote Hamlet?\"\n3. Why is the sky blue?",
])
def test_three_questions_in_every_shape(reply: str) -> None:
    parsed = parse_questions(reply, 3)
    assert [i["question"] for i in parsed.items] == THREE
    assert parsed.requested == parsed.received == 3
    assert parsed.warnings == []


def test_a_numbered_item_continues_on_the_next_line() -> None:
    parsed = parse_questions("1. What is\n   the capital of France?\n2. Next one?", 2)
    assert [i["question"] for i in parsed.items] == ["What is the capital of France?",
                                                     "Next one?"]


def test_prose_between_items_is_left_out() -> None:
    reply = "Intro:\n\n1. One?\n\nSome commentary here.\n\n2. Two?\n\nThanks!"
    assert [i["question"] for i in parse_questions(reply, 2).items] == ["One?", "Two?"]


def test_fewer_than_asked_is_reported() -> None:
    parsed = parse_questions(json.dumps(THREE[:2]), 10)
    assert (parsed.requested, parsed.received) == (10, 2)
    assert parsed.warnings == ["asked for 10 questions, got 2"]


def test_more_than_asked_is_cut_and_reported() -> None:
    parsed = parse_questions(json.dumps(THREE), 2)
    assert parsed.received == 2
    assert parsed.warnings == ["got 3 questions, kept the first 2"]


def test_duplicates_are_dropped_ignoring_case_space_and_punctuation() -> None:
    parsed = parse_questions(json.dumps(["What is X?", "what is  x?", "What is X", "Y?"]), 2)
    assert [i["question"] for i in parsed.items] == ["What is X?", "Y?"]
    assert parsed.warnings == ["2 duplicate question(s) dropped"]


def test_answers_are_kept_when_given() -> None:
    reply = json.dumps([{"question": "2+2?", "answer": "4"}, {"q": "3+3?"}])
    assert parse_questions(reply, 2).items == [{"question": "2+2?", "answer": "4"},
                                               {"question": "3+3?", "answer": None}]


def test_items_without_a_question_are_dropped() -> None:
    parsed = parse_questions(json.dumps([{"question": ""}, {"foo": 1}, "Real?"]), 1)
    assert [i["question"] for i in parsed.items] == ["Real?"]
    assert "2 item(s) without a question dropped" in parsed.warnings


def test_an_empty_reply_and_prose_only() -> None:
    assert parse_questions("", 3).warnings == ["the reply was empty",
                                               "asked for 3 questions, got 0"]
    parsed = parse_questions("I cannot help with that.", 3)
    assert parsed.warnings[0].startswith("no JSON or list markers")


def test_broken_json_falls_back_to_the_list() -> None:
    reply = '[\n"One?",\n"Two?"\n'  # never closed
    items, _ = extract_items(reply)
    assert [i for i in items if "One" in str(i)]


def test_cases_with_every_variable() -> None:
    reply = "```json\n" + json.dumps([
        {"input": {"city": "Paris", "tone": "formal"}, "expected": "Bonjour"},
        {"city": "Oslo", "tone": "casual", "edge_case": True},
        {"city": "Rome"},  # no tone
        {"input": {"tone": "x"}},  # no city
        "not an object",
    ]) + "\n```"
    parsed = parse_cases(reply, ["city", "tone"], 2)
    assert parsed.items == [
        {"input": {"city": "Paris", "tone": "formal"}, "expected": "Bonjour", "edge_case": False},
        {"input": {"city": "Oslo", "tone": "casual"}, "expected": None, "edge_case": True}]
    assert "1 case(s) missing variable 'city' dropped" in parsed.warnings
    assert "1 case(s) missing variable 'tone' dropped" in parsed.warnings
    assert "1 item(s) that are not objects dropped" in parsed.warnings


def test_cases_of_one_variable_may_be_a_plain_list() -> None:
    parsed = parse_cases("1. hello\n2. hi there\n3. hello", ["message"], 3)
    assert [i["input"] for i in parsed.items] == [{"message": "hello"}, {"message": "hi there"}]
    assert "1 duplicate case(s) dropped" in parsed.warnings
    assert "asked for 3 cases, got 2" in parsed.warnings


def test_conversations_in_turn_and_message_shapes() -> None:
    reply = json.dumps({"conversations": [
        {"turns": [{"question": "What is X?", "ground_truth": "X is a thing."},
                   {"question": "And Y?", "answer": "Y too."}]},
        {"messages": [{"role": "user", "content": "Q1"}, {"role": "assistant", "content": "A1"},
                      {"role": "user", "content": "Q2"}, {"role": "assistant", "content": "A2"}]},
        {"turns": [{"question": "No answer?"}]},
        {"turns": [{"question": "Only one?", "ground_truth": "Yes."}]},
        "nope",
    ]})
    parsed = parse_conversations(reply, 2, 5)
    assert [[(t["turn_number"], t["question"], t["ground_truth"]) for t in c["turns"]]
            for c in parsed.items] == [
        [(1, "What is X?", "X is a thing."), (2, "And Y?", "Y too.")],
        [(1, "Q1", "A1"), (2, "Q2", "A2")],
        [(1, "Only one?", "Yes.")]]
    assert "1 conversation(s) with a turn lacking its question or ground truth dropped" \
        in parsed.warnings
    assert "1 conversation(s) have fewer than the 2 turns asked for" in parsed.warnings
    assert "1 item(s) that are not conversations dropped" in parsed.warnings
    assert "asked for 5 conversations, got 3" in parsed.warnings


def test_extra_turns_are_cut() -> None:
    reply = json.dumps([{"turns": [{"question": f"Q{n}", "ground_truth": f"A{n}"}
                                   for n in range(4)]}])
    assert len(parse_conversations(reply, 2, 1).items[0]["turns"]) == 2


@given(st.lists(st.text(alphabet=st.characters(codec="utf-8"), max_size=40), max_size=20),
       st.integers(1, 30))
def test_any_json_list_of_strings_never_raises(values: list[str], requested: int) -> None:
    parsed = parse_questions(json.dumps(values), requested)
    assert parsed.received <= requested
    assert all(i["question"] for i in parsed.items)


@given(st.text(max_size=400), st.integers(1, 30))
def test_any_text_never_raises(reply: str, requested: int) -> None:
    for parsed in (parse_questions(reply, requested), parse_cases(reply, ["a"], requested),
                   parse_conversations(reply, 2, requested)):
        assert parsed.received <= requested
