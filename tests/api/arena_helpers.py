"""What the EvalArena tests share: seeding the challenges, the fixtures of each challenge
(tests/fixtures/challenges/<id>/), and a judge model scripted on the fake provider.

Scripted verdicts (the convention seeds/challenges/README.md documents): the judge model
`arena-judge-<challenge id>` answers each trace with a verdict that agrees with its label
(pass; or fail with the trace's severity and cluster), unless the challenge's
`reference.verdicts.yaml` says otherwise for that trace id. Each script's pattern is the
trace's conversation exactly as the verdict judge renders it into its prompt, so the
fake provider tells the traces apart and every other request (the meta-judge) gets the
fake's own answer."""

from __future__ import annotations

import dataclasses
import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from sqlalchemy import update

from assay.core.challenges.content import ChallengeSpec, TraceSpec, read_file
from assay.core.challenges.seeding import CHALLENGES_DIR, seed_challenges
from assay.core.challenges.ship_judges import ShipJudge
from assay.core.llm.models import ModelConfig
from assay.extensions import db
from assay.runtime import current
from assay.scorers.judge_guard import neutralise
from assay.scorers.judging import render_messages
from tests.api.test_critiques import _model

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "challenges"
IDS = sorted(p.stem for p in CHALLENGES_DIR.glob("*.yaml"))
BASE = "/api/arena/challenges"


def seed() -> dict[str, int]:
    with db.factory() as session:
        return seed_challenges(session)


@cache
def spec(challenge_id: str) -> ChallengeSpec:
    return read_file(CHALLENGES_DIR / f"{challenge_id}.yaml")


def fixture(challenge_id: str, name: str) -> str:
    return (FIXTURES / challenge_id / name).read_text()


def verdict_for(trace: TraceSpec, override: dict[str, Any] | None) -> dict[str, Any]:
    if override is not None:
        passed = bool(override["pass"])
        severity = override.get("severity", "low" if passed else "high")
        cluster = override.get("cluster", "ok" if passed else "fail")
    else:
        passed = trace.label == "pass"
        severity = "low" if passed else (trace.severity or "high")
        cluster = "ok" if passed else (trace.cluster or "contract broken")
    last = len(trace.messages) - 1
    return {"pass": passed, "severity": severity, "cluster": cluster,
            "reason": "Scripted verdict for the arena tests.",
            "evidence": [{"idx": last, "label": cluster, "detail": "scripted"}]}


def script_judge(fake_url: str, project_id: int, challenge_id: str,
                 overrides: dict[str, Any] | None = None) -> str:
    """A judge model in the project, scripted on the fake provider; returns its name."""
    model = f"arena-judge-{challenge_id}"
    name = f"Arena judge {challenge_id}"
    _model(project_id, name, model, fake_url)
    path = FIXTURES / challenge_id / "reference.verdicts.yaml"
    if overrides is None and path.exists():
        overrides = yaml.safe_load(path.read_text()) or {}
    overrides = overrides or {}
    scripts = [{"model": model,
                "pattern": re.escape(neutralise(render_messages(list(t.messages)))),
                "reply": json.dumps(verdict_for(t, overrides.get(t.id)))}
               for t in spec(challenge_id).traces]
    scripts.sort(key=lambda s: -len(s["pattern"]))  # a trace inside a longer one: longest first
    config = httpx.get(f"{fake_url}/_fake/config").json()
    kept = [s for s in config["scripts"] if s.get("model") != model]
    httpx.post(f"{fake_url}/_fake/config", json={"scripts": kept + scripts}).raise_for_status()
    return name


def price(project_id: int, name: str, micros_per_mtok: int) -> None:
    with db.factory() as session:
        session.execute(update(ModelConfig).where(
            ModelConfig.project_id == project_id, ModelConfig.name == name).values(
            input_price_per_mtok_micros=micros_per_mtok,
            output_price_per_mtok_micros=micros_per_mtok))
        session.commit()


def attempt(browser: Any, challenge_id: str, **body: Any) -> Any:
    return browser.post(f"{BASE}/{challenge_id}/attempts", json=body)


def approve(monkeypatch: pytest.MonkeyPatch, fake_url: str, model: str,
            micros_per_mtok: int | None = None) -> str:
    """The operator approves `model` of the fake provider for hidden sets
    (ASSAY_ARENA_SHIP_JUDGES); returns its reference, what Ship to Prod sends. The scripted
    judge of a challenge (script_judge) is `arena-judge-<challenge id>`."""
    rt = current()
    judge = ShipJudge("fake", model, micros_per_mtok, micros_per_mtok)
    monkeypatch.setattr(rt, "settings", dataclasses.replace(
        rt.settings, fake_provider_url=fake_url,
        arena_ship_judges=(*rt.settings.arena_ship_judges, judge)))
    return judge.ref
