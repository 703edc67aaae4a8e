"""The fake provider around retrieval-augmented prompts: two models under test that answer
from the context their prompt carries ("*copier*" repeats the passages that best match the
question, "*contradicter*" states their opposite), and the measure the fake judges rate
groundedness with when they are given retrieved context: the share of the answer's
sentences the context supports, where a sentence that negates what the context says or
gives a number it does not is unsupported however many words it shares with it."""

from __future__ import annotations

import re

from assay.providers import fake_text as t

_CHUNK = re.compile(r"^\[(\d+)\] ", re.MULTILINE)
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_NEGATION = re.compile(r"\b(?:not|never|no|none|cannot|nothing|neither|nor)\b|n't\b", re.I)
_AUXILIARY = re.compile(r"\b(is|are|was|were|can|will|must|may|should|has|have|does|do)\b",
                        re.I)
ANSWER_SENTENCES = 2
SUPPORTED = 0.6  # share of a sentence's content words the context must hold


def context_of(prompt: str) -> list[str]:
    """The numbered passages ("[1] ...") of a prompt, in order; [] when it has none."""
    starts = list(_CHUNK.finditer(prompt))
    out = []
    for i, match in enumerate(starts):
        end = starts[i + 1].start() if i + 1 < len(starts) else len(prompt)
        body = prompt[match.end():end]
        cut = body.find("\n\nQuestion:")
        out.append((body[:cut] if cut >= 0 else body).strip())
    return [p for p in out if p]


def question_of(prompt: str) -> str:
    index = prompt.rfind("Question:")
    return prompt[index + len("Question:"):].strip() if index >= 0 else prompt


def best_sentences(passages: list[str], question: str, n: int = ANSWER_SENTENCES) -> list[str]:
    """The n sentences of the passages that share most with the question, in their order."""
    found = [s for p in passages for s in t.sentences(p) if t.words(s)]
    ranked = sorted(range(len(found)), key=lambda i: (-t.recall(found[i], question), i))
    return [found[i] for i in sorted(ranked[:n])]


def _negate(sentence: str) -> str:
    def shifted(match: re.Match[str]) -> str:
        digits = match.group(0).replace(",", "")
        try:
            return str(int(float(digits)) * 3 + 7)
        except ValueError:
            return match.group(0)
    changed = _NUMBER.sub(shifted, sentence)
    if _NEGATION.search(changed):
        return _NEGATION.sub("always", changed, count=1)
    if _AUXILIARY.search(changed):
        return _AUXILIARY.sub(lambda m: f"{m.group(1)} not", changed, count=1)
    return f"It is not true that {changed[0].lower()}{changed[1:]}"


def answer(model: str, prompt: str) -> str | None:
    """The copier's or the contradicter's reply to a prompt with context; None when the
    model is neither or the prompt carries no context."""
    copier, contradicter = "copier" in model, "contradict" in model
    passages = context_of(prompt) if copier or contradicter else []
    if not passages:
        return None
    chosen = best_sentences(passages, question_of(prompt))
    if copier:
        return " ".join(chosen)
    return " ".join(_negate(s) for s in chosen)


def _numbers(text: str) -> set[str]:
    return {n.replace(",", "") for n in _NUMBER.findall(text)}


def supported(sentence: str, context: str) -> bool:
    """The context says this: its content words are there, its numbers are, and it does
    not negate the context's sentence it follows most closely (or the reverse)."""
    if not t.content_words(sentence):
        return True  # nothing claimed
    if t.recall(context, sentence) < SUPPORTED:
        return False
    if not _numbers(sentence) <= _numbers(context):
        return False
    closest = max(t.sentences(context) or [context], key=lambda s: t.recall(s, sentence))
    return bool(_NEGATION.search(sentence)) == bool(_NEGATION.search(closest))


def support(output: str, context: str) -> float:
    """The share of the output's sentences the context supports (0 for no sentence)."""
    claims = [s for s in t.sentences(output) if t.words(s)]
    if not claims:
        return 0.0
    return sum(supported(s, context) for s in claims) / len(claims)
