"""Text helpers of the fake provider's content-aware replies (``fake_answers.py``): words,
overlap between texts, sentences, data blocks of judge prompts, and seeded jitter.

Everything is deterministic: the jitter hashes its inputs with the provider's seed
(blake2b, not ``hash()``, which differs between processes).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'\u2019-]*")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")
_BLOCK = re.compile(r'<data-([0-9a-f]+) name="([^"]*)">\n(.*?)\n</data-\1>', re.DOTALL)
STOPWORDS = frozenset("""
a an the and or but if then than so of to in on at by for with from into onto about as
is are was were be been being do does did done have has had having it its this that
these those there here what which who whom whose when where why how can could should
would will shall may might must not no yes you your yours we our us they them their he
she his her i me my mine any all each every some such more most much many very also just
only own same other again says say said please tell give one two please within without
per via up down out over under
""".split())  # noqa: SIM905 (a word list reads better)


def words(text: str) -> list[str]:
    return _WORD.findall(text)


def content_words(text: str) -> set[str]:
    """Lower-case words of 3+ letters that carry meaning (stopwords left out)."""
    return {w for w in (x.lower().strip("'\u2019-") for x in words(text))
            if len(w) >= 3 and w not in STOPWORDS}


def recall(text: str, target: str) -> float:
    """The share of `target`'s content words that `text` contains (1.0 when `target` has
    none: there is nothing to miss)."""
    wanted = content_words(target)
    if not wanted:
        return 1.0
    return len(wanted & content_words(text)) / len(wanted)


def shared(text: str, target: str, limit: int = 3) -> list[str]:
    """Up to `limit` content words of `target` found in `text`, in `target`'s order."""
    have = content_words(text)
    out: list[str] = []
    for word in words(target):
        w = word.lower()
        if w in have and w not in out:
            out.append(w)
            if len(out) == limit:
                break
    return out


def _heading(line: str) -> bool:
    """A title line of extracted text (PDFs lose the blank line after one): short,
    capitalised, with no closing punctuation."""
    stripped = line.strip()
    return (bool(stripped) and stripped[0].isupper() and len(stripped.split()) <= 8
            and stripped[-1] not in ".!?:;,")


def sentences(text: str) -> list[str]:
    """The sentences of prose (blank lines, headings and bullets also end one), stripped."""
    out: list[str] = []
    text = "\n".join("" if _heading(line) else line for line in text.splitlines())
    for para in re.split(r"\n\s*\n|\n(?=\s*[-*•]\s)|\n(?=#)", text):
        flat = " ".join(para.split()).lstrip("-*• ").strip()
        out.extend(s.strip() for s in _SENTENCE.split(flat) if len(words(s)) >= 4)
    return out


def data_blocks(text: str) -> dict[str, str]:
    """The data blocks of a judge prompt, by label (the first of a label wins)."""
    found: dict[str, str] = {}
    for _, label, body in _BLOCK.findall(text):
        found.setdefault(label, body)
    return found


def unit(seed: int, *parts: object) -> float:
    """A number in [0, 1) fixed by the seed and `parts`."""
    digest = hashlib.blake2b("\x1f".join(map(str, (seed, *parts))).encode(),
                             digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


def jitter(seed: int, spread: float, *parts: object) -> float:
    """A number in [-spread, spread) fixed by the seed and `parts`."""
    return (unit(seed, *parts) * 2 - 1) * spread


def clamp(value: float, low: float = 0.0, high: float = 1.0) -> float:
    return max(low, min(high, value))


def pick(seed: int, options: Iterable[str], *parts: object) -> str:
    items = list(options)
    return items[int(unit(seed, *parts) * len(items))]


def length_fit(text: str, low: int = 12, high: int = 160) -> float:
    """1.0 for an answer of `low`..`high` words, less for shorter or far longer ones."""
    n = len(words(text))
    if n < low:
        return n / low
    if n > high:
        return clamp(high / n)
    return 1.0
