"""The fake provider as the wizard's AI assist (``core/experiments/assist_prompts.py``):
objectives from hints, a rewritten objective, a rubric, seed prompts, an improved prompt,
each in the JSON its system prompt asks for, built from the user's own words.

A request is recognised by the JSON skeleton of its system prompt. The rubric's criteria
are named in the fake judges' families, and an improved prompt gains the directives the
fake model obeys (``fake_refine``), so what assist drafts scores sensibly in a demo run.
"""

from __future__ import annotations

import json
import re
from typing import Any

from assay.providers import fake_refine
from assay.providers import fake_text as t

MARKS = {
    '{"options": [{"title": "Option 1"': "objectives",
    '{"text": "the rewritten objective"': "objective",
    '{"criteria": [{"name": "Criterion Name"': "rubric",
    '{"prompts": [{"name": "Structured Approach"': "prompts",
    '{"improved": "the full improved prompt"': "improve",
}
FOCUS = ("Clarity-focused", "Creativity-focused", "Efficiency-focused")
_COUNT = re.compile(r"\b(?:into|generate) (\d+) ")
# (name, description, keys in the objective that call for it)
CRITERIA = (
    ("Accuracy", "Factually correct and consistent with what the input and policies state",
     ("accura", "correct", "fact", "policy", "policies")),
    ("Helpfulness", "Resolves the request with an actionable answer or next step",
     ("help", "resolve", "solution", "answer", "support")),
    ("Completeness", "Covers every point the request raises",
     ("complete", "edge", "every", "all ")),
    ("Clarity", "Clear, readable and well organised",
     ("clear", "clarity", "readable", "explain")),
    ("Conciseness", "Brief, with no filler and nothing needed left out",
     ("concise", "brief", "short", "quick")),
    ("Tone", "A tone that suits the audience, friendly and professional",
     ("tone", "friendly", "empath", "warm", "polite")),
)


def kind_of(system: str) -> str | None:
    for mark, kind in MARKS.items():
        if mark in system:
            return kind
    return None


def _count(system: str, default: int = 3) -> int:
    found = _COUNT.search(system)
    return int(found.group(1)) if found else default


def _after(text: str, label: str) -> str:
    """The text after `label` up to the next blank-line-separated label."""
    _, _, rest = text.partition(label)
    return re.split(r"\n\n[A-Z][a-z]+:\n", rest, maxsplit=1)[0].strip()


def _terms(text: str, limit: int = 6) -> list[str]:
    return t.shared(text, text, limit=limit)


def objectives(system: str, user: str) -> dict[str, Any]:
    hints = _after(user, "User hints:").split("\n\nGenerate")[0].strip()
    about = ", ".join(_terms(hints)) or "the task"
    angle = ("precise and unambiguous, so every reader reaches the same result",
             "flexible and open-ended, inviting varied and original answers",
             "concise and fast, with only what the reader needs")
    options = [{"title": f"{FOCUS[i % 3]}: {about}"[:80],
                "text": f"Produce responses about {hints} for the people who ask about "
                        f"{about}. Each response is {angle[i % 3]}. Success means the "
                        f"answer addresses {about} directly, is correct, and needs no "
                        "follow-up question."} for i in range(_count(system))]
    return {"options": options}


def objective(system: str, user: str) -> dict[str, Any]:
    details = "adds the details" in system
    terms = ", ".join(_terms(user)) or "the task"
    extra = (" The audience is the people who ask about " + terms + "; answers use plain "
             "text, stay under 200 words, say when information is missing, and succeed when "
             "the reader can act on them without asking again.") if details else (
        " Answers address " + terms + " directly for a non-expert reader; success means "
        "each answer is correct, specific and can be acted on.")
    text = (user.strip() + extra)[:2000]
    changes = ("Added the audience, output format, constraints, edge cases and success "
               "criteria." if details else "Named the audience and made the success "
               "criteria explicit.")
    return {"text": text, "changes": changes}


def rubric(user: str) -> dict[str, Any]:
    goal = _after(user, "Objective:").split("\n\nGenerate a rubric")[0].lower()
    chosen = [c for c in CRITERIA if any(k in goal for k in c[2])]
    for c in CRITERIA:  # at least four
        if len(chosen) >= 4:
            break
        if c not in chosen:
            chosen.append(c)
    chosen = chosen[:6]
    weight = round(1 / len(chosen), 4)
    criteria = [{"name": name, "description": desc, "weight": weight,
                 "scale": {"min": 0, "max": 5}} for name, desc, _ in chosen]
    criteria[-1]["weight"] = round(1 - weight * (len(chosen) - 1), 4)
    return {"criteria": criteria}


def prompts(system: str, user: str) -> dict[str, Any]:
    goal = _after(user, "Objective:").split("\n\nRubric:")[0].strip()
    names = []
    try:
        rubric_json = user.split("Rubric:\n", 1)[1].split("\n\nGenerate", 1)[0]
        names = [str(c.get("name")) for c in json.loads(rubric_json) if isinstance(c, dict)]
    except (IndexError, ValueError, AttributeError, TypeError):
        pass
    aims = ", ".join(names) or "the rubric's criteria"
    first = t.sentences(goal)[:1] or [goal[:300]]
    kinds = (
        ("Structured Approach", f"Task: {first[0]}\n\nInput:\n{{{{input}}}}\n\nSteps:\n"
         f"1. Read the input.\n2. Answer it, meeting: {aims}.\n{fake_refine.POINTS}\n",
         "Explicit steps make each requirement hard to miss."),
        ("Conversational Approach", f"Here is a request: {{{{input}}}}\n\nPlease help with "
         f"it. {first[0]} Keep {aims} in mind.\n", "A natural tone suits open requests."),
        ("Minimal Approach", f"{first[0]}\n\n{{{{input}}}}\n",
         "Short prompts leave the model little to misread."),
    )
    out = [{"name": kinds[i % 3][0] + ("" if i < 3 else f" {i + 1}"), "text": kinds[i % 3][1],
            "systemText": "You are a careful assistant.", "rationale": kinds[i % 3][2]}
           for i in range(_count(system))]
    return {"prompts": out}


def improve(user: str) -> dict[str, Any]:
    prompt = user.split("\n\nPrompt:\n", 1)[1] if "\n\nPrompt:\n" in user else user
    added = [d for d in fake_refine.DIRECTIVES if d not in prompt]
    improved = prompt.rstrip("\n") + "\n" + "\n".join(added) + "\n" if added else prompt
    changes = (f"Added {len(added)} instruction(s): {' '.join(added)} Every variable is "
               "kept." if added else "The prompt already covers what I would add.")
    return {"improved": improved, "changes": changes}


def reply(kind: str, system: str, user: str) -> str:
    if kind == "objectives":
        out = objectives(system, user)
    elif kind == "objective":
        out = objective(system, user)
    elif kind == "rubric":
        out = rubric(user)
    elif kind == "prompts":
        out = prompts(system, user)
    else:
        out = improve(user)
    return json.dumps(out, ensure_ascii=False)
