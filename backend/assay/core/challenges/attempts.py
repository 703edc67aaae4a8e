"""Attempts: a learner's eval run on one set of a challenge, graded, diffed against their
previous attempt of the same tab and set, and kept. Rules run in the request (they take
milliseconds); the judge tab calls models (judge_run.py). For the hidden test set only the
summary, the diff (trace ids) and the redacted report ever leave this module."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from assay.core.auth.models import User
from assay.core.challenges import grading, redaction, ship_judges
from assay.core.challenges.judge_run import NO_ALLOWANCE, project_judge, run_judge
from assay.core.challenges.models import Attempt, Challenge, ChallengeTrace, shown
from assay.core.challenges.service import challenge
from assay.core.errors import Forbidden, Invalid, NotFound
from assay.core.pagination import Page, paginate
from assay.core.projects import service as projects
from assay.core.projects.models import Role
from assay.core.scoring.judge_calls import JudgeModel
from assay.scorers.rules_dsl import RulesError, parse_rules
from assay.settings import Settings


@dataclass(frozen=True)
class RunRequest:
    tab: str  # rules | judge
    text: str
    split: str  # dev | test
    project_id: int | None = None  # judge tab: the project that pays
    # judge tab: a model config's id or name in that project (dev set only), or a judge
    # the operator approved for hidden sets (ship_judges.py), like "fake:fake-judge"
    judge: str | None = None


@dataclass(frozen=True)
class Trace:
    key: str
    messages: list[Any]
    label: str
    violated_clause: int | None
    severity: str | None
    cluster: str | None
    fail_index: int | None


_COLUMNS = (ChallengeTrace.key, ChallengeTrace.messages, ChallengeTrace.label,
            ChallengeTrace.violated_clause, ChallengeTrace.severity, ChallengeTrace.cluster,
            ChallengeTrace.fail_index)


def _traces(session: Session, row: Challenge, split: str) -> list[Trace]:
    # plain rows, not ORM objects: a rules run should feel like a compiler
    return [Trace(*r) for r in session.execute(select(*_COLUMNS).where(
        ChallengeTrace.challenge_id == row.id, ChallengeTrace.split == split)
        .order_by(ChallengeTrace.position))]


def _rules_verdicts(text: str, traces: list[Trace]) -> list[grading.Verdict]:
    try:
        rules = parse_rules(text)
    except RulesError as error:
        raise Invalid("The rules have problems: fix them and run again",
                      {"json": {"text": [f"line {p['line']}, column {p['column']}: "
                                         f"{p['message']}" for p in error.problems]},
                       "problems": error.problems}, code="RULES_INVALID") from None
    return [grading.rules_verdict(rules, t.messages) for t in traces]


def _previous(session: Session, user: User, row: Challenge, tab: str,
              split: str) -> Attempt | None:
    return session.scalars(select(Attempt).where(
        Attempt.user_id == user.id, Attempt.challenge_id == row.id, Attempt.tab == tab,
        Attempt.split == split, shown()).order_by(Attempt.id.desc()).limit(1)).first()


def _report(session: Session, row: Challenge, traces: list[Trace],
            results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    dev = [m.get("content") or "" for t in _traces(session, row, "dev") for m in t.messages]
    known = redaction.vocabulary(row.context, [str(d) for d in dev])
    by_key = {t.key: t for t in traces}
    return [redaction.report_entry(by_key[r["trace_id"]], r, row.context["contract"], known)
            for r in results if r["miss"] is not None]


def _limited(session: Session, user: User, project_id: int) -> bool:
    """False: the caller is editor or more and spends the project's budget; True: within
    the arena allowance an admin set (Forbidden without one; judge_run checks what is left
    under the project's lock)."""
    project, role = projects.access(session, user, project_id, Role.viewer)
    if role.at_least(Role.editor):
        return False
    if (project.settings or {}).get("arena_allowance_micros") is None:
        raise Forbidden(NO_ALLOWANCE)
    return True


def _grade(session: Session, attempt: Attempt, row: Challenge, traces: list[Trace],
           verdicts: list[grading.Verdict], user: User) -> None:
    results = [grading.trace_result(t, v) for t, v in zip(traces, verdicts, strict=True)]
    previous = _previous(session, user, row, attempt.tab, attempt.split)
    attempt.summary = grading.summarise(results, row.pass_threshold)
    attempt.results = results
    attempt.report = _report(session, row, traces, results) if attempt.split == "test" else None
    attempt.diff = grading.diff(previous.results if previous else None, results,
                                previous.id if previous else None)


def _approved(judges: tuple[ship_judges.ShipJudge, ...], ref: str) -> ship_judges.ShipJudge:
    """A hidden set is judged only by a judge the operator approved: a learner's own model
    config could send its traces to any endpoint (issue 31 item 7)."""
    found = ship_judges.find(judges, ref)
    if found is not None:
        return found
    allowed = [j.ref for j in judges]
    message = (f"Ship to Prod judges with a judge this instance approved for hidden sets: "
               f"{', '.join(allowed)}. Your own models judge dev traces only." if allowed
               else "No judge is approved for hidden sets on this instance (the operator "
                    f"sets {ship_judges.SETTING}); your own models judge dev traces only.")
    raise Invalid(message, {"json": {"judge": [message]}, "allowed": allowed},
                  code="JUDGE_NOT_APPROVED")


def _judge_model(session: Session, req: RunRequest, settings: Settings) -> JudgeModel:
    assert req.project_id is not None and req.judge
    judges = settings.arena_ship_judges
    if req.split == "test":
        return _approved(judges, req.judge).judge_model(settings.fake_provider_url)
    operator = ship_judges.find(judges, req.judge)  # calibrate on the judge you ship with
    if operator is not None:
        return operator.judge_model(settings.fake_provider_url)
    return project_judge(session, req.project_id, req.judge, settings.secret_key)


def run_attempt(session: Session, user: User, challenge_id: str, req: RunRequest,
                settings: Settings) -> Attempt:
    row = challenge(session, challenge_id)
    started = time.perf_counter()
    traces = _traces(session, row, req.split)
    if req.tab == "rules":
        attempt = Attempt(user_id=user.id, challenge_id=row.id, tab=req.tab, split=req.split,
                          text=req.text, critique=None, cost_micros=0)
        _grade(session, attempt, row, traces, _rules_verdicts(req.text, traces), user)
        session.add(attempt)
    else:
        if req.project_id is None or not req.judge:
            raise Invalid("A judge run needs a project to pay and a judge model", {"json": {
                key: ["required for the judge tab"] for key in ("project_id", "judge")
                if (req.project_id if key == "project_id" else req.judge) in (None, "")}})
        if req.split == "test":  # before any limit, hold or call
            _approved(settings.arena_ship_judges, req.judge)
        limited = _limited(session, user, req.project_id)
        model = _judge_model(session, req, settings)
        pending = Attempt(user_id=user.id, challenge_id=row.id, tab=req.tab, split=req.split,
                          text=req.text, project_id=req.project_id, judge_model=req.judge,
                          results=[], diff={}, critique=None)
        user_id, cid = user.id, row.id
        outcome = run_judge(session, pending, limited, model, req.text, dict(row.context),
                            [t.messages for t in traces], settings.url_policy)
        # the session was closed while the models thought: load again
        row = challenge(session, cid)
        traces = _traces(session, row, req.split)
        user = session.get(User, user_id) or user
        found = session.get(Attempt, outcome.attempt_id)
        assert found is not None
        attempt = found
        _grade(session, attempt, row, traces, outcome.verdicts, user)
        attempt.critique, attempt.cost_micros = outcome.critique, outcome.cost_micros
    attempt.duration_ms = round((time.perf_counter() - started) * 1000)
    session.commit()
    return attempt


def public(attempt: Attempt) -> dict[str, Any]:
    """What a client may see of an attempt: per-trace results of the dev set only."""
    dev = attempt.split == "dev"
    return {"id": attempt.id, "challenge_id": attempt.challenge_id, "tab": attempt.tab,
            "set": attempt.split, "text": attempt.text, "created_at": attempt.created_at,
            "summary": attempt.summary, "diff": attempt.diff,
            "results": attempt.results if dev else [],
            "report": [] if dev else (attempt.report or []),
            "critique": attempt.critique, "project_id": attempt.project_id,
            "judge": attempt.judge_model, "cost_micros": attempt.cost_micros,
            "duration_ms": attempt.duration_ms}


def history(session: Session, user: User, challenge_id: str, tab: str | None,
            split: str | None, page: int, page_size: int) -> Page[Attempt]:
    row = challenge(session, challenge_id)
    stmt = select(Attempt).where(Attempt.user_id == user.id, Attempt.challenge_id == row.id,
                                 shown())
    if tab:
        stmt = stmt.where(Attempt.tab == tab)
    if split:
        stmt = stmt.where(Attempt.split == split)
    return paginate(session, stmt.order_by(Attempt.id.desc()), page, page_size)


def one(session: Session, user: User, challenge_id: str, attempt_id: int) -> Attempt:
    attempt = session.get(Attempt, attempt_id)
    if attempt is None or attempt.user_id != user.id or attempt.challenge_id != challenge_id \
            or "state" in attempt.summary:
        raise NotFound(f"No attempt {attempt_id} of yours on this challenge")
    return attempt
