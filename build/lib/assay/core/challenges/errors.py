"""EvalArena's errors."""

from __future__ import annotations

from assay.core.errors import NotFound


class ChallengeNotFound(NotFound):
    def __init__(self, challenge_id: str) -> None:
        super().__init__(f"No challenge {challenge_id!r}", code="CHALLENGE_NOT_FOUND")
