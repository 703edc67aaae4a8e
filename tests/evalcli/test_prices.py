"""OpenRouter models without a price in the config are priced from its model list."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from assay.core.evalcli.config import load
from assay.core.evalcli.prices import fill_openrouter_prices

CONFIG = """\
prompts: ["{{q}}"]
providers:
  - {name: or, kind: openrouter, api_key_env: OPENROUTER_API_KEY}
models:
  - {name: mini, provider: or, model: openai/gpt-4o-mini}
  - {name: mine, provider: or, model: openai/gpt-4o-mini, input_price_per_mtok: 9,
     output_price_per_mtok: 9}
  - {name: gone, provider: or, model: nobody/nothing}
tests: [{vars: {q: hi}}]
"""
LIST = {"data": [{"id": "openai/gpt-4o-mini",
                  "pricing": {"prompt": "0.00000015", "completion": "0.0000006"}},
                 {"id": "free/model", "pricing": {"prompt": "0", "completion": "0"}}]}


def test_prices_come_from_the_model_list(tmp_path: Path) -> None:
    path = tmp_path / "assay.yaml"
    path.write_text(CONFIG)
    cfg = load(path, env={"OPENROUTER_API_KEY": "k"})
    asked: list[str] = []

    def fetch(url: str) -> Any:
        asked.append(url)
        return LIST

    assert fill_openrouter_prices(cfg, fetch) == ["gone"]
    assert asked == ["https://openrouter.ai/api/v1/models"]  # once per server
    mini, mine, gone = cfg.models
    assert (mini.input_price_per_mtok, mini.output_price_per_mtok) == (0.15, 0.6)
    assert (mine.input_price_per_mtok, mine.output_price_per_mtok) == (9, 9)  # given: kept
    assert gone.input_price_per_mtok is None


def test_an_unreadable_list_leaves_them_unpriced(tmp_path: Path) -> None:
    path = tmp_path / "assay.yaml"
    path.write_text(CONFIG)
    cfg = load(path, env={"OPENROUTER_API_KEY": "k"})

    def fetch(url: str) -> Any:
        raise OSError("offline")

    assert fill_openrouter_prices(cfg, fetch) == ["mini", "gone"]
