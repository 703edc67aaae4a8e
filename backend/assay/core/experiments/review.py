"""Human review of a suggestion (edison FR-PR-002): approve, reject with a reason, edit the
diff (checked by the same guardrails), add counterexamples, comment. Every action is an
audit event and a review comment.

Approval is one conditional UPDATE (pending -> approved) before anything else: of two
reviewers approving at once one moves the row and creates the prompt version, the other
gets 409 and nothing is written twice.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from assay.core import audit
from assay.core.auth.models import User
from assay.core.base import utcnow
from assay.core.datasets.cases import spec_expected
from assay.core.datasets.models import Dataset, DatasetVersion
from assay.core.datasets.service import add_cases, check_cases
from assay.core.errors import Conflict, Invalid, NotFound
from assay.core.experiments import guardrails, loop
from assay.core.experiments.config import max_rejections
from assay.core.experiments.models import (
    Experiment,
    Iteration,
    IterationStatus,
    ReviewComment,
    StopReason,
    Suggestion,
    SuggestionStatus,
)
from assay.core.projects.models import Project
from assay.core.prompts.models import Prompt, PromptVersion
from assay.core.prompts.service import add_version

I = IterationStatus  # noqa: E741
REASON_MIN, REASON_MAX, COMMENT_MAX = 3, 2000, 5000
EDITED = "Edited the diff"  # an edit's comment when the reviewer gave none


class AlreadyReviewed(Conflict):
    code = "ALREADY_REVIEWED"


def suggestion_of(session: Session, iteration: Iteration) -> Suggestion:
    """The iteration's latest suggestion."""
    found = session.scalar(select(Suggestion).where(Suggestion.iteration_id == iteration.id)
                           .order_by(Suggestion.id.desc()).limit(1))
    if found is None:
        raise NotFound("This iteration has no suggestion yet")
    return found


def _open(session: Session, iteration: Iteration) -> tuple[Suggestion, Experiment]:
    session.refresh(iteration)
    suggestion = suggestion_of(session, iteration)
    if iteration.status != I.awaiting_review or suggestion.status != SuggestionStatus.pending:
        raise AlreadyReviewed("This suggestion is not awaiting review (it was reviewed, or "
                              "the iteration moved on)", {"status": suggestion.status})
    if iteration.paused:
        raise loop.LoopError("The iteration is paused: resume it to review")
    experiment = session.get(Experiment, iteration.experiment_id)
    assert experiment is not None
    return suggestion, experiment


def _comment(session: Session, actor: User, suggestion: Suggestion, kind: str,
             body: str) -> ReviewComment:
    comment = ReviewComment(suggestion_id=suggestion.id, author_id=actor.id, kind=kind,
                            body=body, created_at=utcnow())
    session.add(comment)
    return comment


def _audit(session: Session, actor: User, action: str, experiment: Experiment,
           data: dict[str, Any]) -> None:
    audit.record(session, actor, f"suggestion.{action}", "experiment", experiment.id,
                 experiment.project_id, data)


def approve(session: Session, actor: User, iteration: Iteration,
            comment: str | None = None) -> PromptVersion:
    """The next prompt version (parent: the iteration's, changelog: the note, created by the
    approver); then the next iteration, unless a stop rule ends the experiment."""
    suggestion, experiment = _open(session, iteration)
    moved = session.execute(update(Suggestion).where(
        Suggestion.id == suggestion.id, Suggestion.status == SuggestionStatus.pending).values(
        status=SuggestionStatus.approved, reviewed_by=actor.id, reviewed_at=utcnow())
        .execution_options(synchronize_session=False))
    if not getattr(moved, "rowcount", 0):
        raise AlreadyReviewed("Another reviewer decided on this suggestion first")
    if not loop.move(session, iteration.id, I.approved, {I.awaiting_review},
                     finished_at=utcnow()):
        raise AlreadyReviewed("The iteration moved on meanwhile")
    parent = session.get(PromptVersion, iteration.prompt_version_id)
    project = session.get(Project, experiment.project_id)
    prompt = session.get(Prompt, parent.prompt_id) if parent else None
    assert parent is not None and project is not None and prompt is not None
    checked = guardrails.check(parent.template, suggestion.diff or "")
    changelog = _changelog(session, iteration, suggestion)
    version = add_version(session, actor, project, prompt, {
        "template": checked.text, "system": parent.system, "few_shots": parent.few_shots,
        "tools": parent.tools, "note": changelog, "parent_id": parent.id})
    session.execute(update(Suggestion).where(Suggestion.id == suggestion.id)
                    .values(prompt_version_id=version.id)
                    .execution_options(synchronize_session=False))
    _comment(session, actor, suggestion, "approve", comment or "Approved")
    _audit(session, actor, "approved", experiment, {
        "iteration": iteration.number, "suggestion_id": suggestion.id,
        "prompt_version_id": version.id, "edited": suggestion.diff != suggestion.original_diff})
    session.refresh(experiment)
    stop = experiment.config.get("stop") or {}
    max_iterations = stop.get("max_iterations")
    left = loop.room(experiment)
    if max_iterations and iteration.number >= int(max_iterations):
        loop.finish(session, experiment, None, StopReason.max_iterations,
                    f"Maximum iterations reached ({max_iterations})", actor=actor)
    elif left is not None and left <= 0:
        loop.finish(session, experiment, None, StopReason.budget, "Budget reached", actor=actor)
    else:
        loop.start_iteration(session, experiment, actor, version.id)
    experiment.current_prompt_version_id = version.id
    return version


def _changelog(session: Session, iteration: Iteration, suggestion: Suggestion) -> str:
    """The new version's changelog: the refiner's note, or, when a reviewer replaced its
    diff, what the reviewer said of their edit (the note describes a change not made)."""
    note = (suggestion.note or "").strip().replace("\n", " ")
    text = f"Iteration {iteration.number}: {note}"
    if suggestion.diff != suggestion.original_diff:
        said = session.scalar(select(ReviewComment.body).where(
            ReviewComment.suggestion_id == suggestion.id, ReviewComment.kind == "edit")
            .order_by(ReviewComment.id.desc()).limit(1))
        said = (said or "").strip().replace("\n", " ")
        if not said or said == EDITED:
            said = "the reviewer replaced the refiner's diff with their own"
        text = f"Iteration {iteration.number}, edited by hand: {said} (the refiner proposed: " \
               f"{note or '-'})"
    return (text[:497] + "...") if len(text) > 500 else text.ljust(10, ".")


def reject(session: Session, actor: User, iteration: Iteration, reason: str) -> Suggestion:
    """The suggestion rejected with its reason; the iteration goes back to refining and the
    refiner is told what was rejected and why."""
    reason = (reason or "").strip()
    if not REASON_MIN <= len(reason) <= REASON_MAX:
        raise Invalid("A rejection needs a reason", {"json": {"reason": [
            f"Say why, in {REASON_MIN} to {REASON_MAX} characters"]}})
    suggestion, experiment = _open(session, iteration)
    moved = session.execute(update(Suggestion).where(
        Suggestion.id == suggestion.id, Suggestion.status == SuggestionStatus.pending).values(
        status=SuggestionStatus.rejected, reviewed_by=actor.id, reviewed_at=utcnow(),
        reject_reason=reason).execution_options(synchronize_session=False))
    if not getattr(moved, "rowcount", 0):
        raise AlreadyReviewed("Another reviewer decided on this suggestion first")
    _comment(session, actor, suggestion, "reject", reason)
    _audit(session, actor, "rejected", experiment, {
        "iteration": iteration.number, "suggestion_id": suggestion.id, "reason": reason})
    in_a_row, cap = rejections_in_a_row(session, iteration), max_rejections(experiment.config)
    if in_a_row >= cap:
        loop.finish(session, experiment, iteration, StopReason.rejected,
                    f"Stopped after {in_a_row} rejected suggestions in a row (the limit is "
                    f"{cap}): the refiner is not proposing what reviewers want", actor=actor)
    else:
        loop.move(session, iteration.id, I.refining, {I.awaiting_review})
        loop.after_commit(session, loop.ADVANCE, iteration.id)
    session.refresh(suggestion)
    return suggestion


def rejections_in_a_row(session: Session, iteration: Iteration) -> int:
    """The iteration's latest suggestions that were rejected, back to the first that was
    not (an approval ends an iteration, so a run of rejections never spans two)."""
    count = 0
    for status in session.scalars(select(Suggestion.status).where(
            Suggestion.iteration_id == iteration.id).order_by(Suggestion.id.desc())):
        if status != SuggestionStatus.rejected:
            break
        count += 1
    return count


def edit(session: Session, actor: User, iteration: Iteration, diff: str,
         comment: str | None = None) -> Suggestion:
    """The reviewer's own diff, checked by the guardrails against the iteration's prompt."""
    suggestion, experiment = _open(session, iteration)
    parent = session.get(PromptVersion, iteration.prompt_version_id)
    assert parent is not None
    try:
        guardrails.check(parent.template, diff)
    except guardrails.GuardrailError as exc:
        raise Invalid(f"The edited diff breaks a guardrail ({exc.rule})",
                      {"json": {"diff": [exc.message]}}) from exc
    before = suggestion.diff
    suggestion.diff = diff
    _comment(session, actor, suggestion, "edit", (comment or "").strip() or EDITED)
    _audit(session, actor, "edited", experiment, {
        "iteration": iteration.number, "suggestion_id": suggestion.id, "before": before,
        "after": diff})
    return suggestion


def add_comment(session: Session, actor: User, iteration: Iteration, body: str
                ) -> ReviewComment:
    body = (body or "").strip()
    if not 1 <= len(body) <= COMMENT_MAX:
        raise Invalid("The comment is empty or too long", {"json": {"body": [
            f"1 to {COMMENT_MAX} characters"]}})
    suggestion = suggestion_of(session, iteration)
    experiment = session.get(Experiment, iteration.experiment_id)
    assert experiment is not None
    comment = _comment(session, actor, suggestion, "comment", body)
    _audit(session, actor, "commented", experiment, {
        "iteration": iteration.number, "suggestion_id": suggestion.id, "body": body})
    return comment


def add_counterexamples(session: Session, actor: User, iteration: Iteration,
                        cases: Sequence[Mapping[str, Any]]) -> DatasetVersion:
    """A new version of the experiment's dataset with the cases at its end; iterations from
    the next one run on it. New cases join the refinement set (a reviewer wrote them from
    what the refiner was shown: they cannot prove anything held out)."""
    suggestion = suggestion_of(session, iteration)
    experiment = session.get(Experiment, iteration.experiment_id)
    assert experiment is not None
    current = session.get(DatasetVersion, experiment.dataset_version_id)
    dataset = session.get(Dataset, current.dataset_id) if current else None
    project = session.get(Project, experiment.project_id)
    assert dataset is not None and project is not None
    items = [spec_expected(dataset.kind, dict(c)) for c in cases]
    check_cases(dataset.kind, items)
    version, ids = add_cases(session, actor, project, dataset, items,
                             note=f"Counterexamples from experiment {experiment.id}, "
                                  f"iteration {iteration.number}")
    experiment.dataset_version_id = version.id
    experiment.refinement_case_ids = [*(experiment.refinement_case_ids or []), *ids]
    _comment(session, actor, suggestion, "counterexample",
             f"Added {len(ids)} case(s): dataset version {version.number}")
    _audit(session, actor, "counterexamples_added", experiment, {
        "iteration": iteration.number, "dataset_version": version.number, "case_ids": ids})
    return version


def comments(session: Session, iteration: Iteration) -> list[ReviewComment]:
    return list(session.scalars(
        select(ReviewComment).join(Suggestion, Suggestion.id == ReviewComment.suggestion_id)
        .where(Suggestion.iteration_id == iteration.id).order_by(ReviewComment.id)))
