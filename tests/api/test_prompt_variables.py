"""The SPA's live variable detection and the server's parser agree: both run the cases in
frontend/src/features/prompts/variableCases.json (the Vitest side is api.test.ts)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assay.core.prompts.service import parse_variables

CASES = json.loads((Path(__file__).parents[2] / "frontend" / "src" / "features" / "prompts"
                    / "variableCases.json").read_text())


@pytest.mark.parametrize("case", CASES)
def test_the_server_parses_what_the_editor_shows(case: dict[str, Any]) -> None:
    assert parse_variables(*case["texts"]) == case["variables"]
