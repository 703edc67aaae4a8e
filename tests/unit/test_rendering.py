"""What one cell sends: questions, template cases, conversation turns with their history,
and a prompt version's system text and few-shots; variables parsed and found missing."""

from __future__ import annotations

import pytest

from assay.core.prompts.service import few_shot_errors, parse_variables, render
from assay.core.runs.rendering import PromptParts, cell_messages, missing_variables, user_turns

PROMPT = PromptParts(template="Answer {{ question }} for {{audience}}.",
                     system="You help {{audience}}.",
                     few_shots=({"input": "2+2?", "output": "4"},))


def user(text: str) -> dict[str, str]:
    return {"role": "user", "content": text}


def bot(text: str) -> dict[str, str]:
    return {"role": "assistant", "content": text}


def test_variables_are_parsed_in_order_once_with_spaces_allowed() -> None:
    assert parse_variables("{{a}} {{ b }} {{a}} {{  c_1  }}", "{{d}} {{b}}") == [
        "a", "b", "c_1", "d"]
    assert parse_variables("{{1a}} {{a-b}} {a} {{ }} {{a b}}", None) == []


def test_render_fills_known_names_once_and_leaves_unknown_ones() -> None:
    assert render("{{x}} and {{ y }}", {"x": "{{y}}", "y": "Y"}) == "{{y}} and Y"
    assert render("{{missing}}", {}) == "{{missing}}"


def test_a_question_is_the_user_message_without_a_prompt() -> None:
    assert cell_messages({"question": "Why?"}, None) == [user("Why?")]


def test_a_question_through_a_prompt_version() -> None:
    parts = PromptParts("Q: {{question}}", "Be brief.", ({"input": "a", "output": "b"},))
    assert cell_messages({"question": "Why?"}, parts) == [
        {"role": "system", "content": "Be brief."}, user("a"), bot("b"), user("Q: Why?")]


def test_cases_render_their_variables_into_template_and_system() -> None:
    messages = cell_messages({"question": "Why?", "audience": "kids"}, PROMPT)
    assert messages == [{"role": "system", "content": "You help kids."}, user("2+2?"),
                        bot("4"), user("Answer Why? for kids.")]


def test_missing_variables_are_named() -> None:
    assert missing_variables(PROMPT, {"question": "Why?"}) == ["audience"]
    assert missing_variables(PROMPT, {"question": "", "audience": "x"}) == []
    assert missing_variables(None, {}) == []
    # a conversation renders only the system text
    assert missing_variables(PROMPT, {"messages": [user("hi")]}) == ["audience"]
    assert missing_variables(PromptParts("{{question}}"), {"messages": [user("hi")]}) == []


CONVERSATION = {"messages": [
    {"role": "system", "content": "Stay polite."},
    user("u0"), bot("a0"), user("u1"), bot("a1"), user("u2"), bot("a2"), user("u3")]}


def test_turns_count_user_messages() -> None:
    assert user_turns(CONVERSATION) == 4
    assert user_turns({"question": "x"}) == 1


def test_a_conversation_turn_sends_its_history_up_to_that_user_message() -> None:
    system = {"role": "system", "content": "Stay polite."}
    assert cell_messages(CONVERSATION, None, 0, 10) == [system, user("u0")]
    assert cell_messages(CONVERSATION, None, 2, 10) == [
        system, user("u0"), bot("a0"), user("u1"), bot("a1"), user("u2")]


def test_history_keeps_at_most_max_pairs_and_every_system_message() -> None:
    system = {"role": "system", "content": "Stay polite."}
    assert cell_messages(CONVERSATION, None, 3, 1) == [system, user("u2"), bot("a2"),
                                                       user("u3")]
    assert cell_messages(CONVERSATION, None, 3, 2) == [
        system, user("u1"), bot("a1"), user("u2"), bot("a2"), user("u3")]
    assert cell_messages(CONVERSATION, None, 3, 50) == CONVERSATION["messages"]


def test_a_conversation_through_a_prompt_gets_system_text_and_few_shots_first() -> None:
    parts = PromptParts("ignored {{x}}", "Be brief.", ({"input": "a", "output": "b"},))
    assert cell_messages(CONVERSATION, parts, 1, 10) == [
        {"role": "system", "content": "Be brief."}, {"role": "system", "content": "Stay polite."},
        user("a"), bot("b"), user("u0"), bot("a0"), user("u1")]


def test_a_turn_past_the_last_user_message_is_an_error() -> None:
    with pytest.raises(ValueError):
        cell_messages(CONVERSATION, None, 4, 10)


def test_few_shots_are_checked() -> None:
    assert few_shot_errors([{"input": "a", "output": "b"}]) == {}
    assert set(few_shot_errors([{"input": "a"}, {"input": " ", "output": "b"},
                                {"input": "a", "output": "b", "x": 1}])) == {
        "few_shots[0]", "few_shots[1]", "few_shots[2]"}
    assert "few_shots" in few_shot_errors([{"input": "a", "output": "b"}] * 11)
    assert "few_shots" in few_shot_errors("nope")


def test_parts_of_a_prompt_version() -> None:
    from assay.core.prompts.models import PromptVersion
    from assay.core.runs.rendering import parts_of

    version = PromptVersion(template="T {{x}}", system="S", few_shots=[{"input": "a",
                                                                        "output": "b"}])
    assert parts_of(version) == PromptParts("T {{x}}", "S", ({"input": "a", "output": "b"},))
    assert parts_of(None) is None
