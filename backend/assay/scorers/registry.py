"""Scorer kinds by name. Each module in MODULES exports `SCORERS: dict[str, type]`, its
kinds; building one validates its parameters."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from functools import cache
from typing import Any

from assay.scorers.base import ParamsError, Scorer

MODULES = ("reference", "rules", "safety", "code", "judge", "rag", "pairwise", "manual",
           "question_quality")
# each kind's module, so that one kind is checked without importing every module (`assay
# eval` on a config with a mistake answers before the sandbox and judge modules load); a
# test keeps it equal to what the modules export
KIND_MODULES = {
    **dict.fromkeys(("contains", "contains_all", "contains_any", "cost", "equals", "icontains",
                     "is_json", "json_schema", "key_points", "latency", "length",
                     "must_include", "must_not_include", "regex", "similarity", "starts_with"),
                    "reference"),
    "rules": "rules", "safety": "safety", "code_execution": "code", "llm_judge": "judge",
    "verdict_judge": "judge", "rag_metrics": "rag", "pairwise_judge": "pairwise",
    "manual": "manual", "question_quality": "question_quality"}


def kind_names() -> list[str]:
    """Every kind's name, nothing imported."""
    return sorted(KIND_MODULES)


def kind_class(kind: str) -> type | None:
    """The class of `kind`, importing only its module."""
    module = KIND_MODULES.get(kind)
    if module is None:
        return None
    found: type | None = importlib.import_module(f"assay.scorers.{module}").SCORERS.get(kind)
    return found


@cache
def kinds() -> dict[str, type]:
    found: dict[str, type] = {}
    for name in MODULES:
        module = importlib.import_module(f"assay.scorers.{name}")
        for kind, cls in module.SCORERS.items():
            if kind in found:
                raise RuntimeError(f"scorer kind {kind!r} is defined twice")
            found[kind] = cls
    return found


def build(kind: str, params: Mapping[str, Any] | None) -> Scorer:
    """A scorer of `kind` with `params`, or ParamsError naming what is wrong."""
    cls = kind_class(kind)
    if cls is None:
        raise ParamsError({"kind": [f"Unknown scorer kind {kind!r}; one of: "
                                    f"{', '.join(kind_names())}"]})
    scorer: Scorer = cls(dict(params or {}))
    return scorer
