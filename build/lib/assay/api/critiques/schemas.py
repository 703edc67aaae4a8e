"""Schemas of the meta-judge's critique of a rubric."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

MAX_RUBRIC = 20_000
MAX_CLAUSES = 50
MAX_CLAUSE = 1000


class CritiqueRequestSchema(Schema):
    rubric_text = fields.String(required=True, validate=validate.Length(min=1, max=MAX_RUBRIC),
                                metadata={"description": "The judge rubric under review"})
    contract = fields.List(
        fields.String(validate=validate.Length(min=1, max=MAX_CLAUSE)), required=True,
        validate=validate.Length(max=MAX_CLAUSES),
        metadata={"description": "The agent's contract: its must-dos and must-nots, one "
                                 "clause each; [] when it has none"})
    judge = fields.String(required=True, validate=validate.Length(min=1, max=200), metadata={
        "description": "The model that critiques: a model config's id or name in the project"})


class CritiqueSchema(Schema):
    critique = fields.String(required=True, metadata={
        "description": "A short paragraph for the rubric's author: what to fix first, why"})
    references_contract = fields.Boolean(required=True, allow_none=True)
    missing_clauses = fields.List(fields.String(), required=True, metadata={
        "description": "Contract clauses the rubric never covers"})
    defines_evidence = fields.Boolean(required=True, allow_none=True, metadata={
        "description": "Whether the rubric says what counts as evidence for a pass or a fail"})
    vague_phrases = fields.List(fields.String(), required=True, metadata={
        "description": "Phrases of the rubric without a definition"})
    high_variance = fields.Boolean(required=True, allow_none=True, metadata={
        "description": "Judges applying it would often disagree"})
    judge = fields.String(required=True, attribute="judge_model")
