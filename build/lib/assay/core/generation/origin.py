"""What a dataset made from a generation job keeps about how it was made: the generator
model, its settings, the job's spec and the prompt its first batch sent. The job itself
lives in Redis and expires after a week; the dataset keeps this for good."""

from __future__ import annotations

import math
from typing import Any

from assay.core.generation import prompts

DOCUMENT_PLACEHOLDER = "[the text of the document]"


def first_prompt(kind: str, spec: dict[str, Any], requested: int, batches: int,
                 document_name: str | None) -> list[dict[str, Any]]:
    """The messages of the job's first batch (the document's text left out: it is long and
    the dataset names the document)."""
    batches = max(1, batches)
    size = max(1, math.ceil(requested / batches))
    if kind == "questions":
        return prompts.questions(spec, size, 0, batches)
    if kind == "cases":
        return prompts.cases(spec, size, 0, batches)
    return prompts.conversations(spec, document_name or "document", DOCUMENT_PLACEHOLDER,
                                 size, 0, batches)


def generation_origin(state: dict[str, Any], model_name: str | None, params: dict[str, Any],
                      document_name: str | None, accepted: int) -> dict[str, Any]:
    kind, spec = state["kind"], dict(state["spec"])
    return {
        "type": "generated", "job_id": state["id"], "kind": kind,
        "model_id": state["model_id"], "model_name": model_name, "params": params,
        "spec": spec, "document_name": document_name,
        "prompt": first_prompt(kind, spec, int(state["requested"]),
                               int(state.get("batches") or 1), document_name),
        "requested": state["requested"], "received": len(state.get("items") or []),
        "accepted": accepted, "cost_micros": state.get("cost_micros"),
        "started_at": state.get("created_at"), "finished_at": state.get("finished_at"),
    }
