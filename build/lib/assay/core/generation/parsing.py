"""Reading a list of generated items out of a model's reply. Pure: no I/O.

Models answer in many shapes even when asked for JSON: a bare JSON array, an array inside
a ```json fence, an object wrapping the array (`{"questions": [...]}`), one JSON object per
line, or a numbered or bulleted list with a sentence before and after. `extract_items`
finds the list in any of them; the `parse_*` functions normalise the items of one kind,
drop what is unusable or repeated with a warning each, and report how many were asked for
and how many came back ("asked for 10, got 7" is said, never hidden).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

_FENCE = re.compile(r"```[a-zA-Z0-9_-]*[ \t]*\n(.*?)```", re.DOTALL)
_MARKER = re.compile(
    r"^\s*(?:(?:\(?\d{1,4}[.):\]]|\d{1,4}\s*-|[-*\u2022+])\s+|(?:q|question)\s*\d{1,4}\s*[:.)-]\s*)",
    re.IGNORECASE)
_WRAPPERS = ("items", "questions", "cases", "conversations", "data", "results", "examples")
_QUESTION_KEYS = ("question", "text", "q", "prompt", "input")
_ANSWER_KEYS = ("answer", "expected", "ground_truth", "a", "reference")


@dataclass
class Parsed:
    items: list[dict[str, Any]]
    requested: int
    warnings: list[str] = field(default_factory=list)

    @property
    def received(self) -> int:
        return len(self.items)


def _json_list(value: Any) -> list[Any] | None:
    """The list a decoded JSON value holds: itself, or the one list of a wrapping object."""
    if isinstance(value, list):
        return value
    if isinstance(value, dict):
        for key in _WRAPPERS:
            if isinstance(value.get(key), list):
                return list(value[key])
        lists = [v for v in value.values() if isinstance(v, list)]
        if len(lists) == 1:
            return list(lists[0])
    return None


def _embedded_json(text: str) -> list[Any] | None:
    """The first JSON array (or object holding one) inside prose."""
    decoder = json.JSONDecoder()
    for match in re.finditer(r"[\[{]", text):
        try:
            value, _ = decoder.raw_decode(text, match.start())
        except ValueError:
            continue
        found = _json_list(value)
        if found is not None:
            return found
    return None


def _json_lines(text: str) -> list[Any] | None:
    """One JSON object per line (JSONL), when every non-blank line is one."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if len(lines) < 2 or not all(line.startswith("{") for line in lines):
        return None
    out = []
    for line in lines:
        try:
            out.append(json.loads(line.rstrip(",")))
        except ValueError:
            return None
    return out


def _clean(text: str) -> str:
    text = text.strip().replace("**", "").replace("__", "")
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'`":
        text = text[1:-1].strip()
    return re.sub(r"\s+", " ", text)


def _listed_lines(text: str) -> tuple[list[str], bool]:
    """Items of a numbered or bulleted list (a line without a marker right under an item
    continues it; prose before, between and after the list is left out), and whether any
    marker was found. Without markers, one item per non-blank line."""
    items: list[str] = []
    open_item = False
    for line in text.splitlines():
        if not line.strip():
            open_item = False
            continue
        marker = _MARKER.match(line)
        if marker:
            items.append(line[marker.end():])
            open_item = True
        elif open_item:
            items[-1] += " " + line.strip()
    if items:
        return [c for c in (_clean(i) for i in items) if c], True
    lines = [_clean(line) for line in text.splitlines()]
    return [line for line in lines if line and not line.endswith(":")], False


def extract_items(text: str) -> tuple[list[Any], list[str]]:
    """The list in a reply, and warnings about how it had to be read."""
    body = text.strip()
    if not body:
        return [], ["the reply was empty"]
    for block in _FENCE.findall(body):
        try:
            found = _json_list(json.loads(block))
        except ValueError:
            found = _embedded_json(block) or _json_lines(block)
        if found is not None:
            return found, []
    try:
        found = _json_list(json.loads(body))
    except ValueError:
        found = None
    if found is not None:
        return found, []
    found = _embedded_json(body) or _json_lines(body)
    if found is not None:
        return found, []
    lines, marked = _listed_lines(_FENCE.sub(lambda m: m.group(1), body))
    if not lines:
        return [], ["no list found in the reply"]
    if not marked:
        return lines, ["no JSON or list markers in the reply: read one item per line"]
    return lines, []


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return _clean(value)
    if isinstance(value, bool | int | float):
        return str(value)
    return _clean(json.dumps(value, ensure_ascii=False))


def _first(item: dict[str, Any], keys: tuple[str, ...]) -> Any:
    lowered = {str(k).lower(): v for k, v in item.items()}
    for key in keys:
        if key in lowered and lowered[key] not in (None, ""):
            return lowered[key]
    return None


def _norm_key(value: Any) -> str:
    return re.sub(r"\W+", " ", json.dumps(value, sort_keys=True, ensure_ascii=False).lower())


def _finish(items: list[dict[str, Any]], keys: list[str], requested: int,
            warnings: list[str], noun: str) -> Parsed:
    """Dedupe (by `keys`), cut to `requested`, and say what came back."""
    seen: set[str] = set()
    unique: list[dict[str, Any]] = []
    for item, key in zip(items, keys, strict=True):
        if key in seen:
            continue
        seen.add(key)
        unique.append(item)
    duplicates = len(items) - len(unique)
    if duplicates:
        warnings.append(f"{duplicates} duplicate {noun}(s) dropped")
    if len(unique) > requested:
        warnings.append(f"got {len(unique)} {noun}s, kept the first {requested}")
        unique = unique[:requested]
    elif len(unique) < requested:
        warnings.append(f"asked for {requested} {noun}s, got {len(unique)}")
    return Parsed(unique, requested, warnings)


def parse_questions(text: str, requested: int) -> Parsed:
    """Items `{question, answer}` (answer None when the model gave none)."""
    raw, warnings = extract_items(text)
    items: list[dict[str, Any]] = []
    dropped = 0
    for entry in raw:
        if isinstance(entry, dict):
            question, answer = _text(_first(entry, _QUESTION_KEYS)), _first(entry, _ANSWER_KEYS)
        else:
            question, answer = _text(entry), None
        if not question:
            dropped += 1
            continue
        items.append({"question": question, "answer": _text(answer) or None})
    if dropped:
        warnings.append(f"{dropped} item(s) without a question dropped")
    keys = [_norm_key(i["question"]) for i in items]
    return _finish(items, keys, requested, warnings, "question")


def parse_cases(text: str, variables: list[str], requested: int) -> Parsed:
    """Items `{input: {variable: value...}, expected, edge_case}`; a row missing a variable is
    dropped with a warning naming it."""
    raw, warnings = extract_items(text)
    items: list[dict[str, Any]] = []
    missing: dict[str, int] = {}
    unusable = 0
    for entry in raw:
        if isinstance(entry, str) and len(variables) == 1:
            entry = {variables[0]: entry}
        if not isinstance(entry, dict):
            unusable += 1
            continue
        nested = entry.get("input")
        source: dict[str, Any] = nested if isinstance(nested, dict) else entry
        values = {name: source.get(name) for name in variables}
        absent = [name for name, value in values.items() if value in (None, "")]
        if absent:
            for name in absent:
                missing[name] = missing.get(name, 0) + 1
            continue
        expected = entry.get("expected", entry.get("expected_output"))
        items.append({
            "input": {name: value if isinstance(value, str) else _text(value)
                      for name, value in values.items()},
            "expected": _text(expected) or None,
            "edge_case": entry.get("edge_case") is True})
    for name, count in sorted(missing.items()):
        warnings.append(f"{count} case(s) missing variable {name!r} dropped")
    if unusable:
        warnings.append(f"{unusable} item(s) that are not objects dropped")
    keys = [_norm_key(i["input"]) for i in items]
    return _finish(items, keys, requested, warnings, "case")


def _turns_of(entry: Any) -> list[Any] | None:
    if isinstance(entry, list):
        return entry
    if isinstance(entry, dict):
        for key in ("turns", "messages", "conversation"):
            if isinstance(entry.get(key), list):
                return list(entry[key])
    return None


def _from_messages(messages: list[Any]) -> list[dict[str, Any]] | None:
    """Chat messages (user, assistant, user...) as turns; None when they are not messages."""
    if not all(isinstance(m, dict) and "role" in m for m in messages):
        return None
    turns: list[dict[str, Any]] = []
    for message in messages:
        role, content = str(message.get("role")).lower(), _text(message.get("content"))
        if role == "user":
            turns.append({"question": content, "ground_truth": ""})
        elif role == "assistant" and turns and not turns[-1]["ground_truth"]:
            turns[-1]["ground_truth"] = content
    return turns


def parse_conversations(text: str, turns: int, requested: int) -> Parsed:
    """Items `{turns: [{turn_number, question, ground_truth}]}`; a conversation with a turn
    lacking its question or its ground truth is dropped with a warning."""
    raw, warnings = extract_items(text)
    items: list[dict[str, Any]] = []
    unusable = incomplete = short = 0
    for entry in raw:
        found = _turns_of(entry)
        if not found:
            unusable += 1
            continue
        parsed = _from_messages(found)
        if parsed is None:
            parsed = [{"question": _text(_first(t, ("question", "user", "q"))),
                       "ground_truth": _text(_first(t, ("ground_truth", "answer",
                                                        "assistant", "a")))}
                      if isinstance(t, dict) else {"question": "", "ground_truth": ""}
                      for t in found]
        if not parsed or any(not t["question"] or not t["ground_truth"] for t in parsed):
            incomplete += 1
            continue
        if len(parsed) < turns:
            short += 1
        parsed = parsed[:turns]
        items.append({"turns": [{"turn_number": n, **t} for n, t in enumerate(parsed, 1)]})
    if unusable:
        warnings.append(f"{unusable} item(s) that are not conversations dropped")
    if incomplete:
        warnings.append(f"{incomplete} conversation(s) with a turn lacking its question or "
                        "ground truth dropped")
    if short:
        warnings.append(f"{short} conversation(s) have fewer than the {turns} turns asked for")
    keys = [_norm_key([t["question"] for t in i["turns"]]) for i in items]
    return _finish(items, keys, requested, warnings, "conversation")


# --- per kind, and batches combined ------------------------------------------------------

KINDS = ("questions", "cases", "conversations")
NOUNS = {"questions": "question", "cases": "case", "conversations": "conversation"}


def item_key(kind: str, item: dict[str, Any]) -> str:
    """What makes two items the same (for dedupe)."""
    if kind == "questions":
        return _norm_key(item["question"])
    if kind == "cases":
        return _norm_key(item["input"])
    return _norm_key([t["question"] for t in item["turns"]])


def parse(kind: str, text: str, spec: dict[str, Any], requested: int) -> Parsed:
    if kind == "questions":
        return parse_questions(text, requested)
    if kind == "cases":
        return parse_cases(text, list(spec["variables"]), requested)
    return parse_conversations(text, int(spec["turns"]), requested)


def counting(warning: str) -> bool:
    """A warning that only counts items ("asked for 10 questions, got 7")."""
    return warning.startswith(("asked for ", "got "))


def combine(kind: str, parts: list[Parsed], requested: int,
            warnings: list[str] | None = None) -> Parsed:
    """The items of every batch as one list: deduped across batches, cut to `requested`,
    with the batches' own warnings (not their counts: the total is counted once)."""
    noun = NOUNS[kind]
    items = [item for part in parts for item in part.items]
    said = list(warnings or [])
    for part in parts:
        said += [w for w in part.warnings if not counting(w) and w not in said]
    return _finish(items, [item_key(kind, i) for i in items], requested, said, noun)
