"""`assay seed` for EvalArena: every challenge file into the database, idempotently. An
unchanged file changes nothing; a changed one replaces its row and traces; a challenge
whose file is gone is retired (hidden from the library, its attempts kept)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict
from pathlib import Path

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from assay.core.base import utcnow
from assay.core.challenges.content import ChallengeSpec, read_folder
from assay.core.challenges.models import Challenge, ChallengeTrace
from assay.settings import REPO_ROOT

CHALLENGES_DIR = REPO_ROOT / "seeds" / "challenges"


def content_hash(spec: ChallengeSpec) -> str:
    return hashlib.sha256(json.dumps(asdict(spec), sort_keys=True, default=str)
                          .encode()).hexdigest()


def _write(session: Session, spec: ChallengeSpec, position: int, digest: str) -> None:
    row = session.get(Challenge, spec.id)
    if row is None:
        row = Challenge(id=spec.id)
        session.add(row)
    row.position, row.title, row.description = position, spec.title, spec.description
    row.difficulty, row.category, row.start_mode = spec.difficulty, spec.category, \
        spec.start_mode
    row.pass_threshold, row.context, row.texts = spec.pass_threshold, spec.context, spec.texts
    row.dev_count = sum(1 for t in spec.traces if t.split == "dev")
    row.test_count = sum(1 for t in spec.traces if t.split == "test")
    row.content_hash, row.retired_at, row.updated_at = digest, None, utcnow()
    session.flush()
    session.execute(delete(ChallengeTrace).where(ChallengeTrace.challenge_id == spec.id))
    session.add_all(ChallengeTrace(
        challenge_id=spec.id, split=t.split, key=t.id, position=i,
        messages=[dict(m) for m in t.messages], label=t.label,
        violated_clause=t.violated_clause, severity=t.severity, cluster=t.cluster,
        fail_index=t.fail_index, hidden_fail_reason=t.hidden_fail_reason)
        for i, t in enumerate(spec.traces))


def seed_challenges(session: Session, folder: Path = CHALLENGES_DIR) -> dict[str, int]:
    """Load every `*.yaml` of `folder`; raises ChallengeFileError (nothing written) when
    any file is broken. Returns counts: added, updated, unchanged, retired."""
    specs = read_folder(folder)
    counts = {"added": 0, "updated": 0, "unchanged": 0, "retired": 0}
    known = {c.id: c for c in session.scalars(select(Challenge))}
    for position, spec in enumerate(specs):
        digest = content_hash(spec)
        row = known.get(spec.id)
        if row is not None and row.content_hash == digest and row.retired_at is None:
            row.position = position  # another file came or went: the order moves, not it
            counts["unchanged"] += 1
            continue
        counts["added" if row is None else "updated"] += 1
        _write(session, spec, position, digest)
    seen = {s.id for s in specs}
    for cid, row in known.items():
        if cid not in seen and row.retired_at is None:
            row.retired_at = utcnow()
            counts["retired"] += 1
    session.commit()
    return counts
