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
        from assay.core.runs.service import create_run, progress
        from assay.events.publish import FINISHED
        from assay.jobs.runs import execute_run
        from assay.runtime import current
        from assay.seeds import demo_cases

        with db.factory() as session:
            actor, found = session.merge(owner), session.merge(project)
            models = ensure_demo_models(session, actor, found, self.settings.fake_provider_url)
            dataset = ensure_demo_dataset(session, actor, found, demo_cases())
            run = create_run(session, actor, found, dataset.id, [m.id for m in models])
            run_id = run.id
            if not execute:
                now = utcnow()
                session.execute(update(Run).where(Run.id == run_id).values(
                    status=RunStatus.completed, started_at=now, finished_at=now))
            session.commit()
            if not execute:  # its progress stream ends like a real run's
                session.refresh(run)
                current().publish(run_id, FINISHED, progress(run))
        if execute:
            execute_run(run_id)
        return run_id

    def api_token(self, user: User) -> str:
        with db.factory() as session:
            _, plaintext = create_api_token(session, session.merge(user), "test")
            session.commit()
            return plaintext


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
