"""The scorer kinds Assay knows, as the registry finds them, each described in one line
taken from its class's docstring or its module's, so a new kind lists itself. Each carries
the JSON Schema of its params, declared next to the code that validates them."""

from __future__ import annotations

import inspect
import re
import sys
from dataclasses import dataclass, field
from typing import Any

from assay.core.scoring.apply import HUMAN_KINDS, PAIR_KINDS
from assay.core.scoring.kind_labels import LABELS
from assay.scorers import registry, sandbox

MODES = ("automatic", "manual", "pairwise")


@dataclass(frozen=True)
class KindInfo:
    kind: str
    description: str  # one line for users (kind_labels), else the class's docstring
    mode: str
    params_schema: dict[str, Any] = field(default_factory=dict)
    calls_judges: bool = False  # its params name judge models (cost money to run)
    available: bool = True  # in the project asked about
    unavailable_reason: str | None = None
    name: str = ""  # what the product calls it


def first_sentence(doc: str | None) -> str:
    """The first sentence of a docstring's first paragraph, on one line."""
    paragraph = inspect.cleandoc(doc or "").split("\n\n", 1)[0]
    line = " ".join(paragraph.split())
    found = re.match(r"(.+?[.!?])(?=\s+[A-Z]|$)", line)  # not at "e.g. x"
    return found.group(1) if found else line


def mode_of(kind: str) -> str:
    if kind in HUMAN_KINDS:
        return "manual"
    return "pairwise" if kind in PAIR_KINDS else "automatic"


def describe(cls: type) -> str:
    """The class's own docstring (a base class's describes no kind), unless it opens with
    the params it takes: then the module's, which says what the kind checks."""
    own = first_sentence(cls.__dict__.get("__doc__"))
    if own and not own.lower().startswith("params"):
        return own
    module = sys.modules.get(cls.__module__)
    return first_sentence(module.__doc__ if module else None) or own


CODE_EXECUTION = "code_execution"
NO_CODE_EXECUTION = ("This project does not allow code execution; a project admin can "
                     "turn it on in the project settings")


def code_execution_blocked(code_execution: bool | None) -> str | None:
    """Why a project cannot run the code-execution kind: it has not opted in, or this host
    offers no operating-system isolation (the scorer would refuse every output). None
    when it can, or when no project is asked about."""
    if code_execution is None:
        return None
    if not code_execution:
        return NO_CODE_EXECUTION
    try:
        sandbox.isolation()
    except sandbox.SandboxError as exc:
        return str(exc)
    return None


def known_kinds(code_execution: bool | None = None) -> list[KindInfo]:
    """Every kind, sorted by name. With `code_execution` (a project's opt-in), the
    code-execution kind is marked unavailable where it cannot run, with the reason."""
    out = []
    for kind, cls in sorted(registry.kinds().items()):
        schema: dict[str, Any] = dict(getattr(cls, "params_schema", None) or {})
        blocked = code_execution_blocked(code_execution) if kind == CODE_EXECUTION else None
        name, description = LABELS.get(kind, (kind, describe(cls)))
        out.append(KindInfo(kind, description, mode_of(kind), schema,
                            "judges" in schema.get("properties", {}), blocked is None,
                            blocked, name))
    return out
