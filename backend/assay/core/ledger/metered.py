"""A judge call that adds up, per judge model, what its replies cost: the Tab a job records
once its verdicts land."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from assay.core.ledger.book import Tab
from assay.scorers.base import JudgeCall, JudgeReply


class Metered:
    def __init__(self, inner: JudgeCall, tab: Tab | None = None) -> None:
        self.inner, self.tab = inner, tab if tab is not None else Tab()

    async def __call__(self, judge: str, messages: list[dict[str, Any]],
                       params: Mapping[str, Any]) -> JudgeReply:
        reply = await self.inner(judge, messages, params)
        if reply.calls:  # a judge that failed before any request cost nothing
            self.tab.add(reply.model_id, reply.calls, reply.cost_micros, reply.tokens_in,
                         reply.tokens_out)
        return reply
