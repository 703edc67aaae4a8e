"""How long Assay keeps what. Every period is in days; 0 keeps forever."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class RetentionPolicy:
    raw_days: int = 30  # outputs' raw request/response (the bulk); text, tokens, scores stay
    runs_days: int = 0  # whole finished runs: outputs, scores, comparisons
    events_days: int = 7  # finished runs' progress event streams (Redis)
    audit_days: int = 0  # the audit trail
    project_grace_days: int = 30  # a deleted project is purged this long after its deletion
    interval_hours: float = 24.0  # how often the scheduled job runs

    def __post_init__(self) -> None:
        for name, value in asdict(self).items():
            if value < 0:
                raise ValueError(f"retention {name} must not be negative")
        if self.interval_hours <= 0:
            raise ValueError("retention interval_hours must be positive")

    @classmethod
    def from_env(cls, env: dict[str, str]) -> RetentionPolicy:
        def number(name: str, default: float) -> float:
            raw = env.get(name)
            try:
                return default if raw is None or raw == "" else float(raw)
            except ValueError as exc:
                raise ValueError(f"{name} must be a number of days, not {raw!r}") from exc

        return cls(
            raw_days=int(number("ASSAY_RETAIN_RAW_DAYS", cls.raw_days)),
            runs_days=int(number("ASSAY_RETAIN_RUNS_DAYS", cls.runs_days)),
            events_days=int(number("ASSAY_RETAIN_EVENTS_DAYS", cls.events_days)),
            audit_days=int(number("ASSAY_RETAIN_AUDIT_DAYS", cls.audit_days)),
            project_grace_days=int(number("ASSAY_PROJECT_GRACE_DAYS", cls.project_grace_days)),
            interval_hours=number("ASSAY_RETENTION_INTERVAL_HOURS", cls.interval_hours),
        )

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)
