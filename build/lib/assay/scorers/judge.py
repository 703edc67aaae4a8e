"""LLM judge, pointwise rubric (kind "llm_judge"): each of 1 to 5 judge models scores the
output on every criterion of a weighted rubric; one ScoreResult per judge.

The judge's reply carries per criterion a score within its scale and a rationale, a summary
(the reasoning) and its confidence in those scores (0..1), all required and checked against
the reply's JSON Schema: a reply that lacks one or strays outside its range is that judge's
failed score, with the reason. The confidence is kept in the score's details.

Params:
    rubric: {criteria: [{name, description, weight, scale}] (2 to 10), goal?: text}
    judges: [model config id or name] (1 to 5, distinct)
    instructions?: text for the judges (at most 4,000 characters)
    pass_threshold?: 0..1; with it, `passed` = composite >= threshold

The module also registers "verdict_judge" (EvalArena's pass/fail judge, verdict.py): the
registry reads kinds from this module only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from assay.scorers.base import Context, ScoreResult, Subject
from assay.scorers.judging import (
    JUDGES_SCHEMA,
    THRESHOLD_SCHEMA,
    FieldErrors,
    ask_judges,
    blocks,
    cannot_judge,
    check_keys,
    judge_messages,
    kind_schema,
    parse_judges,
    parse_text,
    parse_threshold,
    render_input,
    render_messages,
    text_schema,
)
from assay.scorers.rubric import (
    RUBRIC_SCHEMA,
    parse_rubric,
    reply_format,
    rubric_task,
    score_result,
)
from assay.scorers.verdict import VerdictJudge

PARAM_FIELDS = ("rubric", "judges", "instructions", "pass_threshold")
MAX_INSTRUCTIONS = 4000


def subject_blocks(subject: Subject) -> list[tuple[str, str | None]]:
    """What a pointwise judge sees of a subject, as (label, text) data blocks. The
    conversation before the output is shown when there is one; the output under test
    comes last."""
    earlier = subject.messages[:-1] if subject.messages else []
    return [
        ("case input", render_input(subject.input, bool(subject.messages))),
        ("conversation before the output", render_messages(earlier) if earlier else None),
        ("grounding context", subject.context),
        ("reference answer", subject.reference),
        ("output under test", subject.output),
    ]


class RubricJudge:
    kind: ClassVar[str] = "llm_judge"
    params_schema: ClassVar[dict[str, Any]] = kind_schema(
        "Judge models score the output on each criterion of a weighted rubric",
        {"rubric": RUBRIC_SCHEMA, "judges": JUDGES_SCHEMA,
         "instructions": text_schema(MAX_INSTRUCTIONS, "Further instructions for the judges"),
         "pass_threshold": THRESHOLD_SCHEMA},
        ("rubric", "judges"))

    def __init__(self, params: Mapping[str, Any]) -> None:
        errors = FieldErrors()
        check_keys(params, PARAM_FIELDS, "", errors)
        rubric = parse_rubric(params.get("rubric"), errors)
        self._judges = parse_judges(params.get("judges"), errors)
        self.instructions = parse_text(params.get("instructions"), errors, "instructions",
                                       MAX_INSTRUCTIONS)
        self.pass_threshold = parse_threshold(params.get("pass_threshold"), errors)
        errors.raise_any()
        assert rubric is not None  # raise_any() raised otherwise
        self.rubric = rubric
        self.reply_format = reply_format(rubric, confidence=True)

    @property
    def judges(self) -> tuple[str, ...]:
        return self._judges

    def messages(self, subject: Subject, nonce: str) -> list[dict[str, Any]]:
        """The messages one judge call sends, its data fenced with `nonce`."""
        task = rubric_task(self.rubric, blocks(nonce, subject_blocks(subject)),
                           self.instructions, confidence=True)
        return judge_messages(nonce, task)

    async def score(self, subject: Subject, ctx: Context) -> list[ScoreResult]:
        if ctx.judge is None or subject.output is None:
            return cannot_judge(subject.output is None, self._judges)
        answers = await ask_judges(ctx.judge, self._judges,
                                   lambda nonce: self.messages(subject, nonce),
                                   self.reply_format)
        return [score_result(self.rubric, answer, subject.output, self.pass_threshold)
                for answer in answers]


SCORERS: dict[str, type] = {RubricJudge.kind: RubricJudge, VerdictJudge.kind: VerdictJudge}
