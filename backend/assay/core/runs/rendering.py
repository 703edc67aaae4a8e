"""The messages one cell sends: a case's input, rendered through a prompt version (if any),
for one user turn of a conversation. Pure.

- questions {question}: the question as the user message; with a prompt version, its
  template rendered with {{question}}.
- cases {<variable>: text}: the template rendered with the case's variables (a prompt
  version is required: runs without one are refused before they start).
- conversations {messages}: the messages up to and including the turn-th user message
  (turn counts from 0), keeping at most `max_history_pairs` user/assistant exchanges
  before it; the conversation's system messages are always kept.

A prompt version's system text (rendered with the case's variables) comes first, as a
system message, then its few-shot examples as user/assistant pairs, then the case.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from assay.core.prompts.models import PromptVersion
from assay.core.prompts.service import parse_variables, render

DEFAULT_HISTORY_PAIRS = 10  # rag-eval EvalSettings.max_conversation_history

@dataclass(frozen=True)
class PromptParts:
    template: str
    system: str | None = None
    few_shots: Sequence[Mapping[str, str]] = field(default_factory=tuple)
    # function tools `{name, description?, parameters?}` (core/prompts/tools.py), sent with
    # every call as params["tools"]; each adapter writes them in its provider's shape
    tools: Sequence[Mapping[str, Any]] = field(default_factory=tuple)


def parts_of(version: PromptVersion | None) -> PromptParts | None:
    """What a target's calls need of its prompt version (None: the target has none)."""
    if version is None:
        return None
    return PromptParts(version.template, version.system, tuple(version.few_shots or ()),
                       tuple(version.tools or ()))


def is_conversation(case_input: Mapping[str, Any]) -> bool:
    return isinstance(case_input.get("messages"), list)


def _values(case_input: Mapping[str, Any]) -> dict[str, Any]:
    """The variables a case gives a template (a conversation gives none)."""
    if is_conversation(case_input):
        return {}
    return {k: v for k, v in case_input.items() if isinstance(v, str | int | float)
            and not isinstance(v, bool)}


def missing_variables(prompt: PromptParts | None, case_input: Mapping[str, Any]) -> list[str]:
    """The prompt's variables this case has no value for (a conversation renders only the
    system text, so only its variables count)."""
    if prompt is None:
        return []
    values = _values(case_input)
    used = (parse_variables(prompt.system) if is_conversation(case_input)
            else parse_variables(prompt.template, prompt.system))
    return [name for name in used if name not in values]


def user_turns(case_input: Mapping[str, Any]) -> int:
    """How many cells a case makes per target and repeat: its user turns (1 if not a
    conversation)."""
    if not is_conversation(case_input):
        return 1
    return sum(1 for m in case_input["messages"] if isinstance(m, dict)
               and m.get("role") == "user")


def _history(messages: Sequence[Mapping[str, Any]], turn: int,
             max_pairs: int) -> list[dict[str, Any]]:
    seen, end = -1, len(messages)
    for index, message in enumerate(messages):
        if message.get("role") == "user":
            seen += 1
            if seen == turn:
                end = index
                break
    if seen != turn:
        raise ValueError(f"the conversation has no user turn {turn}")
    before = messages[:end]
    systems = [dict(m) for m in before if m.get("role") == "system"]
    groups: list[list[dict[str, Any]]] = []  # one exchange: a user message and its replies
    for message in before:
        if message.get("role") == "system":
            continue
        if message.get("role") == "user" or not groups:
            groups.append([])
        groups[-1].append(dict(message))
    kept = groups[-max_pairs:] if max_pairs > 0 else []
    return [*systems, *(m for group in kept for m in group), dict(messages[end])]


def cell_messages(case_input: Mapping[str, Any], prompt: PromptParts | None, turn: int = 0,
                  max_history_pairs: int = DEFAULT_HISTORY_PAIRS) -> list[dict[str, Any]]:
    values = _values(case_input)
    system: list[dict[str, Any]] = []
    shots: list[dict[str, Any]] = []
    if prompt is not None:
        if prompt.system:
            system.append({"role": "system", "content": render(prompt.system, values)})
        for shot in prompt.few_shots:
            shots += [{"role": "user", "content": str(shot["input"])},
                      {"role": "assistant", "content": str(shot["output"])}]
    if is_conversation(case_input):
        body = _history(case_input["messages"], turn, max_history_pairs)
        own_system = [m for m in body if m.get("role") == "system"]
        rest = [m for m in body if m.get("role") != "system"]
        return [*system, *own_system, *shots, *rest]
    if prompt is not None:
        return [*system, *shots, {"role": "user", "content": render(prompt.template, values)}]
    text = case_input.get("question") or case_input.get("prompt")
    if text is None:
        text = "\n".join(f"{k}: {v}" for k, v in values.items()) or str(dict(case_input))
    return [{"role": "user", "content": str(text)}]
