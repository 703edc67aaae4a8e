"""The one protocol every scorer kind implements (DESIGN §5).

A scorer is built once from its validated parameters (`Scorer(params)`, raising
`ParamsError` with field errors) and then scores many outputs: `await score(subject, ctx)`
returns one `ScoreResult` per judge model (one for scorers without judges). Scorers are
pure where they can be: everything they read is in the `Subject`, everything they may call
(an LLM judge, the code sandbox) comes through the `Context`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol


class ParamsError(ValueError):
    """Bad scorer parameters: `errors` maps a field path to its messages (shown as a 422)."""

    def __init__(self, errors: Mapping[str, list[str]]):
        self.errors = {key: list(messages) for key, messages in errors.items()}
        super().__init__("; ".join(f"{k}: {', '.join(v)}" for k, v in self.errors.items()))


@dataclass(frozen=True)
class Subject:
    """One output to score, with the case it answers."""

    output: str | None  # the text under test (None: the call failed)
    input: Mapping[str, Any] = field(default_factory=dict)  # the case's input
    expected: Mapping[str, Any] | None = None  # the case's expected object, as stored
    reference: str | None = None  # the expected text for this cell (output, or the turn's)
    messages: list[dict[str, Any]] | None = None  # the conversation or trace, output last
    context: str | None = None  # grounding text (RAG metrics)
    # a RAG run's cell: the chunks its prompt was given [{chunk_id, text, score, ...}]
    retrieved: tuple[Mapping[str, Any], ...] | None = None
    latency_ms: int | None = None
    cost_micros: int | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    tags: tuple[str, ...] = ()
    difficulty: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Evidence:
    """What a score points at: a message of the conversation or trace (by index), and
    optionally a span of its text."""

    message_index: int | None = None
    start: int | None = None
    end: int | None = None
    text: str = ""
    label: str = ""  # the rule or criterion it supports


@dataclass(frozen=True)
class ScoreResult:
    """One score. `value` is normalised to 0..1 (None when scoring failed: then `error`
    says why and what to do). `passed` is the verdict where the kind has one."""

    value: float | None
    passed: bool | None = None
    criteria: Mapping[str, float] = field(default_factory=dict)  # normalised 0..1 each
    rationale: str = ""
    evidence: tuple[Evidence, ...] = ()
    severity: str | None = None  # the kind's own scale (rules: low/high/critical; safety...)
    flags: tuple[str, ...] = ()  # safety findings, e.g. "pii:email"
    error: str | None = None
    judge_model: str | None = None  # the judge model that produced it, for judge kinds
    details: Mapping[str, Any] = field(default_factory=dict)  # kind-specific, JSON-safe

    @classmethod
    def failed(cls, error: str, judge_model: str | None = None,
               **details: Any) -> ScoreResult:
        return cls(None, None, error=error, judge_model=judge_model, details=details)


@dataclass(frozen=True)
class JudgeReply:
    """What a judge call returned: text, or an error with its class."""

    text: str | None
    model: str
    error_class: str | None = None
    error: str | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    cost_micros: int | None = None
    model_id: int | None = None  # the model config that made the call (for the ledger)
    calls: int = 0  # requests sent to the provider (retries included)


class JudgeCall(Protocol):
    """Send `messages` to the judge model configured as `judge` (a model config id or
    name), with `params` (temperature, seed, response format...)."""

    async def __call__(self, judge: str, messages: list[dict[str, Any]],
                       params: Mapping[str, Any]) -> JudgeReply: ...


@dataclass(frozen=True)
class Context:
    """What a scorer may use besides its subject."""

    judge: JudgeCall | None = None  # None: judge kinds fail with an actionable error
    code_execution: bool = False  # the project opted in to the code sandbox
    # time.monotonic() by which a scorer that may run long (the sandbox's tests) stops:
    # work a person waits for (a trial) is bounded; None for runs (their jobs are)
    deadline: float | None = None


class Scorer(Protocol):
    kind: ClassVar[str]

    def __init__(self, params: Mapping[str, Any]) -> None: ...

    @property
    def judges(self) -> tuple[str, ...]:
        """The judge models this scorer calls (empty for deterministic kinds)."""
        ...

    async def score(self, subject: Subject, ctx: Context) -> list[ScoreResult]: ...


@dataclass(frozen=True)
class PairVerdict:
    """A pairwise judgement of outputs A and B of one case by one judge, asked in both
    orders. `winner` is "a", "b" or "tie" when both orders agree (after un-swapping), None
    when they disagree: then `position_bias` is True and `orders` shows each answer."""

    winner: str | None
    position_bias: bool = False
    orders: tuple[str | None, str | None] = (None, None)  # (A shown first, B shown first)
    rationale: str = ""
    error: str | None = None
    judge_model: str | None = None


class PairwiseScorer(Protocol):
    kind: ClassVar[str]

    def __init__(self, params: Mapping[str, Any]) -> None: ...

    @property
    def judges(self) -> tuple[str, ...]: ...

    async def compare(self, a: Subject, b: Subject, ctx: Context) -> list[PairVerdict]:
        """Both outputs answer the same case (`a.input`); identities are never shown."""
        ...
