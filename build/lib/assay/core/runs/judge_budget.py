"""What judging a cell's reply can cost at most, so that a run's LLM judges are reserved
against its caps with the call they judge (DESIGN §4 "Budget": spend + reserved never
exceeds a cap).

A judge's prompt is the scorer's own messages around the reply, which is not known when
the cell is claimed. The bound renders them around a marker in place of the reply, counts
them without it, and adds the reply's most tokens (the target's max_tokens) for each place
the reply appears; the judge writes at most its own max_tokens. Judges without a price (a
run with a cap refuses them before it starts) or that cannot be called reserve nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from assay.core.scoring.apply import Applied
from assay.core.scoring.backfill import Pending
from assay.core.scoring.judge_calls import JudgeModel, ModelJudge
from assay.providers import tokens
from assay.providers.pricing import cost_micros
from assay.scorers.base import Context, Subject
from assay.scorers.judge_guard import NONCE_BYTES

MARK = "assayreplymarker"  # stands for the reply: plain text no template escapes or splits
SLACK = 8  # tokens per place the reply appears: merges at its edges, escaped characters
NONCE = "0" * (2 * NONCE_BYTES)

Builder = Callable[[Subject, str], list[dict[str, Any]]]


def judged_by(applied: Sequence[Applied]) -> list[tuple[Builder, tuple[str, ...]]]:
    """(message builder, judge refs) of each scorer that calls judges, in order."""
    out = []
    for scorer in (a.scorer for a in applied):
        build = getattr(scorer, "messages", None)  # every pointwise judge kind has it
        if scorer.judges and callable(build):
            out.append((build, scorer.judges))
    return out


@dataclass(frozen=True)
class JudgeCall:
    judge: JudgeModel
    prompt_tokens: int  # the judge's prompt without the reply
    places: int  # how often the reply appears in it

    def cost(self, reply_tokens: int, judge_tokens: int) -> int | None:
        """With a reply of `reply_tokens` and a verdict of `judge_tokens`; None: unpriced."""
        prompt = self.prompt_tokens + self.places * (reply_tokens + SLACK)
        return cost_micros(prompt, judge_tokens, self.judge.price_in, self.judge.price_out)

    @property
    def max_verdict_tokens(self) -> int:
        return tokens.max_output_tokens(self.judge.params)


def judge_calls(judged: Sequence[tuple[Builder, tuple[str, ...]]],
                judges: Mapping[str, JudgeModel], subject: Subject) -> list[JudgeCall]:
    """The judge calls scoring one reply makes. `subject` holds MARK where the reply goes.
    Judges that cannot be called (unknown, no key) make none: their scores fail at once."""
    calls = []
    for build, refs in judged:
        messages = build(subject, NONCE)
        places = sum(str(m.get("content") or "").count(MARK) for m in messages)
        bare = [{**m, "content": str(m.get("content") or "").replace(MARK, "")}
                for m in messages]
        for ref in refs:
            judge = judges.get(str(ref))
            if judge is not None and judge.key_error is None:
                calls.append(JudgeCall(judge, tokens.count_messages(bare, judge.model), places))
    return calls


def max_judge_cost(judged: Sequence[tuple[Builder, tuple[str, ...]]],
                   judges: Mapping[str, JudgeModel], subject: Subject,
                   reply_tokens: int) -> int:
    """The most every judge call on one reply can cost together; `reply_tokens` bounds the
    reply. An unpriced judge adds nothing (a run with a cap refuses it before it starts)."""
    return sum(call.cost(reply_tokens, call.max_verdict_tokens) or 0
               for call in judge_calls(judged, judges, subject))


def recorded_bounds(applied: Sequence[Applied], ctx: Context,
                    pending: Sequence[Pending]) -> list[int]:
    """The most the judges of each recorded output can cost (the scoring job): its reply is
    known, so only the verdicts are bounded, by each judge's max_tokens."""
    models = ctx.judge.models if isinstance(ctx.judge, ModelJudge) else {}
    out = []
    for p in pending:
        judged = judged_by([a for a in applied if a.version_id in p.missing])
        out.append(sum(call.cost(0, call.max_verdict_tokens) or 0
                       for call in judge_calls(judged, models, p.subject)))
    return out
