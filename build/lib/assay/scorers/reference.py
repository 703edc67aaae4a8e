"""Reference checks (DESIGN §5): deterministic kinds that compare an output with the
case's expected text, key points or a pattern, or check its form, length, latency and
cost. Each kind lives in a module by theme; this module lists them all."""

from __future__ import annotations

from assay.scorers import (
    reference_fuzzy,
    reference_json,
    reference_limits,
    reference_regex,
    reference_text,
)

SCORERS: dict[str, type] = {
    **reference_text.SCORERS,
    **reference_regex.SCORERS,
    **reference_json.SCORERS,
    **reference_fuzzy.SCORERS,
    **reference_limits.SCORERS,
}
