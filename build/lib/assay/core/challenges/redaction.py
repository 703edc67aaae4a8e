"""The redacted report of a hidden test run (evalarena §6, §12): per miss a cluster label,
the violated contract clause, and one or two excerpts of the trace with tokens masked.

Balanced redaction: an excerpt keeps only words the learner can already read (the
challenge's system prompt, tool manifest, contract and dev traces, plus common English
function words; a plural or singular of a known word counts) and its punctuation and
shape. Every other word, and every word with a digit, becomes `■■■` (one fixed width,
so lengths tell nothing); and at least a quarter of an excerpt's words are masked
whatever (the longest known words first), so no hidden sentence is shown as written.
The learner sees which message went wrong, its role, the tools and the contract terms
at stake, but not the new phrasing that a memorising eval would copy. Text a judge wrote
about a hidden trace (its cluster) is masked the same way."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import regex

MASK = "■■■"
MIN_MASKED = 0.25  # of an excerpt's words, whatever the learner already knows
EXCERPT_CHARS = 240
WORD = regex.compile(r"[\p{L}\p{N}_']+")
_FUNCTION = """a an the and or but if then than so to of in on at by for
from with without into over under about as is are was were be been being do does did done
have has had i you he she it we they me him her us them my your his its our their this that
these those there here what which who whom whose when where why how not no yes can could
will would shall should may might must please thanks thank hi hello ok okay sure let
just also all any some each more most other such only own same too very again once"""
FUNCTION_WORDS = frozenset(_FUNCTION.split())


def vocabulary(context: Mapping[str, Any], public_texts: Iterable[str]) -> frozenset[str]:
    words = set(FUNCTION_WORDS)
    for text in [context.get("system_prompt") or "", json.dumps(context.get("tools") or []),
                 *(context.get("contract") or []), *public_texts]:
        words.update(w.lower() for w in WORD.findall(text))
    return frozenset(w for w in words if not any(c.isdigit() for c in w))


def _known(word: str, known: frozenset[str]) -> bool:
    low = word.lower()
    return low in known or low + "s" in known or (low.endswith("s") and low[:-1] in known)


def mask(text: str, known: frozenset[str]) -> str:
    words = list(WORD.finditer(text))
    hidden = {i for i, m in enumerate(words) if not _known(m.group(), known)}
    # never a verbatim hidden sentence: at least MIN_MASKED of the words go, longest first
    need = math.ceil(len(words) * MIN_MASKED)
    spare = sorted((i for i, m in enumerate(words) if i not in hidden
                    and m.group().lower() not in FUNCTION_WORDS),
                   key=lambda i: (-len(words[i].group()), i))
    hidden.update(spare[:max(need - len(hidden), 0)])
    out, at = [], 0
    for i, m in enumerate(words):
        out.append(text[at:m.start()])
        out.append(MASK if i in hidden else m.group())
        at = m.end()
    out.append(text[at:])
    return "".join(out)


def message_text(message: Mapping[str, Any]) -> str:
    text = message.get("content") if isinstance(message.get("content"), str) else ""
    calls = message.get("tool_calls")
    if isinstance(calls, list) and calls:
        names = ", ".join(str(c.get("name")) for c in calls if isinstance(c, Mapping))
        text = f"{text} [calls {names}]".strip()
    return str(text)


def excerpt(messages: Sequence[Mapping[str, Any]], index: int,
            known: frozenset[str]) -> dict[str, Any]:
    message = messages[index]
    text = message_text(message)
    if len(text) > EXCERPT_CHARS:
        text = text[:EXCERPT_CHARS].rsplit(" ", 1)[0] + " …"
    return {"message_index": index, "role": str(message.get("role", "")),
            "text": mask(text, known)}


def failing_index(trace: Any) -> int:
    if trace.fail_index is not None:
        return int(trace.fail_index)
    for index in range(len(trace.messages) - 1, -1, -1):
        if trace.messages[index].get("role") == "assistant":
            return index
    return len(trace.messages) - 1


def report_entry(trace: Any, result: Mapping[str, Any], contract: Sequence[str],
                 known: frozenset[str]) -> dict[str, Any]:
    """One miss of a hidden trace, redacted."""
    messages = trace.messages
    if result["miss"] == "missed_failure":
        clause = contract[trace.violated_clause] if trace.violated_clause is not None else None
        cluster = trace.cluster or "Missed failure"
        where = failing_index(trace)
        indices = [i for i in (where - 1, where) if 0 <= i < len(messages)]
        severity = trace.severity
    else:
        clause = None
        cluster = "False alarm: " + mask(str(result.get("cluster") or "eval failed it"), known)
        flagged = [e["message_index"] for e in result.get("evidence") or ()
                   if isinstance(e.get("message_index"), int)
                   and 0 <= e["message_index"] < len(messages)]
        indices = [flagged[0] if flagged else failing_index(trace)]
        severity = result.get("severity")
    return {"trace_id": trace.key, "miss": result["miss"], "cluster": cluster[:120],
            "contract_clause": clause, "severity": severity,
            "excerpts": [excerpt(messages, i, known) for i in indices]}
