"""Coverage of a version (edison FR-EC-004 "Coverage Analysis"): how its cases spread over
tags, input length, difficulty and language, as counts for a chart.

Length buckets count the characters of a case's input text (the question, the variables'
values joined, or the user turns of a conversation or trace):
XS < 50 <= S < 200 <= M < 1,000 <= L < 5,000 <= XL.

Language is a cheap heuristic on the script of the letters (no package, no model): the
dominant Unicode script names the language for scripts used by one language (ja when kana
appear, zh for Han alone, ko, ru for Cyrillic, ar, he, el, th, hi for Devanagari); Latin
text is told apart by common stop words (en, fr, de, es, it, pt, nl) and is "latin" when none
match; text without letters is "unknown"."""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from typing import Any

from sqlalchemy.orm import Session

from assay.core.datasets import service
from assay.core.datasets.cases import input_text
from assay.core.datasets.models import Dataset, DatasetVersion

BUCKETS = (("XS", 50), ("S", 200), ("M", 1_000), ("L", 5_000), ("XL", None))
STOPWORDS = {
    "en": {"the", "and", "is", "of", "to", "what", "how", "in", "you", "are", "with", "this"},
    "fr": {"le", "la", "les", "et", "est", "des", "une", "que", "pour", "dans", "vous", "quel"},
    "de": {"der", "die", "das", "und", "ist", "nicht", "ein", "eine", "mit", "wie", "was", "ich"},
    "es": {"el", "los", "las", "y", "es", "una", "por", "para", "que", "qué", "cómo", "con"},
    "it": {"il", "gli", "della", "che", "è", "un", "per", "non", "sono", "come", "cosa", "di"},
    "pt": {"o", "os", "não", "uma", "que", "é", "para", "com", "como", "você", "do", "da"},
    "nl": {"de", "het", "een", "en", "is", "van", "niet", "wat", "hoe", "ik", "je", "met"},
}
SCRIPTS = (("HIRAGANA", "ja"), ("KATAKANA", "ja"), ("HANGUL", "ko"), ("CJK", "zh"),
           ("CYRILLIC", "ru"), ("ARABIC", "ar"), ("HEBREW", "he"), ("GREEK", "el"),
           ("THAI", "th"), ("DEVANAGARI", "hi"))
WORD = re.compile(r"[^\W\d_]+", re.UNICODE)


def length_bucket(text: str) -> str:
    for name, below in BUCKETS:
        if below is None or len(text) < below:
            return name
    return "XL"


def language(text: str) -> str:
    scripts: Counter[str] = Counter()
    latin = 0
    for char in text[:2000]:
        if not char.isalpha():
            continue
        name = unicodedata.name(char, "")
        if name.startswith("LATIN"):
            latin += 1
            continue
        for prefix, code in SCRIPTS:
            if name.startswith(prefix):
                scripts[code] += 1
                break
    if not latin and not scripts:
        return "unknown"
    if scripts and sum(scripts.values()) >= latin:
        if scripts["ja"]:
            return "ja"
        return scripts.most_common(1)[0][0]
    words = [w.lower() for w in WORD.findall(text[:2000])]
    scores = {code: sum(1 for w in words if w in stop) for code, stop in STOPWORDS.items()}
    best = max(scores, key=lambda code: scores[code])
    return best if scores[best] else "latin"


def _rows(counter: Counter[str], order: list[str] | None = None) -> list[dict[str, Any]]:
    keys = order if order is not None else [k for k, _ in sorted(
        counter.items(), key=lambda item: (-item[1], item[0]))]
    return [{"key": key, "count": counter[key]} for key in keys]


def coverage(session: Session, dataset: Dataset, version: DatasetVersion) -> dict[str, Any]:
    tags: Counter[str] = Counter()
    lengths: Counter[str] = Counter()
    difficulty: Counter[str] = Counter()
    languages: Counter[str] = Counter()
    cases = service.version_cases(session, version.id)
    for case in cases:
        tags.update(case.tags or ["(untagged)"])
        text = input_text(dataset.kind, case.input, case.trace)
        lengths[length_bucket(text)] += 1
        difficulty[case.difficulty or "unset"] += 1
        languages[language(text)] += 1
    return {"version": version.number, "case_count": len(cases), "by_tag": _rows(tags),
            "by_length": _rows(lengths, [name for name, _ in BUCKETS]),
            "by_difficulty": _rows(difficulty, [*("easy", "medium", "hard"), "unset"]),
            "by_language": _rows(languages)}
