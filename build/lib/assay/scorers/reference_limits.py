"""Limit checks: the output's length, the call's latency and its cost."""

from __future__ import annotations

from typing import Any

from assay.providers.pricing import dollars
from assay.providers.tokens import DEFAULT_ENCODING, ENCODINGS, EncodingDataError, get_encoding
from assay.scorers.base import ScoreResult, Subject
from assay.scorers.deterministic import DeterministicScorer, verdict
from assay.scorers.param_fields import Field

UNITS = ("characters", "words", "tokens")


class Length(DeterministicScorer):
    """The output's length is within min and max (inclusive), counted in characters,
    words (separated by whitespace) or tokens."""

    kind = "length"
    fields = (
        Field("unit", "choice", "What to count", default="characters", choices=UNITS),
        Field("min", "integer", "The fewest allowed", minimum=0),
        Field("max", "integer", "The most allowed", minimum=0),
        Field("encoding", "choice", f"The tokenizer when unit is tokens; default "
              f"{DEFAULT_ENCODING}", choices=ENCODINGS),
    )

    def configure(self, values: dict[str, Any], errors: dict[str, list[str]]) -> None:
        self.unit: str = values["unit"]
        self.min: int | None = values["min"]
        self.max: int | None = values["max"]
        self.encoding: str = values["encoding"] or DEFAULT_ENCODING
        if self.min is None and self.max is None:
            errors["min"] = errors["max"] = ["Set min, max or both"]
        elif self.min is not None and self.max is not None and self.min > self.max:
            errors["min"] = [f"Must not exceed max ({self.max})"]
        if values["encoding"] is not None and self.unit != "tokens":
            errors["encoding"] = ["Applies only when unit is tokens"]

    def _count(self, output: str) -> int:
        if self.unit == "characters":
            return len(output)
        if self.unit == "words":
            return len(output.split())
        return len(get_encoding(self.encoding).encode(output, disallowed_special=()))

    async def check(self, output: str, subject: Subject) -> ScoreResult:
        try:
            count = self._count(output)
        except EncodingDataError as exc:
            return ScoreResult.failed(f"Tokens cannot be counted: {exc}; reinstall Assay's "
                                      f"dependencies, or count words instead.")
        details = {"count": count, "unit": self.unit}
        if self.min is not None and count < self.min:
            return verdict(False, f"{count:,} {self.unit}, below the minimum of {self.min:,}",
                           details=details)
        if self.max is not None and count > self.max:
            return verdict(False, f"{count:,} {self.unit}, above the maximum of {self.max:,}",
                           details=details)
        low = f"{self.min:,}" if self.min is not None else "0"
        high = f"{self.max:,}" if self.max is not None else "∞"
        return verdict(True, f"{count:,} {self.unit}, within {low} to {high}", details=details)


class Latency(DeterministicScorer):
    """The call answered within max_ms milliseconds."""

    kind = "latency"
    fields = (Field("max_ms", "integer", "The slowest allowed answer, in milliseconds",
                    required=True, minimum=1),)

    def configure(self, values: dict[str, Any], errors: dict[str, list[str]]) -> None:
        self.max_ms: int = values["max_ms"]

    async def check(self, output: str, subject: Subject) -> ScoreResult:
        if subject.latency_ms is None:
            return ScoreResult.failed("No latency was recorded for this output (a replayed "
                                      "trace has none); remove the latency scorer here.")
        ok = subject.latency_ms <= self.max_ms
        return verdict(ok, f"{subject.latency_ms:,} ms {'≤' if ok else '>'} the limit of "
                           f"{self.max_ms:,} ms", details={"latency_ms": subject.latency_ms})


class Cost(DeterministicScorer):
    """The call cost at most max_micros micro-dollars (1,000,000 = $1)."""

    kind = "cost"
    fields = (Field("max_micros", "integer", "The most a call may cost, in micro-dollars",
                    required=True, minimum=0),)

    def configure(self, values: dict[str, Any], errors: dict[str, list[str]]) -> None:
        self.max_micros: int = values["max_micros"]

    async def check(self, output: str, subject: Subject) -> ScoreResult:
        if subject.cost_micros is None:
            return ScoreResult.failed("No cost was recorded for this output: its model is "
                                      "unpriced; set its prices in the model config.")
        ok = subject.cost_micros <= self.max_micros
        return verdict(ok, f"{dollars(subject.cost_micros)} {'≤' if ok else '>'} the limit "
                           f"of {dollars(self.max_micros)}",
                       details={"cost_micros": subject.cost_micros})


SCORERS: dict[str, type] = {cls.kind: cls for cls in (Length, Latency, Cost)}
