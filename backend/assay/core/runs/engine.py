"""Executes claimed cells concurrently through the LLM client and turns calls into results."""

from __future__ import annotations

from assay.core.runs.service import Cell, CellResult
from assay.providers.base import ChatRequest
from assay.providers.client import LLMClient


def cost_micros(tokens_in: int | None, tokens_out: int | None, price_in: int | None,
                price_out: int | None) -> int | None:
    """Prices are micro-dollars per million tokens; round up so cost is never understated.
    An unpriced model's cost is unknown (None), never silently zero."""
    if price_in is None or price_out is None:
        return None
    numerator = (tokens_in or 0) * price_in + (tokens_out or 0) * price_out
    return -(-numerator // 1_000_000)


async def execute_cell(client: LLMClient, cell: Cell) -> CellResult:
    result = await client.chat(cell.base_url, ChatRequest(cell.model, cell.messages, cell.params))
    if result.error is not None:
        return CellResult(cell.output_id, ok=False, error_class=result.error.error_class,
                          error_message=result.error.message, latency_ms=result.latency_ms)
    response = result.response
    assert response is not None
    return CellResult(
        cell.output_id, ok=True, text=response.text, tokens_in=response.tokens_in,
        tokens_out=response.tokens_out, latency_ms=result.latency_ms,
        cost_micros=cost_micros(response.tokens_in, response.tokens_out, cell.price_in,
                                cell.price_out),
    )

