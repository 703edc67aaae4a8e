"""The arena allowance under concurrency: members below editor start judge runs paid by the
project at the same moment, through the HTTP layer, on the fake provider; the allowance
is checked and reserved in one locked transaction, so together they never spend more than
the admin allowed, and a run that fails gives back its hold but still counts what it cost."""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import func, select, update

from assay.core.base import utcnow
from assay.core.challenges import judge_run
from assay.core.challenges.models import FAILED, HELD, Attempt
from assay.core.projects.models import Project, Role
from assay.extensions import db
from assay.providers.fake import FakeProviderThread
from tests.api.arena_helpers import BASE, attempt, fixture, price, script_judge, seed
from tests.engine.test_providers_engine import configure, fake  # noqa: F401
from tests.factories import Factory, Session

CID = "refund-verification"
RUNNERS = 4


def _money(project_id: int) -> tuple[int, int, int]:
    """The project's spent and reserved, and what its judge attempts cost in all."""
    with db.factory() as session:
        project = session.get(Project, project_id)
        assert project is not None
        charged = session.scalar(select(func.coalesce(func.sum(Attempt.cost_micros), 0))
                                 .where(Attempt.project_id == project_id)) or 0
        return project.spent_micros, project.reserved_micros, int(charged)


@dataclass
class Paying:
    """A project that pays for its members' judge runs: its scripted, priced judge, an
    admin's browser and the judge run's body."""

    project: Any
    owner: Any
    judge: Any
    admin: Session
    body: dict[str, Any]

    @property
    def settings(self) -> str:
        return f"/api/projects/{self.project.id}/settings"


def _paying(factory: Factory, fake: FakeProviderThread) -> Paying:  # noqa: F811
    seed()
    owner = factory.user()
    project = factory.project(owner, "Pays")
    judge = script_judge(fake.url, project.id, CID)
    price(project.id, judge, 2_000_000)
    admin = factory.login(factory.member(project, Role.admin))
    body = {"tab": "judge", "text": fixture(CID, "reference.judge.txt"), "set": "dev",
            "project_id": project.id, "judge": judge}
    return Paying(project, owner, judge, admin, body)


def _bound(viewer: Session, body: dict[str, Any]) -> int:
    """What one run reserves, read from the refusal of a run over a tiny allowance."""
    refused = attempt(viewer, CID, **body)
    assert refused.status_code == 422 and refused.json["code"] == "ARENA_ALLOWANCE_EXCEEDED"
    found = re.search(r"At most (\d+) micro-dollars", str(refused.json["errors"]))
    assert found, refused.json
    return int(found.group(1))


def _together(browsers: list[Session], body: dict[str, Any]) -> list[Any]:
    """The same judge run started by every browser at once (one thread each)."""
    start = threading.Barrier(len(browsers))
    replies: list[Any] = [None] * len(browsers)

    def run(i: int) -> None:
        start.wait()
        replies[i] = attempt(browsers[i], CID, **body)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(browsers))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    return replies


def test_concurrent_judge_runs_never_spend_past_the_allowance(
        factory: Factory, fake: FakeProviderThread) -> None:  # noqa: F811
    paying = _paying(factory, fake)
    project, admin, settings, body = paying.project, paying.admin, paying.settings, paying.body
    assert admin.patch(settings, json={"arena_allowance_micros": 1}).status_code == 200
    viewers = [factory.login(factory.member(project, Role.viewer)) for _ in range(RUNNERS)]
    bound = _bound(viewers[0], body)
    # room for one run's hold (its bound varies by a token or two: the critique's nonce);
    # after it, less than a hold is left
    allowance = bound + bound // 100
    assert admin.patch(settings, json={"arena_allowance_micros": allowance}).status_code == 200
    configure(fake, latency_ms=400)  # the runs overlap: each is still thinking when all start
    replies = _together(viewers, body)
    codes = sorted((r.status_code, (r.json or {}).get("code")) for r in replies)
    paid = [r for r in replies if r.status_code == 201]
    assert len(paid) == 1, codes
    assert codes[1:] == [(422, "ARENA_ALLOWANCE_EXCEEDED")] * (RUNNERS - 1), codes
    spent, reserved, charged = _money(project.id)
    assert reserved == 0 and spent == charged == paid[0].json["cost_micros"] <= allowance
    # what is left now is less than a hold: refused, and nothing moved
    late = attempt(viewers[1], CID, **body)
    assert late.status_code == 422 and late.json["code"] == "ARENA_ALLOWANCE_EXCEEDED"
    assert _money(project.id) == (spent, 0, charged)
    assert sum(v.get(f"{BASE}/{CID}/attempts").json["total"] for v in viewers) == 1
    # the project's cost report counts the judge run: its total is the project's spend
    costs = admin.get(f"/api/projects/{project.id}/reports/costs").json["total"]
    assert costs["spent_micros"] == spent
    assert {k["kind"]: k["spent_micros"] for k in costs["by_kind"]}["arena_judge"] == spent


def test_a_failed_judge_run_releases_its_hold_and_counts_its_cost(
        factory: Factory, fake: FakeProviderThread,  # noqa: F811
        monkeypatch: pytest.MonkeyPatch) -> None:
    paying = _paying(factory, fake)
    project, body = paying.project, paying.body
    assert paying.admin.patch(paying.settings, json={"arena_allowance_micros": 10**9}
                              ).status_code == 200
    viewer = factory.login(factory.member(project, Role.viewer))
    # answers take 0-2 s and the run may take 1 s: some calls are paid for, then it times out
    monkeypatch.setattr(judge_run, "DEADLINE_S", 1.0)
    configure(fake, latency_ms=1000, jitter_ms=1000)
    failed = attempt(viewer, CID, **body)
    assert failed.status_code == 502 and failed.json["code"] == "JUDGE_TIMEOUT", failed.json
    spent, reserved, charged = _money(project.id)
    assert reserved == 0 and spent > 0 and charged == spent  # counted against the allowance
    assert viewer.get(f"{BASE}/{CID}/attempts").json["total"] == 0  # yet no attempt shows
    assert viewer.get(BASE).json["items"][0]["progress"] == {"dev_ready": False,
                                                             "completed": False}
    configure(fake, latency_ms=5, jitter_ms=0)
    paid = attempt(viewer, CID, **body)
    assert paid.status_code == 201, paid.json
    assert paid.json["diff"]["previous_attempt_id"] is None  # the failed run is no attempt
    assert _money(project.id) == (spent + paid.json["cost_micros"], 0,
                                  spent + paid.json["cost_micros"])
    assert [a["id"] for a in viewer.get(f"{BASE}/{CID}/attempts").json["items"]] == [
        paid.json["id"]]


def test_a_hold_whose_request_died_is_given_back(
        factory: Factory, fake: FakeProviderThread) -> None:  # noqa: F811
    """A held attempt older than any run can last (its process died mid-run): the next
    run's reservation gives its hold back to the project; the allowance keeps counting it."""
    paying = _paying(factory, fake)
    project, owner, judge = paying.project, paying.owner, paying.judge
    editor = factory.login(factory.member(project, Role.editor))
    with db.factory() as session:
        session.add(Attempt(user_id=owner.id, challenge_id=CID, tab="judge", split="dev",
                            text="died", project_id=project.id, judge_model=judge,
                            summary={"state": HELD}, results=[], diff={}, cost_micros=777,
                            created_at=utcnow() - timedelta(seconds=judge_run.STALE_S + 5)))
        session.execute(update(Project).where(Project.id == project.id).values(
            reserved_micros=777))
        session.commit()
    paid = attempt(editor, CID, tab="judge", text=fixture(CID, "reference.judge.txt"),
                   set="dev", project_id=project.id, judge=judge)
    assert paid.status_code == 201, paid.json
    spent, reserved, charged = _money(project.id)
    assert reserved == 0 and spent == paid.json["cost_micros"] and charged == spent + 777
    with db.factory() as session:
        states = list(session.scalars(select(Attempt.summary).where(
            Attempt.project_id == project.id).order_by(Attempt.id)))
    assert states[0] == {"state": FAILED} and "state" not in states[1]
