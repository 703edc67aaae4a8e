"""Configuration of the fake LLM provider (see ``fake.py``).

Kept apart from the server so that it can be imported and validated cheaply.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

FAULT_KINDS: tuple[str, ...] = ("429", "500", "hang", "reset", "malformed")
# Faults only the X-Fake-Fault header asks for (never drawn at random): an error reply of
# that status, or a reply stopped by the safety filter (Google's and Bedrock's flavors).
FORCED_FAULTS: tuple[str, ...] = ("400", "401", "403", "404", "safety")


class ConfigError(ValueError):
    """A configuration value (from the environment or from ``POST /_fake/config``) is bad."""


@dataclass
class Script:
    """A canned reply: used when ``model`` matches (None = any model) and ``pattern``
    (a regex) is found in the last user message."""

    model: str | None = None
    pattern: str = ""
    reply: str = ""
    regex: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        try:
            self.regex = re.compile(self.pattern)
        except re.error as exc:
            raise ConfigError(
                f"script pattern {self.pattern!r} is not a valid regex: {exc}"
            ) from exc

    def matches(self, model: str, text: str) -> bool:
        return (self.model is None or self.model == model) and self.regex.search(text) is not None

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.model, "pattern": self.pattern, "reply": self.reply}

    @classmethod
    def from_dict(cls, data: Any) -> Script:
        if not isinstance(data, Mapping):
            raise ConfigError("each script must be an object with model, pattern and reply")
        unknown = set(data) - {"model", "pattern", "reply"}
        if unknown:
            raise ConfigError(f"unknown script fields: {sorted(unknown)}")
        model, pattern, reply = data.get("model"), data.get("pattern", ""), data.get("reply")
        if model is not None and not isinstance(model, str):
            raise ConfigError("script model must be a string or null")
        if not isinstance(pattern, str) or not isinstance(reply, str):
            raise ConfigError("script pattern and reply must be strings")
        return cls(model=model, pattern=pattern, reply=reply)


@dataclass
class FakeConfig:
    """How the fake provider behaves. All fields can be changed at run time through
    ``POST /_fake/config``."""

    latency_ms: float = 100.0
    jitter_ms: float = 0.0
    fault_rate: float = 0.0
    faults: tuple[str, ...] = FAULT_KINDS
    retry_after_s: float = 1.0
    hang_s: float = 30.0
    seed: int | None = None
    scripts: list[Script] = field(default_factory=list)
    # Vertex: the service accounts whose signed JWTs its /token trades for access tokens
    # (client_email -> public key PEM), and how long a token lives.
    google_accounts: dict[str, str] = field(default_factory=dict)
    google_token_ttl_s: float = 3600.0
    # Bedrock: the access key ids whose SigV4 signatures it accepts (id -> secret).
    aws_keys: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        if self.latency_ms < 0 or self.jitter_ms < 0:
            raise ConfigError("latency_ms and jitter_ms must be >= 0")
        if not 0.0 <= self.fault_rate <= 1.0:
            raise ConfigError("fault_rate must be between 0 and 1")
        self.faults = tuple(self.faults)
        bad = [kind for kind in self.faults if kind not in FAULT_KINDS]
        if bad:
            raise ConfigError(f"unknown fault kinds {bad}; known: {list(FAULT_KINDS)}")
        if self.fault_rate > 0 and not self.faults:
            raise ConfigError("fault_rate > 0 needs at least one fault kind")
        if self.retry_after_s < 0 or self.hang_s < 0:
            raise ConfigError("retry_after_s and hang_s must be >= 0")

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> FakeConfig:
        """Read ``ASSAY_FAKE_LATENCY_MS``, ``ASSAY_FAKE_JITTER_MS``,
        ``ASSAY_FAKE_FAULT_RATE``, ``ASSAY_FAKE_FAULTS`` (comma list), ``ASSAY_FAKE_SEED``,
        ``ASSAY_FAKE_RETRY_AFTER_S`` and ``ASSAY_FAKE_HANG_S``; unset ones keep defaults."""
        env = os.environ if env is None else env
        kwargs: dict[str, Any] = {}
        floats = {
            "ASSAY_FAKE_LATENCY_MS": "latency_ms",
            "ASSAY_FAKE_JITTER_MS": "jitter_ms",
            "ASSAY_FAKE_FAULT_RATE": "fault_rate",
            "ASSAY_FAKE_RETRY_AFTER_S": "retry_after_s",
            "ASSAY_FAKE_HANG_S": "hang_s",
        }
        for var, name in floats.items():
            raw = env.get(var, "").strip()
            if raw:
                try:
                    kwargs[name] = float(raw)
                except ValueError as exc:
                    raise ConfigError(f"{var} must be a number, got {raw!r}") from exc
        raw_faults = env.get("ASSAY_FAKE_FAULTS")
        if raw_faults is not None and raw_faults.strip():
            kwargs["faults"] = tuple(k.strip() for k in raw_faults.split(",") if k.strip())
        raw_seed = env.get("ASSAY_FAKE_SEED", "").strip()
        if raw_seed:
            try:
                kwargs["seed"] = int(raw_seed)
            except ValueError as exc:
                raise ConfigError(f"ASSAY_FAKE_SEED must be an integer, got {raw_seed!r}") from exc
        return cls(**kwargs)

    def to_dict(self) -> dict[str, Any]:
        return {
            "latency_ms": self.latency_ms,
            "jitter_ms": self.jitter_ms,
            "fault_rate": self.fault_rate,
            "faults": list(self.faults),
            "retry_after_s": self.retry_after_s,
            "hang_s": self.hang_s,
            "seed": self.seed,
            "scripts": [s.to_dict() for s in self.scripts],
            "google_accounts": dict(self.google_accounts),
            "google_token_ttl_s": self.google_token_ttl_s,
            "aws_keys": dict(self.aws_keys),
        }

    def updated(self, data: Any) -> FakeConfig:
        """A copy with the fields of ``data`` (a JSON object, e.g. the body of
        ``POST /_fake/config``) applied; raises ConfigError on unknown or ill-typed fields."""
        if not isinstance(data, Mapping):
            raise ConfigError("the config must be a JSON object")
        known = {f.name for f in fields(self)}
        unknown = set(data) - known
        if unknown:
            raise ConfigError(f"unknown config fields: {sorted(unknown)}")
        changes: dict[str, Any] = {}
        for name, value in data.items():
            if name in ("google_accounts", "aws_keys"):
                if not isinstance(value, Mapping) or not all(
                    isinstance(k, str) and isinstance(v, str) for k, v in value.items()
                ):
                    raise ConfigError(f"{name} must be an object of strings")
                changes[name] = dict(value)
            elif name in ("latency_ms", "jitter_ms", "fault_rate", "retry_after_s", "hang_s",
                          "google_token_ttl_s"):
                if isinstance(value, bool) or not isinstance(value, int | float):
                    raise ConfigError(f"{name} must be a number")
                changes[name] = float(value)
            elif name == "seed":
                if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
                    raise ConfigError("seed must be an integer or null")
                changes[name] = value
            elif name == "faults":
                if not isinstance(value, list | tuple) or not all(
                    isinstance(k, str) for k in value
                ):
                    raise ConfigError("faults must be a list of strings")
                changes[name] = tuple(value)
            elif name == "scripts":
                if not isinstance(value, list):
                    raise ConfigError("scripts must be a list")
                changes[name] = [s if isinstance(s, Script) else Script.from_dict(s) for s in value]
        return replace(self, **changes)
