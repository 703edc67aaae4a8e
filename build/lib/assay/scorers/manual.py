"""Manual scores: humans score outputs in the UI; the engine never calls this kind.

Params: {scale: "1-5" | "pass_fail" | "criteria", criteria?: [names] (scale "criteria":
each criterion rated 1-5)}. `normalise` turns what a reviewer entered into a 0..1 value.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from assay.scorers.base import Context, ParamsError, ScoreResult, Subject

SCALES = ("1-5", "pass_fail", "criteria")
MAX_CRITERIA = 10


class ManualScorer:
    kind: ClassVar[str] = "manual"
    # "criteria" is required exactly when scale is "criteria" (and refused otherwise).
    params_schema: ClassVar[dict[str, Any]] = {
        "type": "object", "additionalProperties": False,
        "description": "Reviewers score outputs by hand: pass/fail, 1 to 5, or 1 to 5 on "
                       "each named criterion",
        "properties": {
            "scale": {"type": "string", "enum": list(SCALES), "default": "1-5",
                      "description": "pass_fail, an overall 1-5 rating, or 1-5 per criterion"},
            "criteria": {"type": "array", "minItems": 1, "maxItems": MAX_CRITERIA,
                         "uniqueItems": True, "items": {"type": "string", "pattern": r"\S"},
                         "description": "The criteria rated 1-5 (scale \"criteria\" only)"}},
        # if/then/else as anyOf: OpenAPI 3.0, which serves this schema too, has no if.
        "anyOf": [
            {"required": ["scale", "criteria"], "properties": {"scale": {"enum": ["criteria"]}}},
            {"not": {"required": ["criteria"]},
             "properties": {"scale": {"enum": [s for s in SCALES if s != "criteria"]}}},
        ],
    }

    def __init__(self, params: Mapping[str, Any]) -> None:
        errors: dict[str, list[str]] = {}
        unknown = set(params) - {"scale", "criteria"}
        if unknown:
            errors["params"] = [f"Unknown fields: {', '.join(sorted(unknown))}"]
        self.scale = params.get("scale", "1-5")
        if self.scale not in SCALES:
            errors["scale"] = [f"One of {', '.join(SCALES)}"]
        criteria = params.get("criteria") or []
        if self.scale == "criteria":
            if (not isinstance(criteria, list) or not 1 <= len(criteria) <= MAX_CRITERIA
                    or not all(isinstance(c, str) and c.strip() for c in criteria)
                    or len(set(criteria)) != len(criteria)):
                errors["criteria"] = [f"1 to {MAX_CRITERIA} distinct, non-empty names"]
        elif criteria:
            errors["criteria"] = ["Only with scale \"criteria\""]
        if errors:
            raise ParamsError(errors)
        self.criteria: tuple[str, ...] = tuple(criteria)

    @property
    def judges(self) -> tuple[str, ...]:
        return ()

    async def score(self, subject: Subject, ctx: Context) -> list[ScoreResult]:
        return []  # people score these, through the API

    def normalise(self, rating: int | None, passed: bool | None,
                  criteria: Mapping[str, int] | None) -> ScoreResult:
        """What a reviewer entered as a score, or ParamsError saying what the scale wants."""
        if self.scale == "pass_fail":
            if passed is None or rating is not None or criteria:
                raise ParamsError({"passed": ["This scorer takes pass or fail only"]})
            return ScoreResult(1.0 if passed else 0.0, passed)
        if self.scale == "1-5":
            if rating is None or not 1 <= rating <= 5 or criteria:
                raise ParamsError({"rating": ["A rating from 1 to 5"]})
            return ScoreResult((rating - 1) / 4, passed)
        if rating is not None:
            raise ParamsError({"rating": ["This scorer takes a rating per criterion, not an "
                                          "overall rating"]})
        given = dict(criteria or {})
        if set(given) != set(self.criteria) or not all(1 <= v <= 5 for v in given.values()):
            raise ParamsError({"criteria": [
                f"A rating from 1 to 5 for each of: {', '.join(self.criteria)}"]})
        values = {name: (given[name] - 1) / 4 for name in self.criteria}
        return ScoreResult(sum(values.values()) / len(values), passed, criteria=values)


SCORERS = {"manual": ManualScorer}
