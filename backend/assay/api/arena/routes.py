"""EvalArena: the challenge library, a challenge's workspace, drafts, hints, validation,
and attempts (Run on the dev set, Ship to Prod on the hidden test set). Global content:
any signed-in user; a judge run is paid by a project where the caller is editor+."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy.exc import IntegrityError

from assay.api import preconditions
from assay.api.arena import schemas as s
from assay.api.base import Blueprint, page_dict, page_of, runtime, session, user
from assay.api.slow_lane import slow_work
from assay.core.challenges import attempts, service
from assay.core.errors import Conflict, NotFound

blp = Blueprint("arena", __name__, url_prefix="/api/arena/challenges",
                description="EvalArena: practice writing evals on agent traces")


def _first_save(write: Callable[[], Any]) -> Any:
    """`write` of a draft row that may not exist yet; when another request inserted it first
    (two tabs' first saves at once), once more, now as an edit of that row: If-Match then
    decides (a stale "0" is a 412 with the other save), never a 500."""
    for attempt in range(2):
        try:
            return write()
        except IntegrityError as exc:
            session().rollback()
            if attempt:
                raise Conflict("The draft changed meanwhile; try again",
                               code="DRAFT_CONFLICT") from exc
    raise AssertionError("unreachable")


def _tab(tab: str) -> str:
    if tab not in s.TABS:
        raise NotFound(f"No tab {tab!r}: rules or judge")
    return tab


@blp.get("")
@blp.arguments(s.ArenaLibraryArgs, location="query")
@blp.response(200, s.ArenaChallengeListSchema)
def list_challenges(args: dict[str, Any]) -> Any:
    """List the challenges, with the caller's progress"""
    return {"items": service.library(session(), user(), args["q"])}


@blp.get("/<string:challenge_id>")
@blp.response(200, s.ArenaChallengeSchema)
def get_challenge(challenge_id: str) -> Any:
    """A challenge's workspace: context, dev traces, both tabs' texts and drafts

    The hidden test traces are never part of it. `ship_judges`: what may judge them."""
    judges = [{"id": j.ref, "kind": j.kind, "model": j.model}
              for j in runtime().settings.arena_ship_judges]
    return {**service.workspace(session(), user(), challenge_id), "ship_judges": judges}


@blp.put("/<string:challenge_id>/drafts/<string:tab>")
@blp.arguments(s.ArenaDraftBodySchema)
@blp.response(200, s.ArenaDraftSchema)
@preconditions.write()
def save_draft(data: dict[str, Any], challenge_id: str, tab: str) -> Any:
    """Save the last edited text of a tab

    If-Match is the tab's `draft_row_version` ("0": never saved): a save from a stale
    tab or window is refused."""
    def write() -> Any:
        draft = service.draft(session(), user(), challenge_id, _tab(tab))
        preconditions.guard(draft, lambda: service.draft_view(draft))
        return preconditions.tagged(service.save_draft(session(), draft, data["text"]), draft)
    return _first_save(write)


@blp.post("/<string:challenge_id>/hints/<string:tab>")
@blp.response(200, s.ArenaHintSchema)
def reveal_hint(challenge_id: str, tab: str) -> Any:
    """Reveal a tab's hint (recorded; a partial skeleton, never a solution)"""
    return _first_save(lambda: service.reveal_hint(session(), user(), challenge_id, _tab(tab)))


@blp.post("/<string:challenge_id>/validate")
@blp.arguments(s.ArenaValidateBodySchema)
@blp.response(200, s.ArenaValidationSchema)
def validate_eval(data: dict[str, Any], challenge_id: str) -> Any:
    """Check an eval before running it: rules problems with line and column; rubric checks"""
    row = service.challenge(session(), challenge_id)
    problems = service.validate(data["tab"], data["text"], row.context["contract"])
    return {"ok": not any(p["level"] == "error" for p in problems), "problems": problems}


@blp.post("/<string:challenge_id>/attempts")
@blp.arguments(s.ArenaAttemptBodySchema)
@blp.response(201, s.ArenaAttemptSchema)
@slow_work
def create_attempt(data: dict[str, Any], challenge_id: str) -> Any:
    """Run an eval on the dev set, or ship it to the hidden test set

    Rules answer at once; the judge tab calls the judge model of `project_id` on every
    trace plus the meta-judge (billed to that project, budgeted). On the hidden set the
    judge must be one the operator approved (`ship_judges` of the challenge), else 422
    JUDGE_NOT_APPROVED. 422 RULES_INVALID lists the rules' problems; 422 BUDGET_EXCEEDED;
    502 JUDGE_FAILED / JUDGE_TIMEOUT."""
    settings = runtime().settings
    request = attempts.RunRequest(data["tab"], data["text"], data["set"],
                                  data["project_id"], data["judge"])
    attempt = attempts.run_attempt(session(), user(), challenge_id, request, settings)
    return attempts.public(attempt)


@blp.get("/<string:challenge_id>/attempts")
@blp.arguments(s.ArenaHistoryArgs, location="query")
@blp.response(200, page_of(s.ArenaAttemptSchema))
def list_attempts(args: dict[str, Any], challenge_id: str) -> Any:
    """The caller's attempts on a challenge, newest first"""
    page = attempts.history(session(), user(), challenge_id, args["tab"], args["set"],
                            args["page"], args["page_size"])
    return page_dict(page, [attempts.public(a) for a in page.items])


@blp.get("/<string:challenge_id>/attempts/<int:attempt_id>")
@blp.response(200, s.ArenaAttemptSchema)
def get_attempt(challenge_id: str, attempt_id: int) -> Any:
    """One of the caller's attempts"""
    return attempts.public(attempts.one(session(), user(), challenge_id, attempt_id))
