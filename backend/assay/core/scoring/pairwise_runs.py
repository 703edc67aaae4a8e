"""Pairwise comparisons of two targets of a run (DESIGN §5): which pairs of outputs a
pairwise_judge scorer version compares, the subjects it sees, and the rows its verdicts
become.

A pair is two succeeded outputs of the same case, repeat and turn, one from each target.
The second target may belong to another run of the project (a base run): its outputs
pair up with this run's on the cases both runs ran; the rows belong to this run.
A pair counts as compared when every judge of the version judged it without error, in
either direction (A against B or B against A: both orders are asked anyway). Pairs with a
failed judgement are compared again, and their earlier rows replaced."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import Table, delete, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session, aliased

from assay.core import audit
from assay.core.auth.models import User
from assay.core.base import utcnow
from assay.core.datasets.models import Case
from assay.core.errors import Invalid
from assay.core.projects.models import Project
from assay.core.runs.budget import max_call_cost
from assay.core.runs.models import CellStatus, Output, Run, RunTarget
from assay.core.scoring.apply import PAIR_KINDS, reference_of
from assay.core.scoring.judge_calls import JudgeModel, find_judges
from assay.core.scoring.models import Comparison, ScorerConfig, ScorerVersion
from assay.core.scoring.service import latest_versions
from assay.scorers import registry
from assay.scorers.base import PairVerdict, PairwiseScorer, ParamsError, Subject
from assay.scorers.judge_guard import new_nonce
from assay.scorers.pairwise import PAIR_REPLY, PairwiseJudge

_COMPARISONS = cast(Table, Comparison.__table__)


@dataclass(frozen=True)
class Pair:
    case_id: int
    output_a_id: int
    output_b_id: int


@dataclass(frozen=True)
class PairPlan:
    pairs: list[Pair]  # still to compare
    already_compared: int


@dataclass(frozen=True)
class Comparing:
    """A validated request to compare two targets of a run with a scorer's latest version."""

    run_id: int
    scorer: ScorerConfig
    version: ScorerVersion
    judges: tuple[str, ...]
    target_a_id: int
    target_b_id: int
    plan: PairPlan
    base_run_id: int | None = None  # target B's run, when not this one


def build_pairwise(kind: str, params: dict[str, Any] | None) -> PairwiseScorer:
    """The pairwise scorer a version's params build (PAIR_KINDS only)."""
    return cast(PairwiseScorer, registry.build(kind, params))


def prepare(session: Session, project: Project, run: Run, scorer_id: int, target_a_id: int,
            target_b_id: int, base_run: Run | None = None) -> Comparing:
    """What comparing `target_a_id` of `run` with `target_b_id` (of `base_run`, or of `run`)
    by the scorer's latest version means; Invalid (422) naming each field that makes it
    impossible. The caller checked that `base_run` is of the project."""
    if base_run is not None and base_run.id == run.id:
        raise Invalid("The comparison cannot start", {"json": {"base_run_id": [
            "The base run is this run: give target_b_id to compare two of its targets"]}})
    other = base_run
    errors: dict[str, list[str]] = {}
    scorer = session.get(ScorerConfig, scorer_id)
    if scorer is None or scorer.project_id != project.id:
        errors["scorer_id"] = [f"No scorer {scorer_id} in this project"]
    elif scorer.kind not in PAIR_KINDS:
        errors["scorer_id"] = [f"The scorer {scorer.name!r} is a {scorer.kind} scorer: "
                               "comparisons need a pairwise_judge scorer"]
    elif scorer.archived_at is not None:
        errors["scorer_id"] = [f"The scorer {scorer.name!r} is archived"]
    b_field = "target_b_id" if other is None else "base_target_id"
    for field, target_id, owner in (("target_a_id", target_a_id, run),
                                    (b_field, target_b_id, other or run)):
        if session.scalar(select(RunTarget.id).where(
                RunTarget.run_id == owner.id, RunTarget.id == target_id)) is None:
            errors[field] = [f"No target {target_id} in {'this' if owner is run else 'the base'}"
                             " run"]
    if other is None and target_a_id == target_b_id and not errors.get("target_a_id"):
        errors["target_b_id"] = ["Choose two different targets: a target is not compared "
                                 "with itself"]
    if errors or scorer is None:
        raise Invalid("The comparison cannot start", {"json": errors})
    if other is not None and not _share_cases(session, run.id, target_a_id, other.id,
                                              target_b_id):
        raise Invalid("The runs share no cases", {"json": {"base_run_id": [
            f"The runs {run.name!r} and {other.name!r} share no cases (with the same repeat "
            "and turn): pairwise judging of two runs needs runs of the same dataset version "
            "or with the same cases"]}})
    version = latest_versions(session, [scorer.id])[scorer.id]
    try:
        judges = build_pairwise(scorer.kind, version.params).judges
    except ParamsError as exc:  # validated on save: only a kind changed since
        raise Invalid("The scorer no longer builds", {"json": {"scorer_id": [str(exc)]}}) \
            from exc
    known = find_judges(session, project.id, judges)
    missing = [f"The scorer {scorer.name!r} judges with {ref!r}, which is no model of this "
               "project" for ref in judges if ref not in known]
    if missing:
        raise Invalid("The comparison cannot start", {"json": {"scorer_id": missing}})
    base_run_id = other.id if other is not None else None
    plan = plan_pairs(session, run.id, version.id, judges, target_a_id, target_b_id,
                      base_run_id)
    if not plan.pairs and not plan.already_compared:
        raise Invalid("Nothing to compare", {"json": {"_schema": [
            "The two targets have no case (with the same repeat and turn) where both "
            "outputs succeeded"]}})
    return Comparing(run.id, scorer, version, judges, target_a_id, target_b_id, plan,
                     base_run_id)


def _share_cases(session: Session, run_id: int, target_a_id: int, base_run_id: int,
                 target_b_id: int) -> bool:
    """Whether the two targets have outputs of a same case, repeat and turn (any status)."""
    a, b = aliased(Output), aliased(Output)
    return session.scalar(
        select(a.id).join(b, (b.case_id == a.case_id) & (b.repeat == a.repeat)
                          & (b.turn == a.turn))
        .where(a.run_id == run_id, a.target_id == target_a_id, b.run_id == base_run_id,
               b.target_id == target_b_id).limit(1)) is not None


def start(session: Session, actor: User | None, project: Project, run: Run, scorer_id: int,
          target_a_id: int, target_b_id: int, base_run: Run | None = None) -> Comparing:
    """`prepare`, audited when there is something to compare; the caller commits, then
    enqueues the job."""
    comparing = prepare(session, project, run, scorer_id, target_a_id, target_b_id, base_run)
    if comparing.plan.pairs:
        details: dict[str, Any] = {
            "scorer_id": scorer_id, "scorer_version_id": comparing.version.id,
            "target_a_id": target_a_id, "target_b_id": target_b_id,
            "pairs": len(comparing.plan.pairs)}
        if comparing.base_run_id is not None:
            details["base_run_id"] = comparing.base_run_id
        audit.record(session, actor, "run.comparisons_started", "run", run.id, project.id,
                     details)
    return comparing


def pair_bound(scorer: PairwiseScorer, judges: Mapping[str, JudgeModel], a: Subject,
               b: Subject) -> int:
    """The most judging one pair can cost: every judge that can be called, asked in both
    orders, each reply at its max_tokens (what is held before the pair is judged)."""
    judge = cast(PairwiseJudge, scorer)
    total = 0
    for ref in judge.judges:
        model = judges.get(str(ref))
        if model is None or model.key_error is not None:
            continue  # fails without a call
        params = {**model.params, **PAIR_REPLY.params}
        for first, second in ((a, b), (b, a)):
            total += max_call_cost(judge.messages(first, second, new_nonce()), model.model,
                                   params, model.price_in, model.price_out)
    return total


def scorer_of(session: Session, run_id: int,
              version_id: int) -> tuple[int, PairwiseScorer] | None:
    """The run's project and the pairwise scorer `version_id` builds; None when either is
    gone (deleted since the comparison was enqueued)."""
    row = session.execute(
        select(Run.project_id, ScorerConfig.kind, ScorerVersion.params)
        .join(ScorerConfig, ScorerConfig.project_id == Run.project_id)
        .join(ScorerVersion, ScorerVersion.scorer_id == ScorerConfig.id)
        .where(Run.id == run_id, ScorerVersion.id == version_id)).first()
    if row is None or row.kind not in PAIR_KINDS:
        return None
    return row.project_id, build_pairwise(row.kind, row.params)


def plan_pairs(session: Session, run_id: int, version_id: int, judges: Sequence[str],
               target_a_id: int, target_b_id: int, base_run_id: int | None = None) -> PairPlan:
    """The comparable pairs of the two targets (B of `base_run_id` when given), in case
    order, minus those compared."""
    a, b = aliased(Output), aliased(Output)
    rows = session.execute(
        select(a.case_id, a.id, b.id)
        .join(b, (b.run_id == (base_run_id or run_id)) & (b.case_id == a.case_id)
              & (b.repeat == a.repeat) & (b.turn == a.turn))
        .where(a.run_id == run_id, a.target_id == target_a_id, b.target_id == target_b_id,
               a.status == CellStatus.succeeded, b.status == CellStatus.succeeded)
        .order_by(a.id)).all()
    judged = _judged(session, run_id, version_id, judges, (target_a_id, target_b_id))
    wanted = set(judges)
    pairs = [Pair(case_id, x, y) for case_id, x, y in rows
             if not wanted <= judged.get(frozenset((x, y)), set())]
    return PairPlan(pairs, len(rows) - len(pairs))


def _judged(session: Session, run_id: int, version_id: int, judges: Sequence[str],
            targets: tuple[int, int]) -> dict[frozenset[int], set[str]]:
    """The judges that judged each pair of outputs of `targets` without error."""
    first = aliased(Output)
    found: dict[frozenset[int], set[str]] = {}
    for x, y, judge in session.execute(
            select(Comparison.output_a_id, Comparison.output_b_id, Comparison.judge_model)
            .join(first, first.id == Comparison.output_a_id)
            .where(Comparison.run_id == run_id, Comparison.scorer_version_id == version_id,
                   Comparison.error.is_(None), Comparison.judge_model.in_(list(judges)),
                   first.target_id.in_(targets))):
        found.setdefault(frozenset((x, y)), set()).add(judge)
    return found


def _conversation(raw_request: Any, text: str | None) -> list[dict[str, Any]]:
    """What the target was sent, then its reply: the judge shows the earlier messages only
    when both outputs share them."""
    sent = raw_request.get("messages") if isinstance(raw_request, dict) else None
    return [*(sent if isinstance(sent, list) else []),
            {"role": "assistant", "content": text or ""}]


def subjects(session: Session, output_ids: Iterable[int]) -> dict[int, Subject]:
    """The subjects of these outputs (by output id), with their cases."""
    rows = session.execute(
        select(Output.id, Output.text, Output.turn, Output.raw_request, Case.input,
               Case.expected, Case.tags, Case.difficulty)
        .join(Case, Case.id == Output.case_id).where(Output.id.in_(list(output_ids)))).all()
    return {r.id: Subject(output=r.text, input=r.input or {}, expected=r.expected,
                          reference=reference_of(r.expected, r.turn),
                          messages=_conversation(r.raw_request, r.text),
                          tags=tuple(r.tags or ()), difficulty=r.difficulty)
            for r in rows}


def comparison_rows(run_id: int, version_id: int, pair: Pair,
                    verdicts: Sequence[PairVerdict]) -> list[dict[str, Any]]:
    """One row per judge."""
    now = utcnow()
    return [{"run_id": run_id, "case_id": pair.case_id, "scorer_version_id": version_id,
             "judge_model": v.judge_model or "", "output_a_id": pair.output_a_id,
             "output_b_id": pair.output_b_id, "winner": v.winner,
             "position_bias": v.position_bias, "orders": list(v.orders),
             "rationale": v.rationale, "error": v.error, "created_at": now}
            for v in verdicts]


def write_comparisons(session: Session, version_id: int, pairs: Sequence[Pair],
                      rows: list[dict[str, Any]]) -> None:
    """Replace what these pairs had from this version (only failed or partial judgements:
    complete ones were not planned) with `rows`. The caller commits. A row another job
    wrote meanwhile wins over ours (same pair, version and judge)."""
    if not pairs:
        return
    ids = [i for p in pairs for i in (p.output_a_id, p.output_b_id)]
    # Outputs of the two targets pair up only within a case, repeat and turn, so an
    # (a, b) among `ids` in either direction is one of `pairs`.
    connection = session.connection()
    connection.execute(delete(_COMPARISONS).where(
        _COMPARISONS.c.scorer_version_id == version_id, _COMPARISONS.c.output_a_id.in_(ids),
        _COMPARISONS.c.output_b_id.in_(ids)))
    if rows:
        insert = pg_insert if connection.dialect.name == "postgresql" else sqlite_insert
        connection.execute(insert(_COMPARISONS).on_conflict_do_nothing(), rows)
