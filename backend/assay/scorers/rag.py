"""RAG metrics (kind "rag_metrics", rag-eval-data-model's RAGMetrics): groundedness,
relevance, coherence and fluency on 1-5 each by every judge, plus the answer's latency.

A fixed rubric of four equally weighted criteria on the shared strict-JSON judge path.
Groundedness is judged against the chunks a RAG run retrieved for the answer (the context
it was given), else the case's grounding context; a case without either is
judged against its ground-truth answer (rag-eval's ground truth is drawn from the source
document), and that choice is recorded in details["grounding_source"].

Params:
    judges: [model config id or name] (1 to 5, distinct)
    instructions?: text for the judges (at most 4,000 characters)
    pass_threshold?: 0..1 on the composite (the mean of the metrics mapped 1..5 -> 0..1)

Details: "metrics" holds RAGMetrics' fields (1-5 scores, latency_ms, average_score) and,
for an answer of a run that answered from documents, context_precision and context_recall
(0..1: the retrieved chunks against those the ground truth was generated from).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any, ClassVar

from assay.scorers.base import Context, ScoreResult, Subject
from assay.scorers.judge_prompts import RAG_PREAMBLE
from assay.scorers.judging import (
    JUDGES_SCHEMA,
    THRESHOLD_SCHEMA,
    FieldErrors,
    ask_judges,
    blocks,
    cannot_judge,
    check_keys,
    judge_messages,
    kind_schema,
    message_text,
    parse_judges,
    parse_text,
    parse_threshold,
    render_input,
    render_messages,
    text_schema,
)
from assay.scorers.rubric import Criterion, Rubric, reply_format, rubric_task, score_result

PARAM_FIELDS = ("judges", "instructions", "pass_threshold")
MAX_INSTRUCTIONS = 4000
NO_GROUNDING = ("Groundedness needs grounding: give the case a grounding context (the "
                "dataset's source document) or a ground-truth answer, then score again.")

RAG_RUBRIC = Rubric((
    Criterion("groundedness", "Every claim in the answer is supported by the grounding; "
              "1 = mostly unsupported or contradicting it, 5 = fully supported.", 0.25, 1, 5),
    Criterion("relevance", "The answer addresses the question that was asked, completely "
              "and without digressions; 1 = off topic, 5 = exactly on point.", 0.25, 1, 5),
    Criterion("coherence", "The answer is logically consistent and well organised; "
              "1 = contradictory or disjointed, 5 = clear and consistent.", 0.25, 1, 5),
    Criterion("fluency", "The answer is grammatical, readable and natural; "
              "1 = hard to read, 5 = fluent.", 0.25, 1, 5),
))
METRICS = tuple(c.name for c in RAG_RUBRIC.criteria)
CONTEXT_METRICS = ("context_precision", "context_recall")  # 0..1, against source chunks


def question_of(subject: Subject) -> str | None:
    """The question answered: the last user message of the conversation, else the case's
    `question` input, else its whole input."""
    for message in reversed(subject.messages or []):
        if message.get("role") == "user":
            return message_text(message)
    question = subject.input.get("question")
    if isinstance(question, str):
        return question
    return render_input(subject.input, bool(subject.messages))


def grounding_of(subject: Subject) -> tuple[str, str] | None:
    """(source, text) of what groundedness is judged against, or None: the chunks a RAG
    run retrieved for the answer, else the case's context, else its ground truth."""
    if subject.retrieved and subject.context:
        return "retrieved", subject.context
    if subject.context:
        return "context", subject.context
    if subject.reference:
        return "reference", subject.reference
    return None


def source_chunks(subject: Subject) -> list[int] | None:
    """The chunks the case's ground truth was generated from (generation records them in
    expected.source_chunks: one list per turn for a conversation), or None."""
    found = (subject.expected or {}).get("source_chunks")
    if not isinstance(found, list) or not found:
        return None
    if all(isinstance(x, list) for x in found):
        turn = _turn_of(subject)
        found = found[turn] if turn is not None and turn < len(found) else None
    if not isinstance(found, list):
        return None
    return [int(x) for x in found if isinstance(x, int) and not isinstance(x, bool)]


def _turn_of(subject: Subject) -> int | None:
    users = sum(1 for m in subject.messages or [] if m.get("role") == "user")
    return users - 1 if users else None


def context_metrics(subject: Subject) -> dict[str, Any]:
    """Context precision (share of the retrieved chunks the ground truth came from) and
    recall (share of those chunks retrieved), when both are known; deterministic."""
    if not subject.retrieved:
        return {}
    retrieved = [c.get("chunk_id") for c in subject.retrieved]
    out: dict[str, Any] = {"retrieved_chunk_ids": retrieved}
    source = source_chunks(subject)
    if source:
        hits = len(set(retrieved) & set(source))
        out.update(source_chunk_ids=source, context_precision=round(hits / len(retrieved), 4),
                   context_recall=round(hits / len(set(source)), 4))
    return out


class RagMetrics:
    kind: ClassVar[str] = "rag_metrics"
    params_schema: ClassVar[dict[str, Any]] = kind_schema(
        "Judge models rate groundedness, relevance, coherence and fluency (1-5)",
        {"judges": JUDGES_SCHEMA,
         "instructions": text_schema(MAX_INSTRUCTIONS, "Further instructions for the judges"),
         "pass_threshold": THRESHOLD_SCHEMA},
        ("judges",))

    def __init__(self, params: Mapping[str, Any]) -> None:
        errors = FieldErrors()
        check_keys(params, PARAM_FIELDS, "", errors)
        self._judges = parse_judges(params.get("judges"), errors)
        self.instructions = parse_text(params.get("instructions"), errors, "instructions",
                                       MAX_INSTRUCTIONS)
        self.pass_threshold = parse_threshold(params.get("pass_threshold"), errors)
        errors.raise_any()
        self.reply_format = reply_format(RAG_RUBRIC, "assay_rag_metrics")

    @property
    def judges(self) -> tuple[str, ...]:
        return self._judges

    def messages(self, subject: Subject, nonce: str) -> list[dict[str, Any]]:
        grounding = grounding_of(subject)
        earlier = (subject.messages or [])[:-1]
        material = blocks(nonce, [
            ("conversation before the answer", render_messages(earlier) if earlier else None),
            ("question", question_of(subject)),
            ("grounding" if grounding is None or grounding[0] != "reference"
             else "grounding (ground-truth answer)", grounding[1] if grounding else None),
            ("output under test", subject.output),
        ])
        task = rubric_task(RAG_RUBRIC, material, self.instructions, preamble=RAG_PREAMBLE)
        return judge_messages(nonce, task)

    async def score(self, subject: Subject, ctx: Context) -> list[ScoreResult]:
        if ctx.judge is None or subject.output is None:
            return cannot_judge(subject.output is None, self._judges)
        grounding = grounding_of(subject)
        if grounding is None:
            return [ScoreResult.failed(NO_GROUNDING, judge, latency_ms=subject.latency_ms)
                    for judge in self._judges]
        answers = await ask_judges(ctx.judge, self._judges,
                                   lambda nonce: self.messages(subject, nonce),
                                   self.reply_format)
        extra = {"grounding_source": grounding[0], "latency_ms": subject.latency_ms,
                 **context_metrics(subject)}
        return [self._with_metrics(score_result(
            RAG_RUBRIC, answer, subject.output, self.pass_threshold, extra),
            subject.latency_ms) for answer in answers]

    @staticmethod
    def _with_metrics(result: ScoreResult, latency_ms: int | None) -> ScoreResult:
        """`result` with RAGMetrics' fields in details["metrics"] when it has scores."""
        if result.value is None:
            return result
        scores = result.details["scores"]
        metrics = {**scores, "latency_ms": latency_ms,
                   "average_score": sum(scores.values()) / len(scores),
                   **{k: result.details[k] for k in CONTEXT_METRICS if k in result.details}}
        return replace(result, details={**result.details, "metrics": metrics})


SCORERS: dict[str, type] = {RagMetrics.kind: RagMetrics}
