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
    cls = kinds().get(kind)
    if cls is None:
        raise ParamsError({"kind": [f"Unknown scorer kind {kind!r}; one of: "
                                    f"{', '.join(sorted(kinds()))}"]})
    scorer: Scorer = cls(dict(params or {}))
    return scorer
