"""Defences against material that tries to instruct a judge.

Untrusted text (the output under test, case inputs, conversations, documents) reaches a
judge only inside a data block whose tag carries a random id drawn for each call
(`new_nonce`), so a closing tag cannot be forged by guessing. Independently of the id,
`neutralise` defuses anything in the text that looks like one of those tags (any id, any
spacing, look-alike angle brackets), so even a correct guess could not close the block.
`injection_signals` is a light detector that flags judge-directed instructions for the
reviewer; it does not change scores.
"""

from __future__ import annotations

import re
import secrets
from typing import Any

from assay.scorers.judge_prompts import BLOCK

INJECTION_FLAG = "injection:judge"
NONCE_BYTES = 16  # 128 bits: a block's id cannot be guessed

# "<" and its look-alikes, followed by an optional "/" and the tag name "data-".
_TAG = re.compile(r"[<\uFF1C\uFE64\u2039\u3008\u27E8](?=\s*/?\s*data\s*-)", re.IGNORECASE)
_ESCAPED_LT = "&lt;"

_SIGNALS: dict[str, re.Pattern[str]] = {
    "override": re.compile(
        r"\b(ignore|disregard|forget|override|skip)\b[^.\n]{0,30}\b(previous|prior|above|"
        r"earlier|preceding|your|all|the|these|system)\b[^.\n]{0,20}\b(instructions?|rules|"
        r"rubric|prompt|guidelines|criteria|directions)\b", re.IGNORECASE),
    "score_request": re.compile(
        r"\b(give|assign|award|grade|score|mark|rate (this|it|the|my|our|me|us))\b"
        r"[^.\n]{0,40}(\b10\s*/\s*10\b|\b5\s*/\s*5\b|\b100\s*/\s*100\b|\bfull marks\b|"
        r"\bperfect (score|rating|marks?)\b|"
        r"\b(maximum|max|highest|top) (score|rating|marks?)\b)", re.IGNORECASE),
    "judge_address": re.compile(
        r"\b(dear|attention|note to|message to|hey|hello|instructions? (for|to))\s+(the\s+)?"
        r"(ai\s+|llm\s+)?(judge|evaluator|grader|scorer|assessor|reviewer)s?\b", re.IGNORECASE),
    "fake_delimiter": re.compile(
        r"[<\uFF1C\uFE64\u2039\u3008\u27E8]\s*/?\s*data\s*-|<\|(im_start|im_end|system|"
        r"endoftext)\|>|\[/?INST\]|<</?SYS>>|\bend of (the )?(data|output|response|block)\b",
        re.IGNORECASE),
    "fake_verdict": re.compile(
        r"\{\s*\"(criteria|scores?|winner|verdict|pass|severity)\"\s*:", re.IGNORECASE),
    "prompt_takeover": re.compile(
        r"\b(new|updated|real|actual|hidden) (system )?(instructions|prompt|rules)\s*:|"
        r"\bsystem (prompt|message|override)\b|\byou are now\b", re.IGNORECASE),
}


def new_nonce() -> str:
    """A fresh random block id (hex), one per judge call."""
    return secrets.token_hex(NONCE_BYTES)


def neutralise(text: str) -> str:
    """`text` with every data-block-like tag defused: its "<" (or look-alike) becomes
    "&lt;", which a judge reads as text, not as a tag."""
    return _TAG.sub(_ESCAPED_LT, text)


def data_block(nonce: str, label: str, text: str) -> str:
    """`text` fenced as data in a block tagged with `nonce`. `label` is Assay's own
    (trusted) name for the block."""
    return BLOCK.format(nonce=nonce, label=label, text=neutralise(text))


def injection_signals(text: str | None) -> list[str]:
    """The kinds of judge-directed instruction found in `text`, sorted (empty: none)."""
    if not text:
        return []
    return sorted(name for name, pattern in _SIGNALS.items() if pattern.search(text))


def injection_report(text: str | None) -> tuple[dict[str, Any], tuple[str, ...]]:
    """The details and flags a score carries about `text`'s judge-directed instructions."""
    signals = injection_signals(text)
    if not signals:
        return {"injection_suspected": False}, ()
    return {"injection_suspected": True, "injection_signals": signals}, (INJECTION_FLAG,)
