"""Judges the operator approved for hidden sets (ASSAY_ARENA_SHIP_JUDGES). A hidden trace
must never leave for an endpoint a learner controls, so these judges are defined entirely
by the instance: a kind whose endpoint the instance fixes, a model id and prices. No
project's model config or credential is involved (a learner may point even a `fake`
credential at their own URL, or give a real one params like `store: true`).

Entries are `kind:model[=IN/OUT]`, comma-separated, prices in micro-dollars per million
tokens (so allowances and budgets see a cost); the key of a real provider is the
operator's `<KIND>_API_KEY`."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from assay.core.llm.kinds import ANTHROPIC, FAKE, OPENAI, OPENROUTER, default_base_url, get_kind
from assay.providers.base import Endpoint
from assay.providers.registry import api_key_for

if TYPE_CHECKING:  # settings.py reads this module: it imports no models
    from assay.core.scoring.judge_calls import JudgeModel

SETTING = "ASSAY_ARENA_SHIP_JUDGES"
KINDS = (FAKE, OPENAI, ANTHROPIC, OPENROUTER)  # their public base URL, or the fake's setting


@dataclass(frozen=True)
class ShipJudge:
    kind: str
    model: str
    price_in: int | None = None
    price_out: int | None = None

    @property
    def ref(self) -> str:
        return f"{self.kind}:{self.model}"

    def key_var(self) -> str | None:
        return None if self.kind == FAKE else f"{self.kind.upper()}_API_KEY"

    def judge_model(self, fake_provider_url: str,
                    env: Mapping[str, str] | None = None) -> JudgeModel:
        """The judge to call; `key_error` says the operator's key is missing."""
        from assay.core.scoring.judge_calls import JudgeModel

        env = os.environ if env is None else env
        var = self.key_var()
        key = api_key_for(self.kind, env.get(var) if var else None)
        error = f"The operator has not set {var} for this judge" if var and not key else None
        base = default_base_url(get_kind(self.kind), fake_provider_url)
        assert base is not None
        # the reference is the judge's name: what scores and the attempt record
        return JudgeModel(self.ref, self.model, Endpoint(self.kind, base, key, {}, None), {},
                          self.price_in, self.price_out, error, None)


def _price(text: str, entry: str) -> int:
    if not text.isascii() or not text.isdigit():
        raise ValueError(f"{SETTING}: prices of {entry!r} must be whole micro-dollars per "
                         "million tokens, like fake:fake-judge=500000/1500000")
    return int(text)


def parse(raw: str | None) -> tuple[ShipJudge, ...]:
    """The approved judges; ValueError (a startup error) on a malformed entry."""
    judges: list[ShipJudge] = []
    for entry in (raw or "").split(","):
        entry = entry.strip()
        if not entry:
            continue
        ref, _, prices = entry.partition("=")
        kind, _, model = ref.strip().partition(":")
        kind, model = kind.strip(), model.strip()
        if kind not in KINDS:
            raise ValueError(f"{SETTING}: {entry!r} has kind {kind!r}; approved judges run "
                             f"on an endpoint the instance fixes: {', '.join(KINDS)}")
        if not model:
            raise ValueError(f"{SETTING}: {entry!r} names no model (kind:model)")
        price_in = price_out = None
        if prices:
            given, _, out = prices.partition("/")
            price_in, price_out = _price(given.strip(), entry), _price(out.strip(), entry)
        judge = ShipJudge(kind, model, price_in, price_out)
        if any(j.ref == judge.ref for j in judges):
            raise ValueError(f"{SETTING}: {judge.ref!r} is given twice")
        judges.append(judge)
    return tuple(judges)


def find(judges: tuple[ShipJudge, ...], ref: str | None) -> ShipJudge | None:
    return next((j for j in judges if j.ref == ref), None)
