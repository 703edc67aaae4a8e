"""Builders for users, projects and signed-in clients, through the real services and API."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

from flask import Flask
from flask.testing import FlaskClient
from werkzeug.test import TestResponse

from assay.core.auth.models import User
from assay.core.auth.service import create_api_token, register
from assay.core.projects import service as projects
from assay.core.projects.models import Project, Role
from assay.extensions import db
from assay.settings import Settings

PASSWORD = "Correct-horse-42!"
_ids = itertools.count(1)


@dataclass
class Session:
    """A signed-in browser: the session cookie plus the CSRF header on unsafe methods."""

    client: FlaskClient
    csrf: str
    user_id: int

    def request(self, method: str, url: str, **kwargs: Any) -> TestResponse:
        headers = dict(kwargs.pop("headers", {}) or {})
        if method.upper() not in {"GET", "HEAD", "OPTIONS"}:
            headers.setdefault("X-CSRF-Token", self.csrf)
        return self.client.open(url, method=method.upper(), headers=headers, **kwargs)

    def get(self, url: str, **kw: Any) -> TestResponse:
        return self.request("GET", url, **kw)

    def post(self, url: str, **kw: Any) -> TestResponse:
        return self.request("POST", url, **kw)

    def patch(self, url: str, **kw: Any) -> TestResponse:
        return self.request("PATCH", url, **kw)

    def delete(self, url: str, **kw: Any) -> TestResponse:
        return self.request("DELETE", url, **kw)


@dataclass
class PlannedRun:
    run_id: int
    target_ids: list[int]
    case_ids: list[int]


class Factory:
    def __init__(self, app: Flask, settings: Settings):
        self.app, self.settings = app, settings

    def user(self, email: str | None = None, password: str = PASSWORD) -> User:
        email = email or f"user{next(_ids)}@example.com"
        with db.factory() as session:
            user = register(session, email, password, None, self.settings.bcrypt_rounds)
            session.commit()
            return user

    def login(self, user: User, password: str = PASSWORD) -> Session:
        client = self.app.test_client()
        reply = client.post("/api/auth/login", json={"email": user.email, "password": password})
        assert reply.status_code == 200, reply.json
        return Session(client, reply.json["csrf_token"], user.id)

    def signed_in(self) -> Session:
        return self.login(self.user())

    def project(self, owner: User, name: str = "Project") -> Project:
        with db.factory() as session:
            found = session.merge(owner)
            project = projects.create_project(session, found, name)
            session.commit()
            return project

    def member(self, project: Project, role: Role) -> User:
        user = self.user()
        with db.factory() as session:
            from assay.core.projects.models import Membership

            session.add(Membership(project_id=project.id, user_id=user.id, role=role))
            session.commit()
        return user

    def finished_run(self, owner: User, project: Project, execute: bool = False) -> int:
        """A demo run (fake-provider models, demo dataset) that is already over: executed
        for real when `execute`, else closed as completed without calling the provider."""
        from sqlalchemy import update

        from assay.core.base import utcnow
        from assay.core.datasets.service import ensure_demo_dataset
        from assay.core.llm.service import ensure_demo_models
        from assay.core.runs.models import Run, RunStatus
        from assay.core.runs.planning import RunSpec, TargetSpec, plan_run
        from assay.core.runs.progress import snapshot
        from assay.events.publish import FINISHED
        from assay.jobs.runs import execute_run
        from assay.runtime import current
        from assay.seeds import demo_cases

        with db.factory() as session:
            actor, found = session.merge(owner), session.merge(project)
            models = ensure_demo_models(session, actor, found, self.settings.fake_provider_url)
            dataset = ensure_demo_dataset(session, actor, found, demo_cases())
            run = plan_run(session, actor, found, RunSpec(
                dataset_id=dataset.id, targets=tuple(TargetSpec(m.id) for m in models)))
            run_id = run.id
            if not execute:
                now = utcnow()
                session.execute(update(Run).where(Run.id == run_id).values(
                    status=RunStatus.completed, started_at=now, finished_at=now))
            session.commit()
            if not execute:  # its progress stream ends like a real run's
                session.refresh(run)
                current().publish(run_id, FINISHED, snapshot(session, run_id))
        if execute:
            execute_run(run_id)
        return run_id

    def planned_run(self, owner: User, project: Project, cases: int = 3, targets: int = 2,
                    repeats: int = 1, turns: int = 1) -> PlannedRun:
        """A run written row by row (no planning service, no worker): a dataset of `cases`
        questions, `targets` targets on the fake provider's models, and every cell pending.
        Tests then write the outputs they need directly."""
        from sqlalchemy import insert

        from assay.core.datasets.service import create_dataset, latest_version, version_cases
        from assay.core.llm.service import ensure_demo_models
        from assay.core.runs.models import CellStatus, Output, Run, RunStatus, RunTarget

        with db.factory() as session:
            actor, found = session.merge(owner), session.merge(project)
            models = ensure_demo_models(session, actor, found, self.settings.fake_provider_url)
            dataset = create_dataset(session, actor, found, f"Planned {next(_ids)}", "questions",
                                     [{"input": {"question": f"Question {i}?"},
                                       "expected": {"output": f"Answer {i}"}}
                                      for i in range(cases)])
            case_ids = [c.id for c in version_cases(session,
                                                    latest_version(session, dataset.id).id)]
            per_target = cases * repeats * turns
            run = Run(project_id=found.id, name="Planned", status=RunStatus.pending,
                      dataset_version_id=latest_version(session, dataset.id).id,
                      total=per_target * targets, settings={"repeats": repeats})
            session.add(run)
            session.flush()
            rows = [RunTarget(run_id=run.id, model_id=models[i % len(models)].id,
                              label=f"Target {i}", position=i, total=per_target)
                    for i in range(targets)]
            session.add_all(rows)
            session.flush()
            session.execute(insert(Output), [
                {"run_id": run.id, "case_id": case_id, "target_id": t.id, "repeat": r,
                 "turn": turn, "status": CellStatus.pending, "attempts": 0}
                for case_id in case_ids for t in rows for r in range(repeats)
                for turn in range(turns)])
            session.commit()
            return PlannedRun(run.id, [t.id for t in rows], case_ids)

    def scorer(self, project: Project, name: str = "Review", kind: str = "manual",
               params: dict[str, Any] | None = None) -> tuple[int, int]:
        """A scorer of the project, through the service: (its id, its version 1's id)."""
        from assay.core.scoring.service import create_scorer

        with db.factory() as session:
            scorer, version = create_scorer(session, None, session.merge(project), {
                "name": name, "kind": kind, "params": params or {}})
            session.commit()
            return scorer.id, version.id

    def api_token(self, user: User) -> str:
        with db.factory() as session:
            _, plaintext = create_api_token(session, session.merge(user), "test")
            session.commit()
            return plaintext


def first_output(run_id: int) -> int:
    """The id of a run's first output."""
    from sqlalchemy import func, select

    from assay.core.runs.models import Output

    with db.factory() as session:
        found = session.scalar(select(func.min(Output.id)).where(Output.run_id == run_id))
    assert found is not None
    return int(found)


def succeed(output_id: int, text: str = "An answer") -> None:
    """Record an output as succeeded with `text`, as if its call had just returned."""
    from sqlalchemy import update

    from assay.core.base import utcnow
    from assay.core.runs.models import CellStatus, Output

    with db.factory() as session:
        session.execute(update(Output).where(Output.id == output_id).values(
            status=CellStatus.succeeded, text=text, finished_at=utcnow(), attempts=1))
        session.commit()


def race(app: Flask, monkeypatch: Any, target: str,
         requests: list[tuple[str, str, dict[str, Any] | None]],
         headers: dict[str, str] | None = None) -> list[TestResponse]:
    """Send `requests` concurrently, each held at `target` (a dotted function path, called
    after the request's checks and before its insert) until all have reached it."""
    import threading
    from importlib import import_module

    module_name, _, name = target.rpartition(".")
    module = import_module(module_name)
    original = getattr(module, name)
    barrier = threading.Barrier(len(requests), timeout=10)
    seen = threading.local()

    def held(*args: Any, **kwargs: Any) -> Any:
        result = original(*args, **kwargs)
        if not getattr(seen, "held", False):  # once per request: a retry runs free
            seen.held = True
            barrier.wait()
        return result

    monkeypatch.setattr(module, name, held)
    replies: list[TestResponse | None] = [None] * len(requests)

    def send(i: int, method: str, url: str, body: dict[str, Any] | None) -> None:
        replies[i] = app.test_client().open(url, method=method, json=body,
                                            headers=headers or {})

    threads = [threading.Thread(target=send, args=(i, *request))
               for i, request in enumerate(requests)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert all(reply is not None for reply in replies), "a racing request never answered"
    return [reply for reply in replies if reply is not None]
