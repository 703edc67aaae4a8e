"""Question quality (kind "question_quality", myarena §3.6 judge mode): judge models rate a
question of an evaluation dataset on predefined criteria, each 1-10, and justify it.

The output under test is the question itself (judge mode plans a run whose outputs are the
dataset's questions); the case's reference answer, tags and stated difficulty are shown as
context. Criteria are equally weighted, so the value is the mean of the normalised ratings.

Params:
    judges: [model config id or name] (1 to 5, distinct)
    criteria?: a subset of clarity, difficulty, relevance, originality, overall (distinct)
    instruction?: free-form instructions for the judges (at most 4,000 characters)
At least one criterion or an instruction: with an instruction alone the judges give one
"overall" rating as it asks (e.g. "Rate the quality of this question from 1-10").

Details: "scores" (1-10 per criterion), "rationales", and "overall": the overall rating
when it is a criterion, else the mean of the ratings (1-10).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any, ClassVar

from assay.scorers.base import Context, ScoreResult, Subject
from assay.scorers.judging import (
    JUDGES_SCHEMA,
    FieldErrors,
    ask_judges,
    blocks,
    cannot_judge,
    check_keys,
    judge_messages,
    kind_schema,
    parse_judges,
    parse_text,
    text_schema,
)
from assay.scorers.rubric import Criterion, Rubric, reply_format, rubric_task, score_result

KIND = "question_quality"
PARAM_FIELDS = ("judges", "criteria", "instruction")
MAX_INSTRUCTION = 4000
LOW, HIGH = 1, 10
OVERALL = "overall"
CRITERIA: dict[str, str] = {
    "clarity": "The question is unambiguous, self-contained and well formed: a capable reader "
               "knows exactly what is asked and what a complete answer looks like. "
               "1 = ambiguous or incomprehensible, 10 = perfectly clear.",
    "difficulty": "The question demands real knowledge or reasoning from a capable language "
                  "model. 1 = a trivial lookup or a giveaway, 10 = expert, multi-step "
                  "reasoning. Difficulty that comes only from ambiguity or missing "
                  "information does not count.",
    "relevance": "The question tests something worth evaluating and fits the dataset's "
                 "purpose (its tags, stated difficulty and the instructions, when given), "
                 "with a well-defined answer. 1 = off topic or pointless, 10 = squarely on "
                 "target.",
    "originality": "The question is not a stock textbook item a model may have memorised, "
                   "nor a trivial rewording of one. 1 = a well-known item verbatim, "
                   "10 = novel.",
    OVERALL: "The question's quality as an evaluation item, every aspect weighed. "
             "1 = unusable, 10 = excellent.",
}
PREAMBLE = """
The output under test is not an answer: it is a question (or task) from an evaluation \
dataset that will be put to language models. Rate the question itself as an evaluation \
item; do not answer it. The reference answer, tags and stated difficulty, when shown, \
describe what the dataset's author intended."""
NO_QUESTION = ("This case has no question text to judge (for a trace: no user message); "
               "give it one, or leave it out of the dataset.")


def parse_criteria(raw: Any, errors: FieldErrors, path: str = "criteria") -> tuple[str, ...]:
    """Distinct names of predefined criteria (lower case), in the order given."""
    if raw is None:
        return ()
    if not isinstance(raw, list):
        errors.add(path, f"must be a list of criteria among {', '.join(CRITERIA)}")
        return ()
    chosen: list[str] = []
    for i, name in enumerate(raw):
        key = name.strip().casefold() if isinstance(name, str) else None
        if key not in CRITERIA:
            errors.add(f"{path}[{i}]", f"{name!r} is not a criterion; choose among "
                                       f"{', '.join(CRITERIA)}")
        elif key in chosen:
            errors.add(f"{path}[{i}]", f"{key!r} is listed twice")
        else:
            chosen.append(key)
    return tuple(chosen)


def rubric_of(criteria: tuple[str, ...]) -> Rubric:
    """Equal weights on 1-10; no criteria: the overall rating alone."""
    names = criteria or (OVERALL,)
    return Rubric(tuple(Criterion(name, CRITERIA[name], 1 / len(names), LOW, HIGH)
                        for name in names))


def overall_rating(scores: Mapping[str, float]) -> float:
    """The overall rating (1-10) of one judge's scores."""
    if OVERALL in scores:
        return float(scores[OVERALL])
    return sum(scores.values()) / len(scores)


class QuestionQuality:
    kind: ClassVar[str] = KIND
    params_schema: ClassVar[dict[str, Any]] = kind_schema(
        "Judge models rate a dataset's question on clarity, difficulty, relevance, "
        "originality and overall (1-10 each), with a justification",
        {"judges": JUDGES_SCHEMA,
         "criteria": {"type": "array", "uniqueItems": True, "maxItems": len(CRITERIA),
                      "items": {"type": "string", "enum": list(CRITERIA)}},
         "instruction": text_schema(MAX_INSTRUCTION, "Free-form instructions for the judges")},
        ("judges",)) | {"anyOf": [  # at least one criterion, or an instruction
            {"required": ["criteria"], "properties": {"criteria": {"minItems": 1}}},
            {"required": ["instruction"], "properties": {"instruction": {"pattern": r"\S"}}}]}

    def __init__(self, params: Mapping[str, Any]) -> None:
        errors = FieldErrors()
        check_keys(params, PARAM_FIELDS, "", errors)
        self._judges = parse_judges(params.get("judges"), errors)
        chosen = parse_criteria(params.get("criteria"), errors)
        self.instruction = parse_text(params.get("instruction"), errors, "instruction",
                                      MAX_INSTRUCTION)
        if not chosen and self.instruction is None and "criteria" not in errors.errors \
                and "instruction" not in errors.errors:
            errors.add("criteria", "choose at least one criterion, or write an instruction")
        errors.raise_any()
        self.rubric = rubric_of(chosen)
        self.criteria = tuple(c.name for c in self.rubric.criteria)
        self.reply_format = reply_format(self.rubric, "assay_question_quality")

    @property
    def judges(self) -> tuple[str, ...]:
        return self._judges

    def messages(self, subject: Subject, nonce: str) -> list[dict[str, Any]]:
        material = blocks(nonce, [
            ("output under test", subject.output),
            ("reference answer", subject.reference),
            ("tags", ", ".join(subject.tags) if subject.tags else None),
            ("stated difficulty", subject.difficulty),
        ])
        task = rubric_task(self.rubric, material, self.instruction, preamble=PREAMBLE)
        return judge_messages(nonce, task)

    async def score(self, subject: Subject, ctx: Context) -> list[ScoreResult]:
        if ctx.judge is None or subject.output is None:
            return cannot_judge(subject.output is None, self._judges)
        if not subject.output.strip():
            return [ScoreResult.failed(NO_QUESTION, judge) for judge in self._judges]
        answers = await ask_judges(ctx.judge, self._judges,
                                   lambda nonce: self.messages(subject, nonce),
                                   self.reply_format)
        return [self._with_overall(score_result(self.rubric, answer, subject.output, None))
                for answer in answers]

    @staticmethod
    def _with_overall(result: ScoreResult) -> ScoreResult:
        if result.value is None:
            return result
        overall = overall_rating(result.details["scores"])
        return replace(result, details={**result.details, "overall": overall})


SCORERS: dict[str, type] = {QuestionQuality.kind: QuestionQuality}
