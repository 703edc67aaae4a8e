"""Prices a config leaves out: OpenRouter's models are priced from its public model list
(`GET {base}/v1/models`, `pricing` per token); Ollama's are 0 (config.py)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from assay.core.evalcli.config import EvalConfig
from assay.core.llm import kinds
from assay.providers.base import join_url
from assay.providers.openai import OPENROUTER

log = logging.getLogger(__name__)
Fetch = Callable[[str], Any]


def _get(url: str) -> Any:
    import httpx  # only for an OpenRouter model without a price: not on every start

    reply = httpx.get(url, timeout=20, headers={"Accept": "application/json"})
    reply.raise_for_status()
    return reply.json()


def fill_openrouter_prices(cfg: EvalConfig, fetch: Fetch = _get) -> list[str]:
    """Price the OpenRouter models that have no price in the config; returns the names
    still unpriced (the list could not be read, or does not hold the model)."""
    lists: dict[str, dict[str, tuple[int | None, int | None]]] = {}
    unpriced = []
    for model in cfg.models:
        provider = cfg.providers[model.provider]
        if provider.kind != kinds.OPENROUTER or (
                model.input_price_per_mtok is not None and model.output_price_per_mtok is not None):
            continue
        base = provider.base_url or ""
        if base not in lists:
            try:
                lists[base] = OPENROUTER.parse_prices(fetch(join_url(base, "models")))
            except Exception as exc:  # any failure: the model stays unpriced, said so
                log.warning("OpenRouter's model list could not be read: %s", exc)
                lists[base] = {}
        price_in, price_out = lists[base].get(model.model, (None, None))
        if model.input_price_per_mtok is None and price_in is not None:
            model.input_price_per_mtok = price_in / 1e6
        if model.output_price_per_mtok is None and price_out is not None:
            model.output_price_per_mtok = price_out / 1e6
        if model.input_price_per_mtok is None or model.output_price_per_mtok is None:
            unpriced.append(model.name)
    return unpriced
