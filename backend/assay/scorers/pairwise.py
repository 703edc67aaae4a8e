"""Pairwise judge (kind "pairwise_judge", edison FR-EC-006): which of two outputs of one
case is better, asked of each judge in both orders.

Identity-blind: the judge sees the case and two responses labelled "Response 1" and
"Response 2", never a model name, a target or a subject's metadata. The earlier
conversation is shown only when both outputs share it. Each judge is asked with A first,
then with B first; the second answer is un-swapped. Agreement gives the winner ("a", "b",
"tie"); disagreement gives no winner and `position_bias` True, with both answers in
`orders`.

Params:
    judges: [model config id or name] (1 to 5, distinct)
    rubric?: the pointwise rubric (same rules as llm_judge), shown as criteria to weigh
    goal?: what the outputs should achieve (default: the rubric's goal)
    instructions?: text for the judges (at most 4,000 characters)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from assay.scorers.base import Context, JudgeCall, PairVerdict, Subject
from assay.scorers.judge_guard import new_nonce
from assay.scorers.judge_prompts import GOAL, INSTRUCTIONS, PAIRWISE_CRITERIA, PAIRWISE_TASK
from assay.scorers.judging import (
    JUDGES_SCHEMA,
    NO_JUDGE,
    Answer,
    FieldErrors,
    ReplyFormat,
    all_settled,
    ask,
    blocks,
    check_keys,
    judge_messages,
    kind_schema,
    parse_judges,
    parse_text,
    render_input,
    render_messages,
    text_schema,
)
from assay.scorers.rubric import RUBRIC_SCHEMA, Rubric, parse_rubric

PARAM_FIELDS = ("judges", "rubric", "goal", "instructions")
MAX_INSTRUCTIONS = 4000
# What "1" / "2" mean in each order: A shown first, then B shown first.
UNSWAP = ({"1": "a", "2": "b", "tie": "tie"}, {"1": "b", "2": "a", "tie": "tie"})
PAIR_REPLY = ReplyFormat("assay_pairwise", {
    "type": "object", "additionalProperties": False, "required": ["winner", "rationale"],
    "properties": {"winner": {"enum": ["1", "2", "tie"]},
                   "rationale": {"type": "string", "minLength": 1}},
})


def _missing(a: Subject, b: Subject) -> str | None:
    gone = [name for name, s in (("A", a), ("B", b)) if s.output is None]
    if not gone:
        return None
    return (f"Output {' and '.join(gone)} missing (the model call failed): there is "
            "nothing to compare.")


class PairwiseJudge:
    kind: ClassVar[str] = "pairwise_judge"
    params_schema: ClassVar[dict[str, Any]] = kind_schema(
        "Judge models pick the better of two outputs of a case, asked in both orders",
        {"judges": JUDGES_SCHEMA, "rubric": RUBRIC_SCHEMA,
         "goal": text_schema(2000, "What the outputs should achieve"),
         "instructions": text_schema(MAX_INSTRUCTIONS, "Further instructions for the judges")},
        ("judges",))

    def __init__(self, params: Mapping[str, Any]) -> None:
        errors = FieldErrors()
        check_keys(params, PARAM_FIELDS, "", errors)
        self._judges = parse_judges(params.get("judges"), errors)
        self.rubric: Rubric | None = None
        if params.get("rubric") is not None:
            self.rubric = parse_rubric(params["rubric"], errors)
        goal = parse_text(params.get("goal"), errors, "goal", 2000)
        self.goal = goal or (self.rubric.goal if self.rubric else None)
        self.instructions = parse_text(params.get("instructions"), errors, "instructions",
                                       MAX_INSTRUCTIONS)
        errors.raise_any()

    @property
    def judges(self) -> tuple[str, ...]:
        return self._judges

    def messages(self, first: Subject, second: Subject, nonce: str) -> list[dict[str, Any]]:
        """The messages asking which of `first` (Response 1) and `second` (Response 2) is
        better; nothing in them names where a response came from."""
        earlier = (first.messages or [])[:-1]
        shared = earlier if earlier and earlier == (second.messages or [])[:-1] else []
        material = blocks(nonce, [
            ("case input", render_input(first.input, bool(first.messages))),
            ("conversation before the responses", render_messages(shared) if shared else None),
            ("Response 1", first.output),
            ("Response 2", second.output),
        ])
        criteria = "\n".join(f"- {c.name}: {c.description}" for c in self.rubric.criteria) \
            if self.rubric else ""
        task = PAIRWISE_TASK.format(
            goal=GOAL.format(goal=self.goal) if self.goal else "",
            criteria=PAIRWISE_CRITERIA.format(criteria=criteria) if criteria else "",
            instructions=INSTRUCTIONS.format(instructions=self.instructions)
            if self.instructions else "",
            blocks=material)
        return judge_messages(nonce, task)

    async def compare(self, a: Subject, b: Subject, ctx: Context) -> list[PairVerdict]:
        missing = _missing(a, b)
        if missing is not None or ctx.judge is None:
            error = missing or NO_JUDGE.format(judges=", ".join(repr(j) for j in self._judges))
            return [PairVerdict(None, error=error, judge_model=j) for j in self._judges]
        return await all_settled(*(self._both_orders(ctx.judge, judge, a, b)
                                   for judge in self._judges))

    async def _both_orders(self, call: JudgeCall, judge: str, a: Subject,
                           b: Subject) -> PairVerdict:
        answers = await all_settled(
            ask(call, judge, self.messages(a, b, new_nonce()), PAIR_REPLY),
            ask(call, judge, self.messages(b, a, new_nonce()), PAIR_REPLY))
        return _verdict(judge, answers[0], answers[1])


def _verdict(judge: str, a_first: Answer, b_first: Answer) -> PairVerdict:
    orders = tuple(UNSWAP[i][answer.data["winner"]] if answer.data else None
                   for i, answer in enumerate((a_first, b_first)))
    rationale = "\n".join(f"{label}: {answer.data['rationale']}" for label, answer in (
        ("A shown as Response 1", a_first), ("B shown as Response 1", b_first)) if answer.data)
    failed = [f"{label}: {answer.error}" for label, answer in (
        ("A first", a_first), ("B first", b_first)) if answer.error]
    if failed:
        return PairVerdict(None, orders=(orders[0], orders[1]), rationale=rationale,
                           error="; ".join(failed), judge_model=judge)
    agreed = orders[0] == orders[1]
    return PairVerdict(orders[0] if agreed else None, position_bias=not agreed,
                       orders=(orders[0], orders[1]), rationale=rationale,
                       judge_model=judge)


SCORERS: dict[str, type] = {PairwiseJudge.kind: PairwiseJudge}
