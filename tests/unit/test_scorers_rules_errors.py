"""Bad rules text: every YAML syntax error and every schema error names its 1-based line and
column (of the node, or of the character inside a condition), all at once when it can."""

from __future__ import annotations

import pytest

from assay.scorers.base import ParamsError
from assay.scorers.rules import RulesError, parse_rules


def problems(text: str) -> list[tuple[int, int, str]]:
    with pytest.raises(RulesError) as caught:
        parse_rules(text)
    return [(p["line"], p["column"], p["message"]) for p in caught.value.problems]


def rule(when: str = 'agent_says("x")', tail: str = "    severity: high\n    action: fail\n",
         key: str = "when") -> str:
    return f"rules:\n  - id: r\n    {key}: {when}\n{tail}"


def requiring(require: str) -> str:
    return f'rules:\n  - id: r\n    when: agent_says("x")\n    require: {require}\n' \
           "    severity: high\n"


SYNTAX = [
    ("rules: [a", 1, 10, "expected ',' or ']', but got '<stream end>' (while parsing a flow "
                         "sequence started at line 1, column 8)"),
    ("rules:\n  - id: x\n\twhen: y\n", 3, 1,
     "found character '\\t' that cannot start any token; indent with spaces, not tabs"),
    (rule('agent_says("a: b")'), 3, 24, "mapping values are not allowed here; a value holding "
                                        "': ' must be quoted, e.g. 'agent_says(\"a: b\")'"),
    ("rules: []\n---\nrules: []\n", 2, 1, "but found another document (expected a single "
                                          "document in the stream started at line 1, column 1)"),
    ("rules:\n  - id: \x07\n", 2, 9,
     "unacceptable character #x0007: special characters are not allowed"),
]


@pytest.mark.parametrize(("text", "line", "column", "message"), SYNTAX)
def test_yaml_syntax_errors_name_line_and_column(text: str, line: int, column: int,
                                                  message: str) -> None:
    assert problems(text) == [(line, column, message)]


SCHEMA = [
    ("", 1, 1, "the rules are empty: start with `rules:` and a list of rules"),
    ("# nothing yet\n", 1, 1, "the rules are empty: start with `rules:` and a list of rules"),
    ("- id: x\n", 1, 1, "the top level must be a mapping with the key `rules`"),
    ("rules: yes\n", 1, 8, "`rules` must be a list of rules, each starting with `- id: ...`"),
    ("rules:\n", 1, 7, "`rules` must be a list of rules, each starting with `- id: ...`"),
    ("rules: []\n", 1, 8, "`rules` is empty: add at least one rule"),
    ("rules:\n  - just text\n", 2, 5,
     "each rule must be a mapping with `id`, `when` and `severity`"),
    (rule() + "version: 2\n", 6, 1, "unknown key 'version' in the top level; allowed: rules"),
    (rule() + "    sevrity: high\n", 6, 5, "unknown key 'sevrity' in a rule (did you mean "
     "'severity'?); allowed: id, when, require, action, severity, notes"),
    (rule(tail="    severity: high\n    severity: low\n    action: fail\n"), 5, 5,
     "duplicate key 'severity' (first on line 4)"),
    ('rules:\n  - when: agent_says("x")\n    severity: high\n    action: fail\n', 2, 5,
     "the rule is missing `id` (a unique name)"),
    (rule(tail="    action: fail\n"), 2, 5,
     "the rule is missing `severity` (low, high or critical)"),
    ("rules:\n  - id: r\n    severity: high\n    action: fail\n", 2, 5,
     "the rule is missing `when` (agent_says(\"...\") or user_requests(\"...\"))"),
    (rule().replace("id: r", "id:"), 2, 8,
     "`id` must be a name for the rule, e.g. refund_validation"),
    (rule().replace("id: r", 'id: ""'), 2, 9,
     "`id` must not be empty; it must be a name for the rule, e.g. refund_validation"),
    (rule().replace("id: r", "id: " + "x" * 101), 2, 9, "`id` is longer than 100 characters"),
    (rule() + rule('agent_says("y")').removeprefix("rules:\n"), 6, 9,
     "duplicate rule id 'r' (first on line 2)"),
    (rule(tail="    severity: medium\n    action: fail\n"), 4, 15,
     "`severity` must be low, high or critical, not 'medium'"),
    (rule(tail="    severity: [high]\n    action: fail\n"), 4, 15,
     "`severity` must be low, high or critical"),
    (rule(tail="    severity: high\n    action: warn\n"), 5, 13,
     "`action` must be fail, not 'warn'"),
    (rule(tail="    severity: high\n    action: fail\n    notes:\n"), 6, 11,
     "`notes` must be text"),
    (rule(tail="    severity: high\n"), 2, 5, "the rule can never fail: add `action: fail` "
     "(fail whenever `when` matches) or `require: tool_called(\"...\")`"),
    ("rules:\n  - id: r\n    ? [a]\n    : b\n    when: agent_says('x')\n    severity: low\n"
     "    action: fail\n", 3, 7, "keys in a rule must be plain names"),
]


@pytest.mark.parametrize(("text", "line", "column", "message"), SCHEMA)
def test_schema_errors_name_line_and_column(text: str, line: int, column: int,
                                            message: str) -> None:
    assert problems(text) == [(line, column, message)]


CONDITIONS = [
    (rule("{agent_says: x}"), 3, 11,
     "`when` must be a call such as agent_says(\"text\") or user_requests(\"text\")"),
    (rule('agent_say("x")'), 3, 11, "unknown condition 'agent_say' (did you mean "
     "'agent_says'?); `when` takes agent_says(...) or user_requests(...)"),
    (rule('tool_called("x")'), 3, 11, "tool_called is a requirement: put it under `require`; "
     "`when` takes agent_says(...) or user_requests(...)"),
    (rule('agent_says("x", "y")'), 3, 11, "agent_says takes one quoted pattern, got 2"),
    (rule('agent_says("x)'), 3, 22, 'unterminated string: no closing "'),
    (rule('agent_says("a #b")'), 3, 22, "unterminated string: no closing \" (YAML reads ' #' "
     "as the start of a comment: put the whole condition in single quotes)"),
    (rule('agent_says "x"'), 3, 22, "expected '(' after agent_says, e.g. agent_says(\"text\")"),
    (rule('agent_says("x") and more'), 3, 27, "unexpected text after ')'"),
    (rule("agent_says(x)"), 3, 22, 'expected a quoted string, e.g. "refund"'),
    (rule('agent_says("x" "y")'), 3, 26, "expected ',' or ')' after the string"),
    (rule('("x")'), 3, 11, 'expected a call such as agent_says("text")'),
    (rule('agent_says("")'), 3, 23, "the pattern is empty: it would match every message"),
    (rule('agent_says("re:")'), 3, 23, "the pattern is empty: it would match every message"),
    (rule(f'agent_says("{"x" * 1001}")'), 3, 23,
     "the pattern is longer than 1000 characters"),
    (requiring('agent_says("y")'), 4, 14, "agent_says is a condition: put it under `when`; "
     "`require` takes tool_called(...)"),
    (requiring('tool_call("y")'), 4, 14, "unknown requirement 'tool_call' (did you mean "
     "'tool_called'?); `require` takes tool_called(\"tool_name\", ...)"),
    (requiring("tool_called()"), 4, 14, "tool_called needs at least one quoted tool name"),
    (requiring('tool_called("a", " ")'), 4, 32, "a tool name must not be empty"),
    (requiring("[tool_called('a')]"), 4, 14,
     "`require` must be a call such as tool_called(\"tool_name\")"),
]


@pytest.mark.parametrize(("text", "line", "column", "message"), CONDITIONS)
def test_condition_errors_point_inside_the_condition(text: str, line: int, column: int,
                                                     message: str) -> None:
    assert problems(text) == [(line, column, message)]


def test_an_invalid_regex_points_at_the_error_inside_the_pattern() -> None:
    # `    when: agent_says("re:*ab")`: the pattern's `*` is column 26
    assert problems(rule('agent_says("re:*ab")')) == [
        (3, 26, "invalid regular expression: nothing to repeat")]
    # the unclosed group is reported where the pattern ends, at column 38
    assert problems(rule(r'agent_says("re:\d{3}-(\d{2}")')) == [
        (3, 38, "invalid regular expression: missing )")]


def test_positions_inside_single_quoted_values_count_the_quote() -> None:
    assert problems(rule("""'agent_says("re:*a")'""")) == [
        (3, 27, "invalid regular expression: nothing to repeat")]


def test_values_with_escapes_are_located_at_their_start() -> None:
    """A double-quoted value with backslashes is not spelled verbatim in the source, so
    offsets inside it cannot be mapped: the error points at the value."""
    assert problems(rule(r'"agent_says(\"re:*a\")"')) == [
        (3, 11, "invalid regular expression: nothing to repeat")]


def test_every_problem_is_reported_at_once_in_source_order() -> None:
    text = ('rules:\n  - id: a\n    when: agent_says("re:(")\n    severity: huge\n'
            "  - id: b\n    sevrity: low\n")
    assert [(line, column) for line, column, _ in problems(text)] == [
        (2, 5), (3, 27), (4, 15), (5, 5), (5, 5), (6, 5)]


def test_a_misspelt_top_key_is_suggested_and_rules_reported_missing() -> None:
    assert problems("rule:\n  - id: x\n") == [
        (1, 1, "unknown key 'rule' in the top level (did you mean 'rules'?); allowed: rules"),
        (1, 1, "missing `rules`: the top level must hold `rules:` and a list")]


def test_too_long_and_too_many() -> None:
    assert problems("#" * 100_001) == [(1, 1, "the rules are longer than 100000 characters")]
    many = "rules:\n" + rule().removeprefix("rules:\n") * 201
    assert problems(many) == [(2, 3, "too many rules (201); at most 200")]


def test_rules_error_is_a_params_error_with_formatted_messages() -> None:
    with pytest.raises(ParamsError) as caught:
        parse_rules("rules: []\n")
    assert isinstance(caught.value, RulesError)
    assert caught.value.errors == {"yaml": ["line 1, column 8: `rules` is empty: add at least "
                                            "one rule"]}
    assert caught.value.problems == [
        {"line": 1, "column": 8, "message": "`rules` is empty: add at least one rule"}]
