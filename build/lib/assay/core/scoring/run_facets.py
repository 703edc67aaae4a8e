"""Facets of a run (edison FR-RV-004), per target for one scorer: its scored outputs grouped
by the case's tags, by length (of the case's input text, or of the output) and by the
case's difficulty, each group with its mean (case-clustered interval) and pass rate.

An output's value and verdict are its scores' (see run_scores); outputs the scorer has not
scored are not in any group. The output's length is counted by the database."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from assay.core import stats
from assay.core.datasets.cases import input_text
from assay.core.datasets.models import Case, Dataset, DatasetVersion, VersionCase
from assay.core.runs.models import Output, Run
from assay.core.scoring.run_scores import per_output
from assay.core.scoring.statistics import CONFIDENCE, RESAMPLES

LengthOf = Literal["input", "output"]


@dataclass(frozen=True)
class CaseFacts:
    tags: tuple[str, ...]
    difficulty: str | None
    input_chars: int


@dataclass(frozen=True)
class TargetFacets:
    target_id: int
    n_outputs: int  # outputs the scorer scored (a value, a verdict or a failure)
    facets: stats.Facets


def case_facts(session: Session, run: Run) -> dict[int, CaseFacts]:
    return version_case_facts(session, run.dataset_version_id)


def version_case_facts(session: Session, version_id: int | None) -> dict[int, CaseFacts]:
    """Tags, difficulty and input length of each case of a dataset version."""
    kind = session.scalar(select(Dataset.kind).join(
        DatasetVersion, DatasetVersion.dataset_id == Dataset.id)
        .where(DatasetVersion.id == version_id)) or "questions"
    rows = session.execute(
        select(Case.id, Case.tags, Case.difficulty, Case.input, Case.trace)
        .join(VersionCase, VersionCase.case_id == Case.id)
        .where(VersionCase.version_id == version_id))
    return {case_id: CaseFacts(_tags(tags), difficulty or None,
                               len(input_text(kind, data, trace)))
            for case_id, tags, difficulty, data, trace in rows}


def _tags(tags: Any) -> tuple[str, ...]:
    if not isinstance(tags, list):
        return ()
    return tuple(dict.fromkeys(tag for tag in tags if isinstance(tag, str) and tag))


def run_facets(session: Session, run: Run, version_id: int, target_ids: Sequence[int],
               length_of: LengthOf = "input") -> list[TargetFacets]:
    """One entry per target, in the order given."""
    scored = per_output(run.id, [version_id])
    rows = session.execute(
        select(Output.target_id, Output.case_id, func.length(Output.text),
               scored.c.value, scored.c.passed)
        .join(scored, scored.c.output_id == Output.id)
        .where(Output.target_id.in_(list(target_ids)))
        .order_by(Output.id)).all()
    facts = case_facts(session, run)
    records: dict[int, list[stats.FacetRecord]] = {target_id: [] for target_id in target_ids}
    for target_id, case_id, chars, value, passed in rows:
        fact = facts.get(case_id)
        records[target_id].append(stats.FacetRecord(
            case=case_id, value=None if value is None else float(value),
            passed=None if passed is None else bool(passed),
            tags=fact.tags if fact else (), difficulty=fact.difficulty if fact else None,
            input_chars=fact.input_chars if fact else None,
            output_chars=None if chars is None else int(chars)))
    return [TargetFacets(target_id, len(found),
                         stats.facets(found, length_of=length_of, confidence=CONFIDENCE,
                                      n_resamples=RESAMPLES))
            for target_id, found in records.items()]
