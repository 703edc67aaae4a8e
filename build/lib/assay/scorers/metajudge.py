"""Meta-judge (evalarena §10 "Judge the judge"): a strong model critiques a user's judge
rubric against the agent's contract before and alongside its use. It checks whether the
rubric references the contract, defines what counts as evidence and avoids vague
language, and warns when judges applying it would disagree (high variance). The critique
string is what EvalArena shows in results and in the hidden test report; the checks come
with it for the UI.

Not an output scorer: EvalArena calls `critique_rubric` on every judge run. The rubric is
the user's text and reaches the meta-judge as data, like any scored output.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from assay.scorers.base import JudgeCall
from assay.scorers.judge_guard import new_nonce
from assay.scorers.judge_prompts import META_TASK
from assay.scorers.judging import NO_JUDGE, ReplyFormat, ask, blocks, judge_messages

_PHRASES = {"type": "array", "items": {"type": "string", "minLength": 1}}
META_REPLY = ReplyFormat("assay_rubric_critique", {
    "type": "object", "additionalProperties": False,
    "required": ["references_contract", "missing_clauses", "defines_evidence",
                 "vague_phrases", "high_variance", "critique"],
    "properties": {"references_contract": {"type": "boolean"},
                   "missing_clauses": _PHRASES,
                   "defines_evidence": {"type": "boolean"},
                   "vague_phrases": _PHRASES,
                   "high_variance": {"type": "boolean"},
                   "critique": {"type": "string", "minLength": 1}},
})


@dataclass(frozen=True)
class Critique:
    """The meta-judge's critique of a rubric, or `error` saying why there is none."""

    critique: str
    references_contract: bool | None = None
    missing_clauses: tuple[str, ...] = ()
    defines_evidence: bool | None = None
    vague_phrases: tuple[str, ...] = ()
    high_variance: bool | None = None
    judge_model: str | None = None
    error: str | None = None
    details: Mapping[str, Any] = field(default_factory=dict)  # usage, raw reply on failure


def critique_messages(rubric_text: str, contract: Sequence[str],
                      nonce: str) -> list[dict[str, Any]]:
    clauses = "\n".join(f"{i}. {c}" for i, c in enumerate(contract, 1)) or \
        "(the agent has no contract)"
    material = blocks(nonce, [("agent contract", clauses), ("rubric under review",
                                                              rubric_text)])
    return judge_messages(nonce, META_TASK.format(blocks=material))


async def critique_rubric(rubric_text: str, contract: Sequence[str],
                          judge_call: JudgeCall | None, judge: str) -> Critique:
    """Ask `judge` to critique `rubric_text` against `contract` (the agent's must-dos and
    must-nots). Never raises for a failed call or a bad reply: the Critique says why."""
    if not rubric_text.strip():
        return Critique("", judge_model=judge, error=(
            "The rubric is empty: write what a passing conversation must do, against the "
            "contract, before asking for a critique."))
    if judge_call is None:
        return Critique("", judge_model=judge, error=NO_JUDGE.format(judges=repr(judge)))
    clauses = [c.strip() for c in contract if c.strip()]
    answer = await ask(judge_call, judge, critique_messages(rubric_text, clauses, new_nonce()),
                       META_REPLY)
    if answer.data is None:
        return Critique("", judge_model=judge, error=answer.error, details=answer.details)
    data = answer.data
    return Critique(data["critique"], data["references_contract"],
                    tuple(data["missing_clauses"]), data["defines_evidence"],
                    tuple(data["vague_phrases"]), data["high_variance"], judge_model=judge,
                    details=answer.details)
