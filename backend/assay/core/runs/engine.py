"""Executes claimed cells through the LLM client and turns calls (or cache hits) into
results. Every cell ends as a result: a reply, or a failure with its error class."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from assay.core import ledger
from assay.core.runs import judge_budget
from assay.core.runs.service import Cell, CellResult
from assay.core.scoring.apply import Applied, reply_subject, score_subject
from assay.core.scoring.judge_calls import ModelJudge
from assay.observability import metrics
from assay.providers import tokens
from assay.providers.base import INTERNAL, ChatRequest, Endpoint
from assay.providers.client import LLMClient
from assay.providers.pricing import cost_micros
from assay.scorers.base import Context, Subject

log = logging.getLogger(__name__)


def endpoint_of(cell: Cell) -> Endpoint:
    return Endpoint(cell.kind, cell.base_url, cell.api_key, cell.config, cell.credential_id)


@dataclass(frozen=True)
class Scoring:
    """The run's scorers, applied to each reply as it comes back."""

    applied: Sequence[Applied] = ()
    ctx: Context = field(default_factory=Context)


async def execute_cell(client: LLMClient, cell: Cell, scoring: Scoring | None = None,
                       answered: dict[int, CellResult] | None = None) -> CellResult:
    """`answered`: where a reply waits while its judges score it, so that a stop that
    aborts the judges still records (and bills) the reply the provider gave, and the
    judge calls that answered for it."""
    try:
        result = await _execute_cell(client, cell)
        metrics.record_cell(result.provider, result.model, result.ok, result.cached,
                            result.cost_micros)
        if scoring is not None and scoring.applied and result.ok:
            judged = ledger.Tab()  # each judge call as it lands, kept with the reply
            if answered is not None:
                answered[cell.output_id] = replace(result, judged=judged)
            result = replace(result, scores=await score_subject(
                scoring.applied, subject_of(cell, result), scoring.ctx, judged))
            if answered is not None:
                del answered[cell.output_id]
        return result
    except Exception as exc:  # a bug must fail its cell, not the shard with every other cell
        log.exception("cell %s failed inside Assay", cell.output_id)
        return CellResult(output_id=cell.output_id, ok=False, error_class=INTERNAL,
                          error_message=f"internal error: {type(exc).__name__}: {exc}")


def judge_bound(scoring: Scoring) -> Callable[[Cell], int] | None:
    """The most judging a cell's reply can cost under the run's scorers (None: no judges)."""
    judged = judge_budget.judged_by(scoring.applied)
    judge = scoring.ctx.judge
    if not judged or not isinstance(judge, ModelJudge):
        return None
    models = judge.models

    def bound(cell: Cell) -> int:
        probe = subject_of(cell, CellResult(cell.output_id, ok=True, text=judge_budget.MARK))
        return judge_budget.max_judge_cost(judged, models, probe,
                                           tokens.max_output_tokens(cell.params))
    return bound


def subject_of(cell: Cell, result: CellResult) -> Subject:
    return reply_subject(cell.case_input, cell.expected, cell.turn, cell.messages,
                         result.text, retrieved=cell.retrieved, latency_ms=result.latency_ms,
                         cost_micros=result.cost_micros, tokens_in=result.tokens_in,
                         tokens_out=result.tokens_out)


async def _execute_cell(client: LLMClient, cell: Cell) -> CellResult:
    base: dict[str, Any] = {"output_id": cell.output_id, "cache_key": cell.cache_key,
                            "provider": cell.kind, "model": cell.model}
    if cell.key_error is not None:
        return CellResult(ok=False, error_class="auth", error_message=cell.key_error, **base)
    hit = cell.cache_hit
    if hit is not None:  # never calls the provider: free, and says so
        return CellResult(ok=True, text=hit.text, tokens_in=hit.tokens_in,
                          tokens_out=hit.tokens_out, cost_micros=0, latency_ms=0, cached=True,
                          raw_response=hit.raw, **base)
    request = ChatRequest(cell.model, cell.messages, cell.params)
    result = await client.chat(endpoint_of(cell), request, stream=cell.stream)
    common: dict[str, Any] = {"latency_ms": result.latency_ms, "calls": result.attempts,
              "raw_request": result.raw_request, "raw_response": result.raw_response, **base}
    if result.error is not None:
        return CellResult(ok=False, error_class=result.error.error_class,
                          error_message=result.error.message, **common)
    response = result.response
    assert response is not None
    return CellResult(
        ok=True, text=response.text, tokens_in=response.tokens_in,
        tokens_out=response.tokens_out, ttft_ms=result.ttft_ms,
        cost_micros=cost_micros(response.tokens_in, response.tokens_out, cell.price_in,
                                cell.price_out), **common)
