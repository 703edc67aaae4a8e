"""Fuzzy reference checks with rapidfuzz: key_points (is each expected point in the
output, allowing small wording differences) and similarity (to the expected text)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rapidfuzz import fuzz

from assay.scorers.base import Evidence, ScoreResult, Subject
from assay.scorers.deterministic import DeterministicScorer, quote, span
from assay.scorers.param_fields import Field
from assay.scorers.reference_text import NO_REFERENCE, expected_text

NO_POINTS = ("No key points to look for: set the scorer's `points`, or give the case "
             "expected.key_points.")


def fold(text: str) -> tuple[str, list[int]]:
    """`text` lower-cased, with each run of other characters than letters and digits turned
    into one space, and for each folded character the index it came from in `text` (plus
    len(text) at the end), so that a match in the folded text maps back to the output."""
    chars: list[str] = []
    origin: list[int] = []
    gap = True  # no space at the start
    for index, char in enumerate(text):
        if char.isalnum():
            for lower in char.lower():
                chars.append(lower)
                origin.append(index)
            gap = False
        elif not gap:
            chars.append(" ")
            origin.append(index)
            gap = True
    if chars and chars[-1] == " ":
        chars.pop()
        origin.pop()
    origin.append(len(text))
    return "".join(chars), origin


def locate(point: str, folded: str) -> tuple[float, int, int]:
    """How well the folded `point` occurs in the folded output (0..100), and where.
    An output shorter than the point must match it as a whole: partial_ratio would find
    the short output inside the point and call it a match."""
    if not folded:
        return 0.0, 0, 0
    if len(folded) < len(point):
        return fuzz.ratio(point, folded), 0, len(folded)
    found = fuzz.partial_ratio_alignment(point, folded)
    if found is None:
        return 0.0, 0, 0
    return found.score, found.dest_start, found.dest_end


def _whole_words(text: str, start: int, end: int) -> tuple[int, int]:
    """The span widened to whole words: the alignment may begin or end inside one."""
    while start > 0 and text[start - 1].isalnum():
        start -= 1
    while end < len(text) and text[end].isalnum():
        end += 1
    return start, end


def _bad_points(points: Any) -> str | None:
    if not isinstance(points, list) or not points:
        return "must be a non-empty list of strings"
    for index, point in enumerate(points):
        if not isinstance(point, str) or not fold(point)[0]:
            return f"item {index} must be a string with letters or digits"
    return None


class KeyPoints(DeterministicScorer):
    """Each key point occurs in the output, allowing small wording differences (rapidfuzz
    partial_ratio of the lower-cased texts without punctuation ≥ threshold). The value is
    the share of points found."""

    kind = "key_points"
    fields = (
        Field("points", "strings", "The key points; default: the case's expected.key_points"),
        Field("threshold", "number", "How closely a point must match, 0 to 100 (rapidfuzz "
              "partial_ratio)", default=85, minimum=0, maximum=100),
        Field("min_share", "number", "The share of points that must be found to pass, 0 to 1",
              default=1.0, minimum=0, maximum=1),
    )

    def configure(self, values: dict[str, Any], errors: dict[str, list[str]]) -> None:
        self.points: list[str] | None = values["points"]
        self.threshold: float = values["threshold"]
        self.min_share: float = values["min_share"]
        problem = _bad_points(self.points) if self.points is not None else None
        if problem:
            errors["points"] = [problem[0].upper() + problem[1:]]

    def _points(self, subject: Subject) -> list[str] | str:
        if self.points is not None:
            return self.points
        expected = subject.expected if isinstance(subject.expected, Mapping) else {}
        points = expected.get("key_points")
        if points is None:
            return NO_POINTS
        problem = _bad_points(points)
        return f"The case's expected.key_points {problem}" if problem else list(points)

    async def check(self, output: str, subject: Subject) -> ScoreResult:
        points = self._points(subject)
        if isinstance(points, str):
            return ScoreResult.failed(points)
        folded, origin = fold(output)
        report: list[dict[str, Any]] = []
        evidence: list[Evidence] = []
        for point in points:
            score, start, end = locate(fold(point)[0], folded)
            found = score >= self.threshold
            report.append({"point": point, "score": round(score, 1), "found": found})
            if found and end > start:
                first, last = _whole_words(output, origin[start], origin[end - 1] + 1)
                evidence.append(span(subject, first, last, point))
        missing = [item for item in report if not item["found"]]
        share = (len(points) - len(missing)) / len(points)
        rationale = f"{len(points) - len(missing)} of {len(points)} key points found"
        if missing:
            rationale += "; missing: " + ", ".join(
                f"{quote(item['point'], 50)} (best match {item['score']:g})" for item in missing)
        return ScoreResult(share, share >= self.min_share, rationale=rationale,
                           evidence=tuple(evidence), details={"points": report})


METHODS = {"ratio": fuzz.ratio, "token_set_ratio": fuzz.token_set_ratio}


class Similarity(DeterministicScorer):
    """How similar the output is to the expected text (`value`, else the case's expected
    output): rapidfuzz ratio (character edits) or token_set_ratio (shared words, any
    order), normalised to 0 to 1."""

    kind = "similarity"
    fields = (
        Field("value", "string", "The text to compare with; default: the case's expected "
              "output"),
        Field("method", "choice", "ratio: character edits; token_set_ratio: shared words in "
              "any order", default="ratio", choices=tuple(METHODS)),
        Field("threshold", "number", "The similarity needed to pass, 0 to 1", default=0.8,
              minimum=0, maximum=1),
        Field("normalize", "boolean", "Compare lower-cased texts without punctuation",
              default=True),
    )

    def configure(self, values: dict[str, Any], errors: dict[str, list[str]]) -> None:
        self.value: str | None = values["value"]
        self.method: str = values["method"]
        self.threshold: float = values["threshold"]
        self.normalize: bool = values["normalize"]

    async def check(self, output: str, subject: Subject) -> ScoreResult:
        expected = expected_text(self.value, subject)
        if expected is None:
            return ScoreResult.failed(NO_REFERENCE)
        got, want = (fold(output)[0], fold(expected)[0]) if self.normalize else (output, expected)
        # Two empty texts are identical; rapidfuzz's token_set_ratio would say 0.
        value = 1.0 if not got and not want else METHODS[self.method](got, want) / 100
        passed = value >= self.threshold
        return ScoreResult(value, passed, rationale=(
            f"{self.method} similarity {value:.2f} {'≥' if passed else '<'} threshold "
            f"{self.threshold:g} to {quote(expected)}"))


SCORERS: dict[str, type] = {cls.kind: cls for cls in (KeyPoints, Similarity)}
