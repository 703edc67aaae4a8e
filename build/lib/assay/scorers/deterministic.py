"""What every deterministic kind (reference checks, safety) shares: parameters read from
declared fields, no judges, one result per output, a failed result for a failed call, and
evidence spans that point into the output."""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any, ClassVar

from assay.scorers.base import Context, Evidence, ParamsError, ScoreResult, Subject
from assay.scorers.param_fields import Field, params_schema, read_fields

NO_OUTPUT = ("The model call failed, so there is no output to check; "
             "see the output's error, and re-run the failed cells.")
EVIDENCE_TEXT_LIMIT = 200  # the span's start/end stay exact; only the quoted text is cut


class DeterministicScorer(ABC):
    """A kind that needs no judge. Subclasses declare `kind` and `fields`, take their
    validated values in `configure` (adding cross-field errors) and score in `check`."""

    kind: ClassVar[str]
    fields: ClassVar[tuple[Field, ...]] = ()
    params_schema: ClassVar[dict[str, Any]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.params_schema = params_schema(cls.fields, inspect.getdoc(cls) or "")

    def __init__(self, params: Mapping[str, Any]) -> None:
        values = read_fields(self.fields, params)
        errors: dict[str, list[str]] = {}
        self.configure(values, errors)
        if errors:
            raise ParamsError(errors)

    @abstractmethod
    def configure(self, values: dict[str, Any], errors: dict[str, list[str]]) -> None:
        """Keep the validated `values`; record problems between fields in `errors`."""

    @property
    def judges(self) -> tuple[str, ...]:
        return ()

    async def score(self, subject: Subject, ctx: Context) -> list[ScoreResult]:
        if subject.output is None:
            return [ScoreResult.failed(NO_OUTPUT)]
        return [await self.check(subject.output, subject)]

    @abstractmethod
    async def check(self, output: str, subject: Subject) -> ScoreResult:
        """Score the output text of `subject`."""


def span(subject: Subject, start: int, end: int, label: str) -> Evidence:
    """Evidence for output[start:end]; in a conversation or trace the output is the last
    message, so the span points at it."""
    text = (subject.output or "")[start:end]
    if len(text) > EVIDENCE_TEXT_LIMIT:
        text = text[:EVIDENCE_TEXT_LIMIT - 1] + "…"
    index = len(subject.messages) - 1 if subject.messages else None
    return Evidence(message_index=index, start=start, end=end, text=text, label=label)


def quote(text: str, limit: int = 60) -> str:
    """A short quoted form of `text` for a rationale."""
    if len(text) > limit:
        text = text[:limit - 1] + "…"
    return repr(text)


def verdict(ok: bool, rationale: str, **kwargs: Any) -> ScoreResult:
    """A pass/fail result: value 1.0 or 0.0."""
    return ScoreResult(1.0 if ok else 0.0, ok, rationale=rationale, **kwargs)
