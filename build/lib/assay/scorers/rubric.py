"""Rubrics: weighted criteria with scales (edison FR-EC-002), the JSON reply a judge gives
for one, and the composite score.

Scales: edison's dropdown (0-1, 0-3, 0-5, 0-10, 0-100) plus 1-5 (the RAG metrics and
manual 1-5 scores) and 1-10 (the CLI's model-based rubric). A scale is written "0-5" or as
edison's object {min, max, labels?}; labels name points of the scale for the judge.
Criterion names are compared ignoring case, since a judge would confuse "Accuracy" and
"accuracy". Scores may be fractional (3.5 on 1-5) but never outside the scale.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from assay.scorers.base import ScoreResult
from assay.scorers.judge_guard import injection_report
from assay.scorers.judge_prompts import CONFIDENCE_LINE, GOAL, INSTRUCTIONS, RUBRIC_TASK
from assay.scorers.judging import (
    Answer,
    FieldErrors,
    ReplyFormat,
    check_keys,
    is_number,
    parse_text,
    text_schema,
)

SCALES = ((0, 1), (0, 3), (0, 5), (0, 10), (0, 100), (1, 5), (1, 10))
MIN_CRITERIA, MAX_CRITERIA = 2, 10
WEIGHT_TOLERANCE = 0.01
_NAME = re.compile(r"^[a-zA-Z0-9\s]+$")
_SCALE_TEXT = re.compile(r"^\s*(\d+)\s*-\s*(\d+)\s*$")
CRITERION_FIELDS = ("name", "description", "weight", "scale")
RUBRIC_FIELDS = ("criteria", "goal")
SCALE_FIELDS = ("min", "max", "labels")


_SCALE_SCHEMA = {"oneOf": [
    {"type": "string", "enum": [f"{a}-{b}" for a, b in SCALES]},
    {"type": "object", "required": ["min", "max"], "additionalProperties": False,
     "properties": {"min": {"type": "number"}, "max": {"type": "number"},
                    "labels": {"type": "object", "description": "Scale point -> meaning",
                               "additionalProperties": {"type": "string", "minLength": 1,
                                                        "maxLength": 200}}}},
]}
RUBRIC_SCHEMA = {
    "type": "object", "required": ["criteria"], "additionalProperties": False,
    "description": "Weighted criteria; weights sum to 1 (±0.01), names unique ignoring case",
    "properties": {
        "criteria": {"type": "array", "minItems": MIN_CRITERIA, "maxItems": MAX_CRITERIA,
                     "items": {
                         "type": "object", "additionalProperties": False,
                         "required": list(CRITERION_FIELDS),
                         "properties": {
                             "name": {"type": "string", "minLength": 1, "maxLength": 50,
                                      "pattern": _NAME.pattern},
                             "description": text_schema(500, "What the judge checks", 10),
                             "weight": {"type": "number", "minimum": 0, "maximum": 1},
                             "scale": _SCALE_SCHEMA}}},
        "goal": text_schema(2000, "What the output should achieve"),
    },
}


@dataclass(frozen=True)
class Criterion:
    name: str
    description: str
    weight: float
    low: int
    high: int
    labels: Mapping[str, str] = field(default_factory=dict)

    @property
    def scale(self) -> str:
        return f"{self.low}-{self.high}"

    def normalise(self, score: float) -> float:
        return (score - self.low) / (self.high - self.low)


@dataclass(frozen=True)
class Rubric:
    criteria: tuple[Criterion, ...]
    goal: str | None = None

    def composite(self, normalised: Mapping[str, float]) -> float:
        """The weighted mean; dividing by the weights' sum keeps it within 0..1 when the
        weights sum to 1 only within the tolerance."""
        total = sum(c.weight for c in self.criteria)
        return sum(c.weight * normalised[c.name] for c in self.criteria) / total


def _scale(raw: Any, path: str, errors: FieldErrors) -> tuple[int, int, dict[str, str]] | None:
    labels: Mapping[Any, Any] = {}
    low: Any
    high: Any
    if isinstance(raw, str) and (match := _SCALE_TEXT.match(raw)):
        low, high = float(match.group(1)), float(match.group(2))
    elif isinstance(raw, Mapping):
        check_keys(raw, SCALE_FIELDS, path, errors)
        low, high = raw.get("min"), raw.get("max")
        if not (is_number(low) and is_number(high)):
            errors.add(path, "min and max must be numbers")
            return None
        labels = raw.get("labels") or {}
        if not isinstance(labels, Mapping):
            errors.add(f"{path}.labels", "must map scale points to their meaning")
            return None
    else:
        errors.add(path, 'must be a scale such as "0-5" or {"min": 0, "max": 5}')
        return None
    if (low, high) not in SCALES:
        allowed = ", ".join(f"{a}-{b}" for a, b in SCALES)
        errors.add(path, f"{low:g}-{high:g} is not an allowed scale; use one of {allowed}")
        return None
    points = {str(k): v for k, v in labels.items()}
    for point, label in points.items():
        where = f"{path}.labels.{point}"
        if not point.isdigit() or not low <= int(point) <= high:
            errors.add(where, f"not a point of the scale {low:g}-{high:g}")
        elif not isinstance(label, str) or not 1 <= len(label.strip()) <= 200:
            errors.add(where, "must be text of 1 to 200 characters")
    return int(low), int(high), {k: str(v).strip() for k, v in points.items()}


def _criterion(raw: Any, path: str, errors: FieldErrors) -> Criterion | None:
    if not isinstance(raw, Mapping):
        errors.add(path, "must be an object with name, description, weight and scale")
        return None
    check_keys(raw, CRITERION_FIELDS, path, errors)
    name = raw.get("name")
    if not isinstance(name, str) or not 1 <= len(name.strip()) <= 50 \
            or not _NAME.match(name.strip()):
        errors.add(f"{path}.name", "must be 1 to 50 letters, digits or spaces")
        name = None
    description = parse_text(raw.get("description"), errors, f"{path}.description", 500, 10)
    weight = raw.get("weight")
    if not is_number(weight) or not 0 <= weight <= 1:
        errors.add(f"{path}.weight", "must be a number from 0 to 1")
        weight = None
    scale = _scale(raw.get("scale"), f"{path}.scale", errors)
    if name is None or description is None or weight is None or scale is None:
        return None
    return Criterion(name.strip(), description, float(weight), *scale)


def parse_rubric(raw: Any, errors: FieldErrors, path: str = "rubric") -> Rubric | None:
    """The rubric at `path`, or None with its problems added to `errors`."""
    if not isinstance(raw, Mapping):
        errors.add(path, "must be an object with a list of criteria")
        return None
    check_keys(raw, RUBRIC_FIELDS, path, errors)
    goal = parse_text(raw.get("goal"), errors, f"{path}.goal", 2000)
    items = raw.get("criteria")
    where = f"{path}.criteria"
    if not isinstance(items, list) or not MIN_CRITERIA <= len(items) <= MAX_CRITERIA:
        count = f"{len(items)} given" if isinstance(items, list) else "a list is needed"
        errors.add(where, f"a rubric needs {MIN_CRITERIA} to {MAX_CRITERIA} criteria "
                          f"({count})")
        return None
    criteria = [_criterion(item, f"{where}[{i}]", errors) for i, item in enumerate(items)]
    seen: dict[str, int] = {}
    for i, criterion in enumerate(criteria):
        if criterion is None:
            continue
        first = seen.setdefault(criterion.name.casefold(), i)
        if first != i:
            errors.add(f"{where}[{i}].name", f"{criterion.name!r} repeats the name of "
                                             f"criteria[{first}] (names ignore case)")
    if any(c is None for c in criteria) or len(seen) < len(criteria):
        return None
    valid = tuple(c for c in criteria if c is not None)
    total = sum(c.weight for c in valid)
    if abs(total - 1) > WEIGHT_TOLERANCE:
        errors.add(where, f"weights sum to {total:.3f}; they must sum to 1 "
                          f"(±{WEIGHT_TOLERANCE})")
        return None
    return Rubric(valid, goal)


CONFIDENCE_SCHEMA = {"type": "number", "minimum": 0, "maximum": 1}


def reply_format(rubric: Rubric, name: str = "assay_rubric_scores",
                 confidence: bool = False) -> ReplyFormat:
    """Per criterion a score within its scale and a rationale, plus a summary (and, with
    `confidence`, the judge's confidence in its scores, 0..1); nothing else, so an injected
    field cannot get through."""
    per_criterion = {c.name: {
        "type": "object", "additionalProperties": False, "required": ["score", "rationale"],
        "properties": {"score": {"type": "number", "minimum": c.low, "maximum": c.high},
                       "rationale": {"type": "string", "minLength": 1}},
    } for c in rubric.criteria}
    properties: dict[str, Any] = {
        "criteria": {"type": "object", "additionalProperties": False,
                     "required": list(per_criterion), "properties": per_criterion},
        "summary": {"type": "string", "minLength": 1},
    }
    if confidence:
        properties["confidence"] = CONFIDENCE_SCHEMA
    return ReplyFormat(name, {"type": "object", "additionalProperties": False,
                              "required": list(properties), "properties": properties})


def _describe_criterion(c: Criterion) -> str:
    line = f'- "{c.name}" (weight {c.weight:g}, scale {c.scale}): {c.description}'
    if c.labels:
        points = "; ".join(f"{k} = {v}" for k, v in sorted(c.labels.items(),
                                                           key=lambda kv: int(kv[0])))
        line += f"\n  Scale points: {points}"
    return line


def answer_skeleton(rubric: Rubric, confidence: bool = False) -> str:
    entries = ",\n".join(f'    "{c.name}": {{"score": <number from {c.low} to {c.high}>, '
                         f'"rationale": "<one or two sentences>"}}' for c in rubric.criteria)
    return ('{\n  "criteria": {\n' + entries + '\n  },\n'
            '  "summary": "<one short paragraph on the output overall>"'
            + (",\n" + CONFIDENCE_LINE if confidence else "") + '\n}')


def rubric_task(rubric: Rubric, blocks_text: str, instructions: str | None,
                preamble: str = "", confidence: bool = False) -> str:
    """The user message asking a judge to score material against `rubric` (with
    `confidence`, also for its confidence in those scores)."""
    return RUBRIC_TASK.format(
        preamble=preamble,
        goal=GOAL.format(goal=rubric.goal) if rubric.goal else "",
        criteria="\n".join(_describe_criterion(c) for c in rubric.criteria),
        instructions=INSTRUCTIONS.format(instructions=instructions) if instructions else "",
        blocks=blocks_text,
        answer=answer_skeleton(rubric, confidence),
    )


@dataclass(frozen=True)
class RubricScores:
    """A valid reply, read: raw and normalised scores, rationales, the composite."""

    raw: dict[str, float]
    normalised: dict[str, float]
    rationales: dict[str, str]
    summary: str
    composite: float
    confidence: float | None = None  # 0..1, when the reply format asked for it


def read_scores(rubric: Rubric, data: Mapping[str, Any]) -> RubricScores:
    """Scores from a reply already validated against `reply_format(rubric)`."""
    items: Sequence[Criterion] = rubric.criteria
    raw = {c.name: float(data["criteria"][c.name]["score"]) for c in items}
    normalised = {c.name: c.normalise(raw[c.name]) for c in items}
    confidence = data.get("confidence")
    return RubricScores(raw, normalised,
                        {c.name: str(data["criteria"][c.name]["rationale"]) for c in items},
                        str(data["summary"]), rubric.composite(normalised),
                        None if confidence is None else float(confidence))


def score_result(rubric: Rubric, answer: Answer, output: str | None,
                 pass_threshold: float | None,
                 details: Mapping[str, Any] | None = None) -> ScoreResult:
    """One judge's ScoreResult: the composite and its criteria, or the failure; both carry
    the injection report on `output`."""
    injection, flags = injection_report(output)
    common = {**answer.details, **injection, **(details or {})}
    if answer.data is None:
        return ScoreResult(None, error=answer.error, judge_model=answer.judge, flags=flags,
                           details=common)
    scores = read_scores(rubric, answer.data)
    passed = None if pass_threshold is None else scores.composite >= pass_threshold - 1e-9
    extra = {} if scores.confidence is None else {"confidence": scores.confidence}
    return ScoreResult(scores.composite, passed, criteria=scores.normalised,
                       rationale=scores.summary, flags=flags, judge_model=answer.judge,
                       details={**common, "scores": scores.raw,
                                "rationales": scores.rationales, **extra})
