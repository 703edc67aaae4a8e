"""A scripted JudgeCall: canned replies per judge, and a record of every call it got."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from assay.scorers.base import JudgeReply

# A reply: text, a ready JudgeReply, an exception to raise, or a function of the messages.
Reply = str | JudgeReply | Exception | Callable[[list[dict[str, Any]]], str]

BLOCK = re.compile(r'<data-([0-9a-f]+) name="([^"]+)">\n(.*?)\n</data-\1>', re.DOTALL)


@dataclass
class Call:
    judge: str
    messages: list[dict[str, Any]]
    params: Mapping[str, Any]

    @property
    def system(self) -> str:
        return str(self.messages[0]["content"])

    @property
    def user(self) -> str:
        return str(self.messages[-1]["content"])

    @property
    def nonce(self) -> str:
        found = re.search(r"<data-([0-9a-f]+) name=", self.system)
        assert found, "the system message names the block id"
        return found.group(1)

    def blocks(self) -> dict[str, str]:
        """The user message's data blocks by label (only blocks tagged with this call's
        id count)."""
        return {label: text for nonce, label, text in BLOCK.findall(self.user)
                if nonce == self.nonce}

    def outside_blocks(self) -> str:
        """The user message with its data blocks cut out: the instructions."""
        return BLOCK.sub("", self.user)


class ScriptedJudge:
    """Replies per judge name; a list is consumed one reply per call."""

    def __init__(self, script: Mapping[str, Reply | list[Reply]]):
        self.script = {k: list(v) if isinstance(v, list) else v for k, v in script.items()}
        self.calls: list[Call] = []

    async def __call__(self, judge: str, messages: list[dict[str, Any]],
                       params: Mapping[str, Any]) -> JudgeReply:
        self.calls.append(Call(judge, messages, params))
        entry = self.script[judge]
        reply = entry.pop(0) if isinstance(entry, list) else entry
        if isinstance(reply, Exception):
            raise reply
        if isinstance(reply, JudgeReply):
            return reply
        text = reply(messages) if callable(reply) else reply
        return JudgeReply(text, model=f"provider-{judge}", tokens_in=100, tokens_out=20,
                          cost_micros=7)

    def calls_of(self, judge: str) -> list[Call]:
        return [c for c in self.calls if c.judge == judge]


def rubric_reply(scores: Mapping[str, float], summary: str = "Solid overall.",
                 **extra: Any) -> str:
    """A valid reply to a rubric prompt (extra top-level fields make it invalid)."""
    return json.dumps({"criteria": {name: {"score": score, "rationale": f"{name} is fine."}
                                    for name, score in scores.items()},
                       "summary": summary, **extra})
