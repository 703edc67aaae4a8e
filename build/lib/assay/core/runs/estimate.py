"""What a planned run will cost, as a range (edison FR-EC-005 and FR-EC-007, made exact
where it can be).

Input tokens are counted, not guessed: every cell's rendered messages (prompt version,
few-shots, conversation turn and history) with the model's tokenizer and OpenAI's
per-message framing. Output tokens are the uncertain part: the high end
assumes every call writes its full `max_tokens` (the model's, else 1024), the
low end LOW_OUTPUT_SHARE of it. Unpriced models are listed and left out of the totals,
never counted as free; `complete` says whether the totals cover every model.

LLM judges are in the totals too (and on their own in `judge_*`): every reply is judged by
each judge of each judge scorer, on a prompt counted as the scorer renders it (the bound
the engine reserves: judge_budget.py), over up to JUDGE_SAMPLE cases per prompt version
and max_tokens, the others priced at their mean.
"""

from __future__ import annotations

import math
from functools import cached_property
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from assay.core.datasets.models import Case
from assay.core.projects.models import Project
from assay.core.runs import judge_budget
from assay.core.runs.planning import PlannedTarget, Resolved, RunSpec, resolve
from assay.core.runs.rendering import cell_messages, user_turns
from assay.core.runs.validation import collect_problems
from assay.core.scoring.apply import Applied, reply_subject
from assay.core.scoring.judge_calls import JudgeModel
from assay.core.scoring.models import ScorerConfig
from assay.providers import tokens
from assay.providers.base import Endpoint
from assay.providers.pricing import cost_micros, is_priced
from assay.scorers import registry

LOW_OUTPUT_SHARE = 0.25  # typical replies use about a quarter of their max_tokens
JUDGE_SAMPLE = 200  # cases per prompt version whose judge prompts are rendered and counted


def _prompt_tokens(resolved: Resolved, target: PlannedTarget,
                   counted: dict[tuple[str, int | None], tuple[int, int]]) -> tuple[int, int]:
    """(calls, prompt tokens) of one repeat of a target over every case and turn, counted on
    the rendered messages; targets sharing an encoding and a prompt version count once."""
    assert target.model is not None
    key = (tokens.encoding_name(target.model.model),
           target.version.id if target.version else None)
    if key not in counted:
        parts, history = target.prompt_parts, resolved.spec.max_history_pairs
        calls = total = 0
        for _, data, _ in resolved.cases:
            for turn in range(user_turns(data)):
                calls += 1
                total += tokens.count_messages(cell_messages(data, parts, turn, history),
                                               target.model.model)
        counted[key] = (calls, total)
    return counted[key]


class _Judging:
    """The judge cost range of a run's targets: per call of a target, times its calls."""

    def __init__(self, session: Session, resolved: Resolved) -> None:
        self.resolved = resolved
        kinds = dict(session.execute(select(ScorerConfig.id, ScorerConfig.kind).where(
            ScorerConfig.id.in_({v.scorer_id for v in resolved.scorers}))).all())
        self.judged = judge_budget.judged_by([
            Applied(v.id, kinds[v.scorer_id], registry.build(kinds[v.scorer_id], v.params))
            for v in resolved.scorers])
        self.judges = {ref: JudgeModel(m.name, m.model, Endpoint(
            m.credential.kind, m.credential.base_url, None, {}, m.credential.id),
            dict(m.params or {}), m.input_price_per_mtok_micros,
            m.output_price_per_mtok_micros) for ref, m in resolved.judges.items()}
        self.unpriced = sorted({m.id for m in resolved.judges.values()
                                if not is_priced(m.input_price_per_mtok_micros,
                                                 m.output_price_per_mtok_micros)})
        self.per_call: dict[tuple[int | None, int], tuple[int, int, int]] = {}

    @cached_property
    def sample(self) -> list[tuple[dict[str, Any], Any]]:
        """(input, expected) of up to JUDGE_SAMPLE cases spread over the version."""
        cases = self.resolved.cases
        picked = cases[::max(1, len(cases) // JUDGE_SAMPLE)][:JUDGE_SAMPLE]
        ids = [case_id for case_id, _, _ in picked]
        expected: dict[int, Any] = dict(self.resolved.session.execute(
            select(Case.id, Case.expected).where(Case.id.in_(ids))).all())
        return [(data, expected.get(case_id)) for case_id, data, _ in picked]

    def range_per_call(self, target: PlannedTarget, reply_high: int) -> tuple[int, int, int]:
        """(judge calls, low micros, high micros) per reply of `target`, averaged over the
        sampled cases and turns."""
        key = (target.version.id if target.version else None, reply_high)
        if key not in self.per_call:
            reply_low = math.ceil(reply_high * LOW_OUTPUT_SHARE)
            replies = calls = low = high = 0
            for data, expected in self.sample:
                for turn in range(user_turns(data)):
                    messages = cell_messages(data, target.prompt_parts, turn,
                                             self.resolved.spec.max_history_pairs)
                    probe = reply_subject(data, expected, turn, messages, judge_budget.MARK)
                    replies += 1
                    for call in judge_budget.judge_calls(self.judged, self.judges, probe):
                        verdict = call.max_verdict_tokens
                        calls += 1
                        low += call.cost(reply_low, math.ceil(
                            verdict * LOW_OUTPUT_SHARE)) or 0
                        high += call.cost(reply_high, verdict) or 0
            n = max(replies, 1)
            self.per_call[key] = (round(calls / n), round(low / n), round(high / n))
        return self.per_call[key]


def estimate_run(session: Session, project: Project, spec: RunSpec) -> dict[str, Any]:
    """The cost range of a run of `spec`, per target and in total, with every reason it
    could not start (`problems`). Writes nothing."""
    resolved = resolve(session, project, spec)
    repeats = 1 if resolved.is_trace else spec.repeats
    counted: dict[tuple[str, int | None], tuple[int, int]] = {}
    per_target, unpriced = [], []
    low_total = high_total = calls_total = 0
    judging = _Judging(session, resolved) if resolved.scorers and not resolved.is_trace \
        else None
    judge_calls = judge_low = judge_high = 0
    for target in resolved.targets:
        model = target.model
        if model is None:  # a recorded trace: nothing is called
            per_target.append({
                "label": target.label, "model_id": None, "calls": 0, "input_tokens": 0,
                "output_tokens_low": 0, "output_tokens_high": 0, "low_micros": 0,
                "high_micros": 0, "priced": True})
            continue
        calls, prompt_tokens = _prompt_tokens(resolved, target, counted)
        calls, input_tokens = calls * repeats, prompt_tokens * repeats
        high_out = tokens.max_output_tokens(target.effective_params)
        low_out = math.ceil(high_out * LOW_OUTPUT_SHARE)
        price_in, price_out = model.input_price_per_mtok_micros, model.output_price_per_mtok_micros
        low = cost_micros(input_tokens, calls * low_out, price_in, price_out)
        high = cost_micros(input_tokens, calls * high_out, price_in, price_out)
        if low is not None and high is not None:
            low_total += low
            high_total += high
        elif model.id not in unpriced:
            unpriced.append(model.id)
        calls_total += calls
        if judging is not None and judging.judged:
            per_reply, low_each, high_each = judging.range_per_call(target, high_out)
            judge_calls += per_reply * calls
            judge_low += low_each * calls
            judge_high += high_each * calls
        per_target.append({
            "label": target.label, "model_id": model.id, "calls": calls,
            "input_tokens": input_tokens, "output_tokens_low": calls * low_out,
            "output_tokens_high": calls * high_out, "low_micros": low, "high_micros": high,
            "priced": is_priced(price_in, price_out)})
    for model_id in judging.unpriced if judging is not None else ():
        if model_id not in unpriced:
            unpriced.append(model_id)
    return {
        "dataset_version_id": resolved.version.id, "cases": resolved.version.case_count,
        "repeats": repeats, "calls": calls_total, "low_micros": low_total + judge_low,
        "high_micros": high_total + judge_high, "judge_calls": judge_calls,
        "judge_low_micros": judge_low, "judge_high_micros": judge_high,
        "complete": not unpriced, "per_target": per_target, "unpriced_models": unpriced,
        "assumptions": {"low_output_share": LOW_OUTPUT_SHARE,
                        "default_max_tokens": tokens.DEFAULT_MAX_OUTPUT,
                        "tokens_per_message": tokens.TOKENS_PER_MESSAGE},
        "problems": collect_problems(resolved),
    }
