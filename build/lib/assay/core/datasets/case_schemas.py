"""A case's `input` per dataset kind, as JSON Schema (the part OpenAPI 3.0 also reads), for
the API document. cases.py checks them; tests/unit/test_case_schemas.py holds the two to
the same verdicts. What a schema cannot say (variable names, 1-10 user turns) it describes;
"not blank" too: a `pattern` would say it, but made schemathesis' negative generation of
the case bodies several times slower. The length limit too: fuzzers violating a maxLength
per value build bodies past the request size limit (413, not the 422 they expect)."""

from __future__ import annotations

from typing import Any

from assay.core.datasets.cases import CHAT_ROLES, MAX_TEXT, MAX_TURNS

LIMIT = f"at most {MAX_TEXT:,} characters"
TEXT = {"type": "string", "minLength": 1, "description": f"Not blank, {LIMIT}"}

INPUT_SCHEMAS: dict[str, dict[str, Any]] = {
    "questions": {
        "type": "object", "description": "A questions dataset's case: the question",
        "properties": {"question": TEXT}, "required": ["question"],
        "additionalProperties": False},
    "cases": {
        "type": "object", "minProperties": 1,
        "description": "A cases dataset's case: the prompt's template variables (names "
                       "match ^[A-Za-z_][A-Za-z0-9_]{0,63}$) and their text",
        "additionalProperties": {"type": "string", "description": LIMIT}},
    "conversations": {
        "type": "object",
        "description": f"A conversations dataset's case: the messages, with 1 to {MAX_TURNS} "
                       "user turns",
        "properties": {"messages": {"type": "array", "minItems": 1, "items": {
            "type": "object", "required": ["role", "content"], "additionalProperties": False,
            "properties": {"role": {"type": "string", "enum": list(CHAT_ROLES)},
                           "content": TEXT}}}},
        "required": ["messages"], "additionalProperties": False},
    "traces": {
        "type": "object",
        "description": "A traces dataset's case: any object (the case is its trace)"},
}
