"""The fake provider as a judge: replies to Assay's judge prompts (``scorers/judge_prompts``)
in the exact JSON each asks for, with scores that follow the material judged.

A request is recognised by the answer format its prompt requires (the JSON skeleton after
"## Answer format", which is also what the strict response_format schema encodes), never
by the task's wording. Scores come from plain text measures of the output under test: how
much of the reference or grounding it covers, how much of the question it addresses, its
length and form; a small seeded jitter per judge and criterion keeps judges from agreeing
perfectly. So a better output scores higher, different models get different scores, and
the same request always gets the same reply.
"""

from __future__ import annotations

import json
import re
from typing import Any

from assay.providers import fake_rag
from assay.providers import fake_text as t

RUBRIC_LINE = re.compile(r'"([^"\n]+)": \{"score": <number from (\d+) to (\d+)>')
CONFIDENCE_MARK = '"confidence": <number from 0 to 1'  # judge_prompts.CONFIDENCE_LINE
PAIRWISE_MARK = '"winner": "1" | "2" | "tie"'
VERDICT_MARK = '{"pass": true | false'
META_MARK = '"references_contract": true | false'
QUESTION_CRITERIA = frozenset({"clarity", "difficulty", "relevance", "originality", "overall"})
VAGUE = ("good", "appropriate", "appropriately", "helpful", "reasonable", "properly",
         "adequate", "nice", "well", "correctly", "clear", "polite")
_MESSAGE = re.compile(r"^\[(\d+)\] (\w+)(?: \([^)]*\))?: ?(.*)$")


def _dump(obj: dict[str, Any]) -> str:
    return json.dumps(obj, ensure_ascii=False)


def kind_of(text: str, schema_props: set[str]) -> str | None:
    """Which judge reply the prompt asks for (the schema's fields confirm it when sent)."""
    if RUBRIC_LINE.search(text) or {"criteria", "summary"} <= schema_props:
        return "rubric"
    if PAIRWISE_MARK in text or "winner" in schema_props:
        return "pairwise"
    if VERDICT_MARK in text or "pass" in schema_props:
        return "verdict"
    if META_MARK in text or "references_contract" in schema_props:
        return "meta"
    return None


def reply(kind: str, text: str, judge: str, seed: int) -> str:
    if kind == "rubric":
        return rubric(text, judge, seed)
    if kind == "pairwise":
        return pairwise(text, judge, seed)
    if kind == "verdict":
        return verdict(text, judge, seed)
    return meta(text)


# --- measures ------------------------------------------------------------------------------

def fluency(text: str) -> float:
    """Form: sentences that end properly and are of a readable length."""
    stripped = text.strip()
    if not stripped:
        return 0.0
    # an answer that only asks back (ends on a question) is not fluent as an answer
    score = 1.0 if stripped[-1] in ".!\"')" else 0.5 if stripped[-1] == "?" else 0.75
    n = max(1, len(t.sentences(stripped)))
    per = len(t.words(stripped)) / n
    return score * (1.0 if per <= 35 else 0.8)


def _grounding(blocks: dict[str, str]) -> str | None:
    if "reference answer" in blocks:
        return blocks["reference answer"]
    for label, body in blocks.items():
        if label.startswith("grounding"):
            return body
    return None


def _question(blocks: dict[str, str]) -> str:
    if "question" in blocks:
        return blocks["question"]
    before = blocks.get("conversation before the output", "")
    users = [m[2] for m in _messages(before) if m[1] == "user"]
    return blocks.get("case input", "") + ("\n" + users[-1] if users else "")


def _criterion_signal(name: str, output: str, grounding: str | None, question: str,
                      context: str | None = None) -> float:
    """`context`: retrieved passages the answer was given; groundedness is then the share
    of its sentences they support (a contradiction is unsupported), not word coverage."""
    key = name.casefold()
    rel = t.recall(output, question) if t.content_words(question) else 0.7
    cover = t.recall(output, grounding) if grounding else None
    form = 0.5 * t.length_fit(output) + 0.5 * fluency(output)
    if any(k in key for k in ("ground", "faith", "accur", "correct", "fact", "support",
                              "precis", "truth")):
        if context is not None:
            return fake_rag.support(output, context)
        return cover if cover is not None else 0.6 * rel + 0.2
    if any(k in key for k in ("relev", "address", "topic", "helpful", "complete", "useful")):
        return 0.5 * rel + 0.2 * t.length_fit(output) + 0.3 * (
            cover if cover is not None else t.length_fit(output))
    if any(k in key for k in ("fluen", "coheren", "clar", "style", "tone", "read",
                              "concis", "format", "grammar")):
        return form
    parts = [rel, form] + ([cover, cover] if cover is not None else [])
    return sum(parts) / len(parts)


def _question_signal(name: str, question: str, reference: str | None, seed: int) -> float:
    n = len(t.words(question))
    clarity = (1.0 if question.strip().endswith("?") else 0.7) * (1.0 if 6 <= n <= 35 else 0.6)
    difficulty = t.clamp(len(t.content_words(question)) / 10)
    relevance = t.clamp(0.4 + t.recall(question, reference)) if reference else 0.7
    originality = 0.35 + 0.6 * t.unit(seed, "originality", question)
    values = {"clarity": clarity, "difficulty": difficulty, "relevance": relevance,
              "originality": originality}
    if name in values:
        return values[name]
    return sum(values.values()) / len(values)


def _why(name: str, output: str, grounding: str | None, question: str) -> str:
    if grounding and any(k in name.casefold() for k in ("ground", "accur", "correct", "fact")):
        have, want = t.content_words(output), t.content_words(grounding)
        hits = t.shared(output, grounding)
        return (f"Covers {len(have & want)} of {len(want)} key terms of the reference"
                + (f" ({', '.join(hits)})." if hits else "."))
    hits = t.shared(output, question)
    return (f"{len(t.words(output))} words; addresses "
            + (", ".join(hits) if hits else "little of the question") + ".")


def _label(value: float) -> str:
    return "Strong" if value >= 0.75 else "Adequate" if value >= 0.5 else \
        "Weak" if value >= 0.25 else "Poor"


# --- the replies ---------------------------------------------------------------------------

def confidence(values: list[float], grounding: str | None, output: str, judge: str,
               seed: int) -> float:
    """How sure a judge is: more when its criteria agree and the output is clearly good or
    clearly bad, and when there is a reference to check against; rounded to 0.01."""
    if not values:
        return 0.5
    mean = sum(values) / len(values)
    spread = max(values) - min(values)
    value = (0.45 + 0.35 * abs(mean - 0.5) * 2 - 0.25 * spread
             + (0.15 if grounding else 0.0) + t.jitter(seed, 0.05, "confidence", judge, output))
    return round(t.clamp(value, 0.05, 0.99), 2)


def rubric(text: str, judge: str, seed: int) -> str:
    """Rubric, RAG-metric and question-quality judges: one score per criterion within its
    scale, a rationale, a summary, and a confidence when the format asks for one."""
    criteria = [(name, int(low), int(high)) for name, low, high in RUBRIC_LINE.findall(text)]
    blocks = t.data_blocks(text)
    output = blocks.get("output under test", "")
    grounding, question = _grounding(blocks), _question(blocks)
    rating_question = bool(criteria) and all(
        name in QUESTION_CRITERIA and high == 10 for name, _, high in criteria)
    bias = t.jitter(seed, 0.06, "judge-bias", judge)
    out: dict[str, dict[str, Any]] = {}
    values = []
    for name, low, high in criteria:
        if rating_question:
            signal = _question_signal(name, output, blocks.get("reference answer"), seed)
            why = (f"{len(t.words(output))}-word question"
                   + ("" if output.strip().endswith("?") else " without a question mark")
                   + f"; {name} judged on its wording.")
        else:
            signal = _criterion_signal(name, output, grounding, question,
                                       blocks.get("grounding"))
            why = _why(name, output, grounding, question)
        value = t.clamp(signal + bias + t.jitter(seed, 0.08, judge, name, output))
        values.append(value)
        out[name] = {"score": low + round(value * (high - low)), "rationale": why}
    mean = sum(values) / len(values) if values else 0.0
    summary = f"{_label(mean)} overall: {len(t.words(output))} words judged against the " + \
        ("reference." if grounding else "question.")
    reply: dict[str, Any] = {"criteria": out, "summary": summary}
    if CONFIDENCE_MARK in text:
        reply["confidence"] = confidence(values, grounding, output, judge, seed)
    return _dump(reply)


def _messages(conversation: str) -> list[tuple[int, str, str]]:
    found = []
    for line in conversation.splitlines():
        match = _MESSAGE.match(line)
        if match:
            found.append((int(match[1]), match[2], match[3]))
        elif found:  # a message's text goes on over several lines
            idx, role, body = found[-1]
            found[-1] = (idx, role, body + "\n" + line)
    return found


def verdict(text: str, judge: str, seed: int) -> str:
    """EvalArena's verdict: pass when the agent's replies address the user's messages and
    honour the contract's terms."""
    blocks = t.data_blocks(text)
    messages = _messages(blocks.get("conversation", ""))
    said = " ".join(m[2] for m in messages if m[1] == "assistant")
    asked = " ".join(m[2] for m in messages if m[1] == "user") or blocks.get("case input", "")
    clauses = [c.lstrip("- ").strip() for c in blocks.get("agent contract", "").splitlines()
               if c.strip()]
    rel = t.recall(said, asked) if t.content_words(asked) else 0.6
    honour = sum(t.recall(said, c) for c in clauses) / len(clauses) if clauses else 0.6
    value = t.clamp(0.5 * rel + 0.3 * t.length_fit(said) + 0.2 * honour
                    + t.jitter(seed, 0.08, judge, said))
    passed = value >= 0.5
    idx = max((m[0] for m in messages if m[1] == "assistant"), default=messages[-1][0]
              if messages else 0)
    if passed:
        cluster, severity = "ok", "low"
    else:
        cluster = "off-topic reply" if rel < 0.4 else "too terse" \
            if t.length_fit(said) < 0.6 else "contract not honoured"
        severity = "critical" if value < 0.2 else "high"
    reason = (f"The agent's replies cover {round(rel * 100)}% of the user's key terms and "
              f"{round(honour * 100)}% of the contract's; {'pass' if passed else cluster}.")
    evidence = [{"idx": idx, "label": cluster, "detail": said[:120] or "(no reply)"}] \
        if messages else []
    return _dump({"pass": passed, "severity": severity, "cluster": cluster,
                  "reason": reason, "evidence": evidence})


def _response_quality(response: str, asked: str, judge: str, seed: int) -> float:
    rel = t.recall(response, asked) if t.content_words(asked) else 0.6
    return (0.5 * rel + 0.3 * t.length_fit(response) + 0.2 * fluency(response)
            + t.jitter(seed, 0.03, judge, response))


def pairwise(text: str, judge: str, seed: int) -> str:
    """The better response by content (not position); a judge named "*fast*" prefers the
    first response when the two are close, so position bias shows up in statistics."""
    blocks = t.data_blocks(text)
    asked = blocks.get("case input", "") + " " + blocks.get(
        "conversation before the responses", "")
    one, two = blocks.get("Response 1", ""), blocks.get("Response 2", "")
    q1, q2 = (_response_quality(r, asked, judge, seed) for r in (one, two))
    diff = q1 - q2
    if "fast" in judge and abs(diff) < 0.1:
        winner = "1"
    elif abs(diff) < 0.03:
        winner = "tie"
    else:
        winner = "1" if diff > 0 else "2"
    k1, k2 = (len(t.content_words(r) & t.content_words(asked)) for r in (one, two))
    rationale = ("Both responses are about equally good." if winner == "tie" else
                 f"Response {winner} is better: it covers {max(k1, k2) if diff else k1} of "
                 f"the input's key terms against {min(k1, k2)}, in a clearer form.")
    return _dump({"winner": winner, "rationale": rationale})


def meta(text: str) -> str:
    """The meta-judge: which contract clauses the rubric never mentions, its vague words,
    whether it says what counts as evidence."""
    blocks = t.data_blocks(text)
    rubric_text = blocks.get("rubric under review", "")
    clauses = [re.sub(r"^\d+\.\s*", "", c).strip()
               for c in blocks.get("agent contract", "").splitlines()
               if c.strip() and not c.startswith("(the agent has no contract)")]
    missing = [c for c in clauses if t.recall(rubric_text, c) < 0.34]
    lowered = rubric_text.lower()
    vague = [w for w in VAGUE if re.search(rf"\b{w}\b", lowered)]
    evidence = bool(re.search(r"\bevidence\b|\bquote|\bcite|\bmessage \[|\bexact(ly)?\b",
                              lowered))
    high_variance = len(vague) >= 2 or not evidence
    first = (f"It never covers {len(missing)} contract clause(s), starting with "
             f"\"{missing[0][:80]}\"." if missing else "It covers every contract clause.")
    second = "" if evidence else " It does not define what counts as evidence for a pass " \
        "or a fail. Expect inconsistent scoring."
    third = f" Define the vague words ({', '.join(vague[:3])})." if vague else ""
    return _dump({"references_contract": len(missing) < len(clauses) if clauses else False,
                  "missing_clauses": missing, "defines_evidence": evidence,
                  "vague_phrases": vague, "high_variance": high_variance,
                  "critique": first + second + third})
