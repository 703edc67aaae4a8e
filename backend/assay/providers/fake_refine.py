"""The fake provider as the experiment's prompt refiner (``core/experiments/refiner.py``),
and the prompt directives its edits add, which the fake model under test obeys.

The refiner's prompt carries the current prompt, the weak criteria and the exemplars; the
reply is ``<diff>`` (a unified diff against the prompt exactly as given) and ``<note>``.
Each diff adds one directive line aimed at the weakest criteria's family (the families of
``fake_judges._criterion_signal``), so the fake model's answers, and therefore the fake
judges' scores, move the way the note says:

- "Address each point asked."  -> the answer names the request's key terms (relevance);
- "State the facts given exactly." -> it quotes the material that matches (accuracy);
- "Reply in short, complete sentences." -> it ends sentences properly (form).

Once the prompt has every directive that helps its weak criteria, the refiner proposes
wording with no effect (the fake model ignores it), so the composite levels off and the
convergence rule stops the experiment. A first attempt breaks a guardrail (or the format)
now and then, fixed by the seed and the prompt, so retries are seen; the retry (the
refiner's own retry turn) is always valid.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Sequence
from typing import Any

from assay.providers import fake_text as t

TASK_MARK = "# Prompt Refinement Task"
RETRY_MARK = "Your reply could not be used:"
BREAK_SHARE = 0.3  # of first attempts that break a rule

POINTS, FACTS, SENTENCES = ("Address each point asked.", "State the facts given exactly.",
                            "Reply in short, complete sentences.")
DIRECTIVES = (POINTS, FACTS, SENTENCES)
NEUTRAL = ("Keep a friendly, professional tone.", "Be polite.")
# which directive helps a criterion, by the judge's own families of criterion names
FAMILIES = (
    (("ground", "faith", "accur", "correct", "fact", "support", "precis", "truth"), FACTS),
    (("relev", "address", "topic", "helpful", "complete", "useful"), POINTS),
    (("fluen", "coheren", "clar", "style", "tone", "read", "concis", "format", "grammar"),
     SENTENCES),
)
TARGETS = {POINTS: "relevance: the answer takes up each point of the request",
           FACTS: "accuracy: the answer states the facts the prompt gives",
           SENTENCES: "form: short sentences that end properly"}
_PROMPT = re.compile(r"## Current Prompt\n```\n(.*?)\n```\n\n## Weak Areas", re.DOTALL)
_REJECTED = re.compile(r"## Suggestions a reviewer rejected\n(.*?)## Your Task", re.DOTALL)
_WEAK = re.compile(r"^- \*\*(.+?)\*\* \(avg score", re.MULTILINE)


def is_refinement(text: str) -> bool:
    return text.startswith(RETRY_MARK) or TASK_MARK in text


# --- the model under test obeying the directives ------------------------------------------

def directives_in(text: str) -> list[str]:
    return [d for d in DIRECTIVES if d in text]


def without_directives(text: str) -> str:
    for directive in (*DIRECTIVES, *NEUTRAL):
        text = text.replace(directive, "")
    return text


def obey(answer: str, found: Sequence[str], prompt: str, material: str) -> str:
    """The answer shaped by the directives found in the prompt."""
    extra = []
    if POINTS in found:
        said = t.content_words(answer)
        terms = [w for w in dict.fromkeys(x.lower() for x in t.words(prompt))
                 if w in t.content_words(w) and w not in said][:30]
        if terms:
            extra.append(f"On each point you raise: {', '.join(terms)}.")
    if FACTS in found:
        ranked = sorted(t.sentences(material), key=lambda s: -t.recall(s, prompt))[:2]
        if ranked:
            extra.append("The facts: " + " ".join(ranked))
    text = " ".join([answer, *extra])
    if SENTENCES in found:
        words = t.words(text)
        chunks = [" ".join(words[i:i + 12]) for i in range(0, len(words), 12)]
        text = " ".join(c[0].upper() + c[1:] + "." for c in chunks if c)
    return text


# --- the refiner ---------------------------------------------------------------------------

def _directive_for(weak: Sequence[str], prompt: str, rejected: str = "") -> str | None:
    """The first directive not yet in the prompt that helps a weak criterion: its family's,
    else POINTS (relevance weighs in every criterion); wording with no
    effect when the prompt has them all. A line a reviewer rejected is not offered again:
    another directive is, when one is left."""
    def fresh(line: str) -> bool:
        return line not in prompt and f"+{line}" not in rejected

    for name in weak:
        key = name.casefold()
        family = [d for keys, d in FAMILIES if any(k in key for k in keys)]
        # after a rejection, any other directive that helps comes before mere wording
        for directive in (*family, POINTS, *(DIRECTIVES if rejected else ())):
            if fresh(directive):
                return directive
    return next((n for n in NEUTRAL if fresh(n)), None)


def _with_line(prompt: str, line: str) -> str:
    lines = prompt.splitlines(keepends=True)
    if prompt.endswith("\n") or not lines:
        return prompt + line + "\n"
    return "".join([*lines[:-1], line + "\n", lines[-1]])  # a context line after it


def diff_of(old: str, new: str) -> str:
    return "".join(difflib.unified_diff(old.splitlines(keepends=True),
                                        new.splitlines(keepends=True),
                                        "a/prompt.txt", "b/prompt.txt"))


def _broken(kind: str, prompt: str, line: str) -> tuple[str, str]:
    """(diff, note) that breaks one rule: a new variable, a context line that is not in
    the prompt, or no note."""
    if kind == "variables":
        return diff_of(prompt, _with_line(prompt, line + " Greet {{customer_name}}.")), \
            "Adds a greeting by name."
    diff = diff_of(prompt, _with_line(prompt, line))
    if kind == "applies":
        context = re.search(r"^ (.+)$", diff, re.MULTILINE)
        if context:
            return diff.replace(context.group(0), context.group(0) + " (as before)", 1), \
                "Adds one line."
    return diff, ""


def reply(messages: Sequence[Any], last_user: str, seed: int,
          content_text: Callable[[Any], str]) -> str:
    users = [content_text(m.get("content")) for m in messages
             if isinstance(m, dict) and m.get("role") == "user"]
    task = next((u for u in users if TASK_MARK in u), last_user)
    found = _PROMPT.search(task)
    prompt = found.group(1) if found else ""
    weak = _WEAK.findall(task)
    rejected = _REJECTED.search(task)
    line = _directive_for(weak, prompt, rejected.group(1) if rejected else "")
    if line is None:
        return "<note>\nThe prompt already says all I would add; no change.\n</note>"
    retrying = len(users) > 1
    if not retrying and t.unit(seed, "refiner-break", prompt) < BREAK_SHARE:
        kind = t.pick(seed, ("variables", "applies", "format"), "refiner-kind", prompt)
        diff, note = _broken(kind, prompt, line)
        return f"<diff>\n{diff}</diff>\n" + (f"<note>\n{note}\n</note>" if note else "")
    diff = diff_of(prompt, _with_line(prompt, line))
    aim = TARGETS.get(line, "wording only: it should change little")
    weak_names = ", ".join(weak) or "the weakest criteria"
    note = (f'Adds the line "{line}" to the prompt. It targets {weak_names}; the '
            f"change aims at {aim}. Everything else, including every variable, stays.")
    return f"<diff>\n{diff}</diff>\n<note>\n{note}\n</note>"
