"""EvalArena's verbs for a signed-in user: the library with their progress, a challenge's
workspace (never its test traces), drafts, hints and the editor's validation."""

from __future__ import annotations

import re
from typing import Any

from sqlalchemy import func, or_, select
from sqlalchemy.orm import Session

from assay.core.auth.models import User
from assay.core.base import utcnow
from assay.core.challenges.content import ID, START_MODES
from assay.core.challenges.errors import ChallengeNotFound
from assay.core.challenges.models import Attempt, Challenge, ChallengeTrace, Draft, shown
from assay.core.row_versions import version_of
from assay.scorers.rules_dsl import RulesError, parse_rules

TABS = ("rules", "judge")
RUBRIC_MIN, RUBRIC_MAX = 10, 20_000


def challenge(session: Session, challenge_id: str) -> Challenge:
    # an id no challenge file could have (a NUL byte breaks PostgreSQL's text) is simply absent
    row = session.get(Challenge, challenge_id) if ID.match(challenge_id) else None
    if row is None or row.retired_at is not None:
        raise ChallengeNotFound(challenge_id)
    return row


def progress(session: Session, user: User, ids: list[str]) -> dict[str, dict[str, Any]]:
    """Per challenge: dev_ready (the latest dev attempt of a tab met the bar) and completed
    (a hidden test attempt was Prod ready), with the same per tab."""
    out: dict[str, dict[str, Any]] = {
        cid: {"dev_ready": False, "completed": False,
              "tabs": {tab: {"dev_ready": False, "prod_ready": False} for tab in TABS}}
        for cid in ids}
    if not ids:
        return out
    latest = select(func.max(Attempt.id)).where(
        Attempt.user_id == user.id, Attempt.challenge_id.in_(ids), shown()).group_by(
        Attempt.challenge_id, Attempt.tab, Attempt.split)
    rows = session.execute(select(Attempt.challenge_id, Attempt.tab, Attempt.split,
                                  Attempt.summary).where(Attempt.id.in_(latest))).all()
    for cid, tab, split, summary in rows:
        ready = bool(summary.get("ready"))
        out[cid]["tabs"][tab]["dev_ready" if split == "dev" else "prod_ready"] = ready
    done = session.execute(select(Attempt.challenge_id, Attempt.tab, Attempt.summary).where(
        Attempt.user_id == user.id, Attempt.challenge_id.in_(ids), Attempt.split == "test",
        shown()))
    for cid, _tab, summary in done:
        if summary.get("ready"):
            out[cid]["completed"] = True
    for entry in out.values():
        entry["dev_ready"] = any(t["dev_ready"] for t in entry["tabs"].values())
    return out


def card(row: Challenge, state: dict[str, Any]) -> dict[str, Any]:
    return {"id": row.id, "title": row.title, "description": row.description,
            "category": row.category, "difficulty": row.difficulty,
            "start_mode": row.start_mode, "mode_label": START_MODES[row.start_mode],
            "pass_threshold": row.pass_threshold, "dev_count": row.dev_count,
            "test_count": row.test_count,
            "progress": {"dev_ready": state["dev_ready"], "completed": state["completed"]}}


def library(session: Session, user: User, q: str | None) -> list[dict[str, Any]]:
    stmt = select(Challenge).where(Challenge.retired_at.is_(None))
    if q and q.strip():
        like = f"%{q.strip().lower()}%"
        stmt = stmt.where(or_(*(func.lower(col).like(like) for col in (
            Challenge.id, Challenge.title, Challenge.description, Challenge.category,
            Challenge.difficulty))))
    rows = list(session.scalars(stmt.order_by(Challenge.position, Challenge.id)))
    states = progress(session, user, [r.id for r in rows])
    return [card(r, states[r.id]) for r in rows]


def workspace(session: Session, user: User, challenge_id: str) -> dict[str, Any]:
    """A challenge for its workspace: context, the dev traces (no labels: those come with
    run results), both tabs' starting texts and the caller's drafts. No test trace."""
    row = challenge(session, challenge_id)
    traces = session.scalars(select(ChallengeTrace).where(
        ChallengeTrace.challenge_id == row.id, ChallengeTrace.split == "dev")
        .order_by(ChallengeTrace.position)).all()
    drafts = {d.tab: d for d in session.scalars(select(Draft).where(
        Draft.user_id == user.id, Draft.challenge_id == row.id))}
    state = progress(session, user, [row.id])[row.id]
    texts = row.texts
    tabs = {}
    for tab in TABS:
        draft = drafts.get(tab)
        revealed = draft is not None and draft.hint_revealed_at is not None
        tabs[tab] = {"baseline_text": texts.get(f"baseline_{tab}_text") or None,
                     "default_text": texts.get(f"default_{tab}_text") or "",
                     "starting_text": (texts.get(f"baseline_{tab}_text") if row.start_mode
                                       == "baseline" else None) or
                     texts.get(f"default_{tab}_text") or "",
                     "draft": draft.text if draft else None,
                     "draft_saved_at": draft.updated_at if draft else None,
                     "draft_row_version": version_of(draft),
                     "has_hint": bool(texts.get(f"hint_{tab}_text")),
                     "hint": texts.get(f"hint_{tab}_text") if revealed else None,
                     **state["tabs"][tab]}
    return {**card(row, state), "context": row.context,
            "dev_traces": [{"id": t.key, "messages": t.messages} for t in traces],
            "tabs": tabs}


def _draft(session: Session, user: User, challenge_id: str, tab: str) -> Draft:
    draft = session.get(Draft, (user.id, challenge_id, tab))
    if draft is None:
        draft = Draft(user_id=user.id, challenge_id=challenge_id, tab=tab)
        session.add(draft)
    return draft


def draft(session: Session, user: User, challenge_id: str, tab: str) -> Draft:
    """The caller's draft of a tab (a new one, not yet added, when never saved)."""
    challenge(session, challenge_id)
    return _draft(session, user, challenge_id, tab)


def draft_view(draft: Draft) -> dict[str, Any]:
    return {"tab": draft.tab, "text": draft.text or "", "saved_at": draft.updated_at,
            "row_version": version_of(draft)}


def save_draft(session: Session, draft: Draft, text: str) -> dict[str, Any]:
    draft.text, draft.updated_at = text, utcnow()
    session.commit()
    return draft_view(draft)


def reveal_hint(session: Session, user: User, challenge_id: str, tab: str) -> dict[str, Any]:
    row = challenge(session, challenge_id)
    draft = _draft(session, user, challenge_id, tab)
    if draft.hint_revealed_at is None:
        draft.hint_revealed_at = utcnow()
    draft.updated_at = draft.updated_at or utcnow()
    session.commit()
    return {"tab": tab, "hint": row.texts.get(f"hint_{tab}_text") or "",
            "revealed_at": draft.hint_revealed_at}


_CONTRACT_WORDS = re.compile(r"contract|clause|must|never|require", re.I)
_EVIDENCE_WORDS = re.compile(r"evidence|quote|cite|message|idx|index", re.I)


def validate(tab: str, text: str, contract: list[str]) -> list[dict[str, Any]]:
    """The editor's problems before a run, each {line, column, message, level}. Rules:
    every DSL problem (errors). Judge: what makes the rubric unusable (errors), and
    §10's checks the meta-judge makes, in their cheap static form (warnings)."""
    if tab == "rules":
        try:
            parse_rules(text)
        except RulesError as error:
            return [{**p, "level": "error"} for p in error.problems]
        return []
    problems: list[dict[str, Any]] = []
    stripped = text.strip()
    if len(stripped) < RUBRIC_MIN:
        problems.append({"line": 1, "column": 1, "level": "error", "message":
                         f"the rubric needs at least {RUBRIC_MIN} characters: say what a "
                         "passing conversation must do and what fails it"})
    if len(text) > RUBRIC_MAX:
        problems.append({"line": 1, "column": 1, "level": "error",
                         "message": f"the rubric is longer than {RUBRIC_MAX} characters"})
    if problems:
        return problems
    if not _CONTRACT_WORDS.search(text):
        problems.append({"line": 1, "column": 1, "level": "warning", "message":
                         "the rubric never refers to the contract: name the clauses "
                         f"({len(contract)}) a trace can break"})
    if not _EVIDENCE_WORDS.search(text):
        problems.append({"line": 1, "column": 1, "level": "warning", "message":
                         "the rubric does not say what counts as evidence (e.g. 'cite the "
                         "message index'); expect inconsistent verdicts"})
    return problems
