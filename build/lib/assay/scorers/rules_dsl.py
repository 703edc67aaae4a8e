"""The EvalArena rules language: YAML text in, a checked `RuleSet` out (evalarena §9).

    rules:
      - id: refund_validation
        when: user_requests("refund")          # or agent_says("...")
        require: tool_called("process_refund")  # optional; several names: any of them
        action: fail                            # needed when there is no `require`
        severity: high                          # low | high | critical
        notes: "Agent must trigger the refund tool if the user asks."

A pattern is a plain, case-insensitive substring unless it starts with `re:`, then it is a
regular expression (also case-insensitive; `(?-i:...)` makes a part exact). Inside the
quotes a backslash is just a backslash, so `agent_says("re:\\d{3}")` needs no YAML
escaping; a pattern holding one kind of quote is written in the other kind.

Every problem, syntax or schema, is reported with the 1-based line and column of the YAML
node (or of the character inside a condition) that causes it, all at once when they can be.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import TypedDict

import regex
import yaml

from assay.scorers.base import ParamsError

SEVERITIES = ("low", "high", "critical")  # mildest first
CONDITIONS = {"agent_says": "assistant", "user_requests": "user"}  # which role each reads
REQUIREMENTS = ("tool_called",)
RULE_KEYS = ("id", "when", "require", "action", "severity", "notes")
REQUIRED_KEYS = ("id", "when", "severity")
MAX_TEXT = 100_000
MAX_RULES = 200
MAX_ID = 100
MAX_PATTERN = 1_000
REGEX_PREFIX = "re:"
FLAGS = regex.IGNORECASE


class RuleProblem(TypedDict):
    line: int
    column: int
    message: str


class RulesError(ParamsError):
    """Rules text that cannot be used: `problems` lists each with its line and column."""

    def __init__(self, problems: list[RuleProblem]):
        self.problems = sorted(problems, key=lambda p: (p["line"], p["column"]))
        super().__init__({"yaml": [f"line {p['line']}, column {p['column']}: {p['message']}"
                                   for p in self.problems]})


@dataclass(frozen=True)
class Pattern:
    source: str  # as written, `re:` prefix included
    compiled: regex.Pattern[str]

    @property
    def is_regex(self) -> bool:
        return self.source.startswith(REGEX_PREFIX)


@dataclass(frozen=True)
class Condition:
    kind: str  # agent_says | user_requests
    pattern: Pattern

    @property
    def role(self) -> str:
        return CONDITIONS[self.kind]


@dataclass(frozen=True)
class Requirement:
    kind: str  # tool_called
    tools: tuple[str, ...]  # satisfied when any of them was called


@dataclass(frozen=True)
class Rule:
    id: str
    when: Condition
    severity: str
    require: Requirement | None = None
    action: str | None = None  # "fail": violated whenever `when` matches (no `require`)
    notes: str | None = None
    line: int = 0


@dataclass(frozen=True)
class RuleSet:
    rules: tuple[Rule, ...]


class _CallError(Exception):
    def __init__(self, message: str, offset: int):
        super().__init__(message)
        self.message = message
        self.offset = offset


class _Checker:
    """Walks the composed YAML nodes, collecting every problem with its position."""

    def __init__(self) -> None:
        self.problems: list[RuleProblem] = []
        self.ids: dict[str, yaml.Node] = {}

    def add(self, node: yaml.Node, message: str, offset: int | None = None) -> None:
        line, column = _position(node, offset)
        self.problems.append({"line": line, "column": column, "message": message})

    def mapping(self, node: yaml.MappingNode, allowed: tuple[str, ...],
                what: str) -> dict[str, tuple[yaml.Node, yaml.Node]]:
        found: dict[str, tuple[yaml.Node, yaml.Node]] = {}
        for key, value in node.value:
            if not isinstance(key, yaml.ScalarNode):
                self.add(key, f"keys in {what} must be plain names")
                continue
            if key.value in found:
                first = found[key.value][0].start_mark.line + 1
                self.add(key, f"duplicate key '{key.value}' (first on line {first})")
                continue
            found[key.value] = (key, value)
            if key.value not in allowed:
                self.add(key, f"unknown key '{key.value}' in {what}"
                              f"{_suggest(key.value, allowed)}; allowed: {', '.join(allowed)}")
        return found

    def text(self, node: yaml.Node, key: str, hint: str) -> str | None:
        if not isinstance(node, yaml.ScalarNode) or node.tag == "tag:yaml.org,2002:null":
            self.add(node, f"`{key}` must be {hint}")
            return None
        if not node.value.strip():
            self.add(node, f"`{key}` must not be empty; it must be {hint}")
            return None
        return str(node.value)

    def rules(self, root: yaml.Node | None) -> list[Rule]:
        if root is None:
            self.problems.append({"line": 1, "column": 1, "message":
                                  "the rules are empty: start with `rules:` and a list of rules"})
            return []
        if not isinstance(root, yaml.MappingNode):
            self.add(root, "the top level must be a mapping with the key `rules`")
            return []
        top = self.mapping(root, ("rules",), "the top level")
        if "rules" not in top:
            self.add(root, "missing `rules`: the top level must hold `rules:` and a list")
            return []
        node = top["rules"][1]
        if not isinstance(node, yaml.SequenceNode):
            self.add(node, "`rules` must be a list of rules, each starting with `- id: ...`")
            return []
        if not node.value:
            self.add(node, "`rules` is empty: add at least one rule")
            return []
        if len(node.value) > MAX_RULES:
            self.add(node, f"too many rules ({len(node.value)}); at most {MAX_RULES}")
            return []
        built = [self.rule(item) for item in node.value]
        return [rule for rule in built if rule is not None]

    def rule(self, node: yaml.Node) -> Rule | None:
        if not isinstance(node, yaml.MappingNode):
            self.add(node, "each rule must be a mapping with `id`, `when` and `severity`")
            return None
        before = len(self.problems)
        fields = self.mapping(node, RULE_KEYS, "a rule")
        for key in REQUIRED_KEYS:
            if key not in fields:
                self.add(node, f"the rule is missing `{key}` ({_REQUIRED_HINTS[key]})")
        rule_id = self.rule_id(fields["id"][1]) if "id" in fields else None
        when = self.condition(fields["when"][1]) if "when" in fields else None
        severity = self.choice(fields, "severity", SEVERITIES)
        action = self.choice(fields, "action", ("fail",))
        require = self.requirement(fields["require"][1]) if "require" in fields else None
        notes = self.text(fields["notes"][1], "notes", "text") if "notes" in fields else None
        if "when" in fields and "require" not in fields and "action" not in fields:
            self.add(node, "the rule can never fail: add `action: fail` (fail whenever `when` "
                           "matches) or `require: tool_called(\"...\")`")
        if len(self.problems) > before or rule_id is None or when is None or severity is None:
            return None
        return Rule(rule_id, when, severity, require, action, notes, node.start_mark.line + 1)

    def rule_id(self, node: yaml.Node) -> str | None:
        value = self.text(node, "id", "a name for the rule, e.g. refund_validation")
        if value is None:
            return None
        if len(value) > MAX_ID:
            self.add(node, f"`id` is longer than {MAX_ID} characters")
            return None
        if value in self.ids:  # ids name the criteria of a score
            first = self.ids[value].start_mark.line + 1
            self.add(node, f"duplicate rule id '{value}' (first on line {first})")
            return None
        self.ids[value] = node
        return value

    def choice(self, fields: dict[str, tuple[yaml.Node, yaml.Node]], key: str,
               allowed: tuple[str, ...]) -> str | None:
        if key not in fields:
            return None
        node = fields[key][1]
        options = " or ".join(allowed) if len(allowed) < 3 else (
            f"{', '.join(allowed[:-1])} or {allowed[-1]}")
        value = self.text(node, key, options)
        if value is not None and value not in allowed:
            self.add(node, f"`{key}` must be {options}, not '{value}'")
            return None
        return value

    def condition(self, node: yaml.Node) -> Condition | None:
        call = self.call(node, "when", "agent_says(\"text\") or user_requests(\"text\")")
        if call is None:
            return None
        name, args = call
        if name in REQUIREMENTS:
            self.add(node, f"{name} is a requirement: put it under `require`; `when` takes "
                           "agent_says(...) or user_requests(...)")
            return None
        if name not in CONDITIONS:
            self.add(node, f"unknown condition '{name}'{_suggest(name, tuple(CONDITIONS))}; "
                           "`when` takes agent_says(...) or user_requests(...)")
            return None
        if len(args) != 1:
            self.add(node, f"{name} takes one quoted pattern, got {len(args)}")
            return None
        pattern = self.pattern(node, *args[0])
        return None if pattern is None else Condition(name, pattern)

    def requirement(self, node: yaml.Node) -> Requirement | None:
        call = self.call(node, "require", "tool_called(\"tool_name\")")
        if call is None:
            return None
        name, args = call
        if name in CONDITIONS:
            self.add(node, f"{name} is a condition: put it under `when`; `require` takes "
                           "tool_called(...)")
            return None
        if name not in REQUIREMENTS:
            self.add(node, f"unknown requirement '{name}'{_suggest(name, REQUIREMENTS)}; "
                           "`require` takes tool_called(\"tool_name\", ...)")
            return None
        if not args:
            self.add(node, "tool_called needs at least one quoted tool name")
            return None
        tools = []
        for value, offset in args:
            if not value.strip():
                self.add(node, "a tool name must not be empty", offset)
            tools.append(value.strip())
        return Requirement(name, tuple(tools)) if all(tools) else None

    def call(self, node: yaml.Node, key: str, example: str) -> tuple[str, list[Arg]] | None:
        if not isinstance(node, yaml.ScalarNode) or node.tag == "tag:yaml.org,2002:null":
            self.add(node, f"`{key}` must be a call such as {example}")
            return None
        try:
            return _parse_call(node.value)
        except _CallError as error:
            self.add(node, error.message + _comment_hint(node), error.offset)
            return None

    def pattern(self, node: yaml.Node, source: str, offset: int) -> Pattern | None:
        body = source[len(REGEX_PREFIX):] if source.startswith(REGEX_PREFIX) else None
        if not (source if body is None else body):
            self.add(node, "the pattern is empty: it would match every message", offset)
            return None
        if len(source) > MAX_PATTERN:
            self.add(node, f"the pattern is longer than {MAX_PATTERN} characters", offset)
            return None
        if body is None:
            return Pattern(source, regex.compile(regex.escape(source), FLAGS))
        try:
            return Pattern(source, regex.compile(body, FLAGS))
        except regex.error as error:
            where = offset + len(REGEX_PREFIX) + (error.pos or 0)
            self.add(node, f"invalid regular expression: {error.msg}", where)
            return None


Arg = tuple[str, int]  # a quoted argument's text and its offset in the condition text

_REQUIRED_HINTS = {"id": "a unique name", "when": "agent_says(\"...\") or user_requests(\"...\")",
                   "severity": "low, high or critical"}


def _parse_call(text: str) -> tuple[str, list[Arg]]:
    """`name("a", 'b')`: quotes delimit, nothing inside them is an escape."""
    pos = _skip(text, 0)
    start = pos
    while pos < len(text) and (text[pos].isalnum() or text[pos] == "_"):
        pos += 1
    name = text[start:pos]
    if not name:
        raise _CallError("expected a call such as agent_says(\"text\")", start)
    pos = _skip(text, pos)
    if pos >= len(text) or text[pos] != "(":
        raise _CallError(f"expected '(' after {name}, e.g. {name}(\"text\")", pos)
    args: list[Arg] = []
    pos = _skip(text, pos + 1)
    if pos < len(text) and text[pos] == ")":
        return name, _end(text, pos, args)
    while True:
        if pos >= len(text) or text[pos] not in "\"'":
            raise _CallError("expected a quoted string, e.g. \"refund\"", pos)
        close = text.find(text[pos], pos + 1)
        if close < 0:
            raise _CallError(f"unterminated string: no closing {text[pos]}", pos)
        args.append((text[pos + 1:close], pos + 1))
        pos = _skip(text, close + 1)
        if pos < len(text) and text[pos] == ",":
            pos = _skip(text, pos + 1)
            continue
        if pos < len(text) and text[pos] == ")":
            return name, _end(text, pos, args)
        raise _CallError("expected ',' or ')' after the string", pos)


def _end(text: str, close: int, args: list[Arg]) -> list[Arg]:
    rest = _skip(text, close + 1)
    if rest < len(text):
        raise _CallError("unexpected text after ')'", rest)
    return args


def _skip(text: str, pos: int) -> int:
    while pos < len(text) and text[pos].isspace():
        pos += 1
    return pos


def _position(node: yaml.Node, offset: int | None) -> tuple[int, int]:
    """1-based line and column of `node`, or of character `offset` of its text when the
    source spells the text verbatim on one line (plain, or quoted without escapes)."""
    start, end = node.start_mark, node.end_mark
    if offset is not None and isinstance(node, yaml.ScalarNode) and start.buffer is not None:
        quote = node.style or ""
        if start.buffer[start.pointer:end.pointer] == f"{quote}{node.value}{quote}":
            return start.line + 1, start.column + 1 + len(quote) + offset
    return start.line + 1, start.column + 1


def _comment_hint(node: yaml.Node) -> str:
    """A plain YAML value stops at ' #': say so when that cut the condition short."""
    if not isinstance(node, yaml.ScalarNode) or node.style or node.end_mark.buffer is None:
        return ""
    buffer, end = node.end_mark.buffer, node.end_mark.pointer
    line_end = buffer.find("\n", end)
    rest = buffer[end:line_end if line_end >= 0 else len(buffer)]
    if rest.lstrip().startswith("#"):
        return " (YAML reads ' #' as the start of a comment: put the whole condition in " \
               "single quotes)"
    return ""


def _suggest(word: str, options: tuple[str, ...]) -> str:
    close = difflib.get_close_matches(word, options, n=1)
    return f" (did you mean '{close[0]}'?)" if close else ""


def _yaml_problem(error: yaml.YAMLError, text: str) -> RuleProblem:
    if isinstance(error, yaml.MarkedYAMLError) and error.problem_mark is not None:
        mark = error.problem_mark
        message = error.problem or "invalid YAML"
        if error.context and error.context_mark is not None:
            message += (f" ({error.context} started at line {error.context_mark.line + 1}, "
                        f"column {error.context_mark.column + 1})")
        if "mapping values are not allowed" in message:
            message += "; a value holding ': ' must be quoted, e.g. 'agent_says(\"a: b\")'"
        if "'\\t'" in message:
            message += "; indent with spaces, not tabs"
        return {"line": mark.line + 1, "column": mark.column + 1, "message": message}
    position = getattr(error, "position", 0) or 0
    line = text.count("\n", 0, position) + 1
    column = position - (text.rfind("\n", 0, position) + 1) + 1
    return {"line": line, "column": column, "message": str(error).split("\n")[0]}


def parse_rules(text: str) -> RuleSet:
    """The rules in `text`, or RulesError listing every problem with its line and column."""
    if len(text) > MAX_TEXT:
        raise RulesError([{"line": 1, "column": 1,
                           "message": f"the rules are longer than {MAX_TEXT} characters"}])
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as error:
        raise RulesError([_yaml_problem(error, text)]) from None
    except RecursionError:  # PyYAML recurses once per level: "[[[[..." runs out of stack
        raise RulesError([{"line": 1, "column": 1, "message": "the YAML is nested too "
                           "deeply: a rule needs a few levels, not thousands"}]) from None
    checker = _Checker()
    rules = checker.rules(root)
    if checker.problems:
        raise RulesError(checker.problems)
    return RuleSet(tuple(rules))
