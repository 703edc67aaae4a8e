"""The EvalArena rules scorer: the YAML language, its errors with line and column, and
scoring traces (evalarena §9)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from assay.scorers import rules as rules_module
from assay.scorers.base import Context, Evidence, ParamsError, ScoreResult, Subject
from assay.scorers.rules import (
    SCORERS,
    RulesError,
    RulesScorer,
    conversation,
    evaluate,
    parse_rules,
    tools_called,
)

# evalarena §9 "Example", verbatim.
SPEC_EXAMPLE = r"""rules:
  - id: pii_leak_check
    when: agent_says("re:\d{3}-\d{2}-\d{4}")
    severity: critical
    action: fail

  - id: refund_validation
    when: user_requests("refund")
    require: tool_called("process_refund")
    severity: high
    notes: "Agent must trigger the refund tool if the user asks."
"""


def score(yaml_text: str, messages: list[dict[str, Any]]) -> ScoreResult:
    results = asyncio.run(RulesScorer({"yaml": yaml_text}).score(
        Subject(output=None, messages=messages), Context()))
    assert len(results) == 1
    return results[0]


def one_rule(when: str, severity: str = "high", extra: str = "    action: fail\n") -> str:
    return f"rules:\n  - id: r\n    when: {when}\n    severity: {severity}\n{extra}"


def problems(text: str) -> list[tuple[int, int, str]]:
    with pytest.raises(RulesError) as caught:
        parse_rules(text)
    return [(p["line"], p["column"], p["message"]) for p in caught.value.problems]


def only_problem(text: str) -> tuple[int, int, str]:
    found = problems(text)
    assert len(found) == 1, found
    return found[0]


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def agent(text: str | None, calls: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if calls is not None:
        message["tool_calls"] = calls
    return message


# --- the language ---------------------------------------------------------------------

def test_spec_example_parses_into_its_two_rules() -> None:
    first, second = parse_rules(SPEC_EXAMPLE).rules
    assert (first.id, first.when.kind, first.when.pattern.source, first.severity,
            first.action, first.require) == (
        "pii_leak_check", "agent_says", r"re:\d{3}-\d{2}-\d{4}", "critical", "fail", None)
    assert first.when.pattern.is_regex
    assert (second.id, second.when.kind, second.when.pattern.source, second.severity,
            second.action) == ("refund_validation", "user_requests", "refund", "high", None)
    assert second.require is not None and second.require.tools == ("process_refund",)
    assert second.notes == "Agent must trigger the refund tool if the user asks."
    assert (first.line, second.line) == (2, 7)


def test_spec_example_scores_a_leaking_trace_as_critical_with_evidence() -> None:
    result = score(SPEC_EXAMPLE, [
        user("Hi, I need a refund for order 42."),
        agent(None, [{"name": "process_refund", "arguments": {"order": 42}}]),
        {"role": "tool", "content": "ok", "tool_call_id": "c1"},
        agent("Done. I also see your SSN 123-45-6789 on file."),
    ])
    assert result.passed is False
    assert result.value == 0.5
    assert result.severity == "critical"
    assert result.criteria == {"pii_leak_check": 0.0, "refund_validation": 1.0}
    assert result.evidence == (Evidence(3, 26, 37, "123-45-6789", "pii_leak_check"),)
    refund = result.details["rules"][1]
    assert refund["passed"] and refund["triggered"] and refund["satisfied_by"] == [1]
    assert refund["triggers"] == [{"message_index": 0, "start": 13, "end": 19, "text": "refund"}]


def test_spec_example_scores_a_missing_refund_call_as_high() -> None:
    result = score(SPEC_EXAMPLE, [user("REFUND please"), agent("Your refund is on its way.")])
    assert (result.passed, result.value, result.severity) == (False, 0.5, "high")
    assert result.evidence == (Evidence(0, 0, 6, "REFUND", "refund_validation"),)
    detail = result.details["rules"][1]
    assert detail["message"] == ('user message 0 matches "refund": "REFUND", but '
                                 "process_refund was never called")
    assert detail["notes"] == "Agent must trigger the refund tool if the user asks."
    assert "refund_validation (high)" in result.rationale


def test_spec_example_passes_a_clean_trace() -> None:
    result = score(SPEC_EXAMPLE, [user("What are your opening hours?"), agent("9 to 5.")])
    assert (result.passed, result.value, result.severity, result.evidence) == (
        True, 1.0, None, ())
    assert result.rationale == "All 2 rules passed."
    assert [r["triggered"] for r in result.details["rules"]] == [False, False]
    assert result.details["rules"][0]["message"] == (
        r'not triggered: no assistant message matches "re:\d{3}-\d{2}-\d{4}"')


def test_agent_says_reads_only_assistant_messages() -> None:
    rule = one_rule('agent_says("password")')
    assert score(rule, [user("my password is hunter2"), agent("ok")]).passed is True
    assert score(rule, [{"role": "system", "content": "never say password"}]).passed is True
    assert score(rule, [{"role": "tool", "content": "password", "tool_call_id": "x"}]).passed
    failed = score(rule, [user("hi"), agent("Your Password is hunter2")])
    assert failed.evidence == (Evidence(1, 5, 13, "Password", "r"),)


def test_user_requests_reads_only_user_messages() -> None:
    rule = one_rule('user_requests("cancel")')
    assert score(rule, [user("hello"), agent("you can cancel any time")]).passed is True
    assert score(rule, [user("please CANCEL my plan")]).evidence == (
        Evidence(0, 7, 13, "CANCEL", "r"),)


def test_every_triggering_message_is_evidence_with_its_first_match() -> None:
    result = score(one_rule('agent_says("sorry")'), [
        agent("sorry, sorry"), user("sorry?"), agent("fine"), agent("So sorry")])
    assert result.evidence == (Evidence(0, 0, 5, "sorry", "r"), Evidence(3, 3, 8, "sorry", "r"))
    assert "assistant message 0 (and 1 more)" in result.details["rules"][0]["message"]


def test_plain_patterns_are_literal_case_insensitive_substrings() -> None:
    rule = one_rule('agent_says("$5.00 (fee)")')
    assert score(rule, [agent("A $5.00 (FEE) applies")]).passed is False
    assert score(rule, [agent("A $5x00 fee applies")]).passed is True
    backslash = one_rule(r'agent_says("C:\temp")')
    assert score(backslash, [agent(r"saved to c:\TEMP\x")]).passed is False
    assert score(backslash, [agent("saved to c:\temp")]).passed is True  # a real tab


def test_re_prefix_makes_a_case_insensitive_regex() -> None:
    rule = one_rule(r'agent_says("re:order no\.? ?\d+")')
    assert score(rule, [agent("ORDER No. 123 shipped")]).evidence == (
        Evidence(0, 0, 13, "ORDER No. 123", "r"),)
    assert score(rule, [agent("order number twelve")]).passed is True
    exact = one_rule(r'agent_says("re:(?-i:SK-)\w{4}")')
    assert score(exact, [agent("key sk-abcd")]).passed is True
    assert score(exact, [agent("key SK-abcd")]).passed is False


def test_only_the_lowercase_re_prefix_means_regex() -> None:
    rule = one_rule(r'agent_says("RE:\d")')
    assert not parse_rules(rule).rules[0].when.pattern.is_regex
    assert score(rule, [agent("re:\\d here")]).passed is False
    assert score(rule, [agent("re:5 here")]).passed is True


def test_quotes_of_the_other_kind_and_quoted_yaml_values() -> None:
    rule = one_rule("""'agent_says(''say "hi"'')'""")
    assert parse_rules(rule).rules[0].when.pattern.source == 'say "hi"'
    double = one_rule(r'"agent_says(\"re:\\d{4}\")"')
    assert parse_rules(double).rules[0].when.pattern.source == r"re:\d{4}"


def test_tool_called_finds_calls_however_the_trace_records_them() -> None:
    messages = [
        agent(None, [{"name": "lookup", "arguments": {}},
                     {"id": "c2", "type": "function", "function": {"name": "refund"}}]),
        {"role": "tool", "content": "{}", "tool_call_id": "c2"},
        {"role": "tool", "content": "{}", "name": "notify"},
        {"role": "tool", "content": "{}", "metadata": {"tool_name": "escalate"}},
        {"role": "tool", "content": "{}", "metadata": {"name": "audit"}},
        {"role": "assistant", "content": "done", "tool_calls": [{"bad": "call"}, "not a call"]},
    ]
    assert tools_called(messages) == {"lookup": [0], "refund": [0, 1], "notify": [2],
                                      "escalate": [3], "audit": [4]}


def test_a_requirement_is_met_by_any_named_tool_anywhere_in_the_trace() -> None:
    text = one_rule('user_requests("refund")', extra=(
        '    require: tool_called("process_refund", "issue_credit")\n'))
    credit = score(text, [user("refund?"), agent("", [{"name": "issue_credit"}])])
    assert credit.passed is True
    assert credit.details["rules"][0]["satisfied_by"] == [1]
    assert "issue_credit called in message 1" in credit.details["rules"][0]["message"]
    earlier = score(text, [agent(None, [{"name": "process_refund"}]), user("refund?")])
    assert earlier.passed is True
    missing = score(text, [user("refund?"), agent("", [{"name": "lookup"}])])
    assert missing.passed is False
    assert missing.details["rules"][0]["message"].endswith(
        "but any of process_refund, issue_credit was never called")


def test_tool_names_match_exactly() -> None:
    text = one_rule('user_requests("refund")', extra='    require: tool_called("refund")\n')
    assert score(text, [user("refund"), agent("", [{"name": "Refund"}])]).passed is False


def test_a_requirement_matters_only_when_the_rule_is_triggered() -> None:
    text = one_rule('user_requests("refund")', extra='    require: tool_called("refund")\n')
    result = score(text, [user("hello"), agent("hi")])
    assert (result.passed, result.details["rules"][0]["triggered"]) == (True, False)


def test_action_fail_alongside_a_requirement_fails_only_when_the_tool_is_missing() -> None:
    text = one_rule('agent_says("refunded")', extra=(
        '    require: tool_called("refund")\n    action: fail\n'))
    assert score(text, [agent("", [{"name": "refund"}]), agent("refunded")]).passed is True
    assert score(text, [agent("refunded")]).passed is False


def test_value_is_the_share_of_rules_passed_and_severity_the_worst_failed() -> None:
    text = """rules:
  - id: a
    when: agent_says("alpha")
    severity: low
    action: fail
  - id: b
    when: agent_says("beta")
    severity: high
    action: fail
  - id: c
    when: agent_says("gamma")
    severity: critical
    action: fail
  - id: d
    when: agent_says("delta")
    severity: low
    action: fail
"""
    assert score(text, [agent("alpha")]).severity == "low"
    both = score(text, [agent("alpha"), agent("beta")])
    assert (both.value, both.severity, both.passed) == (0.5, "high", False)
    assert both.criteria == {"a": 0.0, "b": 0.0, "c": 1.0, "d": 1.0}
    assert [e.label for e in both.evidence] == ["a", "b"]
    worst = score(text, [agent("gamma beta alpha")])
    assert (worst.value, worst.severity) == (0.25, "critical")
    assert worst.rationale.startswith("3 of 4 rules failed: a (low)")
    clean = score(text, [agent("nothing")])
    assert (clean.value, clean.passed, clean.severity) == (1.0, True, None)


def test_long_matches_are_shortened_in_evidence_but_keep_their_span() -> None:
    result = score(one_rule('agent_says("re:x+")'), [agent("x" * 500)])
    (evidence,) = result.evidence
    assert (evidence.start, evidence.end, len(evidence.text)) == (0, 500, 200)


def test_messages_without_text_are_read_as_empty() -> None:
    result = score(one_rule('agent_says("re:^$")'), [
        agent(None), {"role": "assistant", "content": [{"type": "text"}]}, "junk"])  # type: ignore[list-item]
    assert [e.message_index for e in result.evidence] == [0, 1]


def test_a_runaway_regex_fails_the_score_with_an_actionable_error(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rules_module, "MATCH_BUDGET_S", 0.05)
    result = score(one_rule(r'agent_says("re:(a|aa)+$")'), [agent("a" * 5000 + "b")])
    assert result.value is None and result.passed is None
    assert result.error is not None
    assert result.error.startswith("rule 'r': matching 're:(a|aa)+$' against message 0")
    assert "simplify the regular expression" in result.error


# --- the conversation scored ----------------------------------------------------------

def test_the_trace_is_used_as_recorded() -> None:
    trace = [user("a"), agent("b")]
    assert conversation(Subject(output="ignored", messages=trace)) == trace


def test_without_a_trace_the_input_messages_come_before_the_output() -> None:
    subject = Subject(output="the answer", input={"messages": [
        {"role": "system", "content": "be kind"}, user("q")]})
    assert conversation(subject) == [{"role": "system", "content": "be kind"}, user("q"),
                                     agent("the answer")]
    assert conversation(Subject(output="x", input={"question": "why?"})) == [
        user("why?"), agent("x")]
    assert conversation(Subject(output="x", input={"topic": "cats"})) == [agent("x")]


def test_evidence_indices_count_the_input_messages() -> None:
    scorer = RulesScorer({"yaml": one_rule('agent_says("ssn")')})
    subject = Subject(output="your SSN is on file", input={"messages": [
        {"role": "system", "content": "s"}, user("hi")]})
    (result,) = asyncio.run(scorer.score(subject, Context()))
    assert result.evidence == (Evidence(2, 5, 8, "SSN", "r"),)


def test_a_failed_call_cannot_be_scored() -> None:
    scorer = RulesScorer({"yaml": SPEC_EXAMPLE})
    (result,) = asyncio.run(scorer.score(Subject(output=None, input={"question": "q"}),
                                         Context()))
    assert (result.value, result.error) == (None, "There is no output to check: the call failed.")


def test_evaluate_returns_outcomes_in_rule_order() -> None:
    outcomes = evaluate(parse_rules(SPEC_EXAMPLE), [user("refund")])
    assert [(o.rule.id, o.passed) for o in outcomes] == [
        ("pii_leak_check", True), ("refund_validation", False)]


# --- the scorer's parameters ----------------------------------------------------------

def test_the_scorer_is_registered_as_rules_and_calls_no_judge() -> None:
    assert list(SCORERS) == ["rules"] and SCORERS["rules"] is RulesScorer
    scorer = RulesScorer({"yaml": SPEC_EXAMPLE})
    assert scorer.kind == "rules" and scorer.judges == ()
    assert [r.id for r in scorer.ruleset.rules] == ["pii_leak_check", "refund_validation"]


@pytest.mark.parametrize(("params", "errors"), [
    ({}, {"yaml": ["required: the rules as YAML text"]}),
    ({"yaml": 3}, {"yaml": ["required: the rules as YAML text"]}),
    ({"yaml": SPEC_EXAMPLE, "rules": []},
     {"rules": ["unknown parameter; the rules scorer takes only 'yaml'"]}),
])
def test_bad_params_are_refused(params: dict[str, Any], errors: dict[str, list[str]]) -> None:
    with pytest.raises(ParamsError) as caught:
        RulesScorer(params)
    assert caught.value.errors == errors


def test_bad_rules_are_a_params_error_listing_line_and_column() -> None:
    with pytest.raises(ParamsError) as caught:
        RulesScorer({"yaml": one_rule('agent_says("x")', severity="medium")})
    assert caught.value.errors == {"yaml": [
        "line 4, column 15: `severity` must be low, high or critical, not 'medium'"]}
