"""Property-based fuzzing of the whole OpenAPI document with schemathesis, through the WSGI
app: every operation the document lists (nothing here names one), with valid and invalid
data, authenticated by the API token of a user who owns a project with a finished demo run.

No response may be a server error, and every response must match the document: status
code, content type and body schema. Invalid data must be refused with a 4xx.

Deleting operations run last, each on fresh data (a new owner, project, finished run and
token), so one that deletes the project or the token itself cannot starve the others.
ASSAY_FUZZ_EXAMPLES raises the number of examples per operation and mode for a deeper run.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import hypothesis
import pytest
import schemathesis
from flask import Flask
from hypothesis import HealthCheck, Phase
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    ignored_auth,
    negative_data_rejection,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)
from sqlalchemy import select

from assay.core.auth.models import ApiToken
from assay.core.projects.models import Project, Role
from assay.extensions import db
from tests.factories import Factory, first_output

EXAMPLES = int(os.environ.get("ASSAY_FUZZ_EXAMPLES") or 12)
STREAMS = {"text/event-stream"}  # bodies not described by a JSON schema

CONFORMANCE = [not_a_server_error, status_code_conformance, content_type_conformance,
               response_headers_conformance, response_schema_conformance, ignored_auth]
NEGATIVE = [not_a_server_error, negative_data_rejection, status_code_conformance,
            content_type_conformance, response_schema_conformance]


@dataclass
class Tenant:
    token: str
    ids: dict[str, int]  # real values for the path parameters known today

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}


def make_tenant(factory: Factory) -> Tenant:
    owner = factory.user()
    project: Project = factory.project(owner, "Fuzzed")
    run_id = factory.finished_run(owner, project, execute=True)
    member = factory.member(project, Role.editor)
    token = factory.api_token(owner)
    scorer_id, scorer_version_id = factory.scorer(project)
    with db.factory() as session:
        token_id = session.scalars(select(ApiToken.id).where(ApiToken.user_id == owner.id)).one()
    return Tenant(token=token, ids={"project_id": project.id, "run_id": run_id,
                                    "user_id": member.id, "token_id": token_id,
                                    "output_id": first_output(run_id), "scorer_id": scorer_id,
                                    "scorer_version_id": scorer_version_id})


def _streams_only(operation: Any) -> bool:
    """True when the operation's success body is a stream, not a JSON document."""
    for status, response in operation.definition.raw.get("responses", {}).items():
        if status.startswith("2") and set(response.get("content", {})) <= STREAMS:
            return True
    return False


def _deletes(operation: Any) -> bool:
    return bool(operation.method.upper() == "DELETE")


def _has_inputs(operation: Any) -> bool:
    return bool(list(operation.iter_parameters()) or list(operation.body or []))


def _path_names(operation: Any) -> set[str]:
    return {p.name for p in operation.path_parameters}


def _run(operation: Any, tenant: Tenant, mode: GenerationMode, checks: list[Any]) -> int:
    """Fuzz one operation in one mode; returns how many requests were made."""
    # Known ids reach resources that exist, not only 404s; others are generated.
    real_ids = {name: tenant.ids[name] for name in _path_names(operation) if name in tenant.ids}
    strategies = [operation.as_strategy(generation_mode=mode)]
    if real_ids:
        strategies.append(operation.as_strategy(generation_mode=mode, path_parameters=real_ids))
    excluded = [response_schema_conformance] if _streams_only(operation) else []
    calls = 0

    @hypothesis.settings(max_examples=EXAMPLES, deadline=None, database=None,
                         derandomize=True, phases=[Phase.explicit, Phase.generate],
                         suppress_health_check=list(HealthCheck), print_blob=True)
    @hypothesis.given(case=st.one_of(strategies))
    def fuzz(case: Any) -> None:
        nonlocal calls
        calls += 1
        response = case.call(headers=tenant.headers)
        case.validate_response(response, checks=[c for c in checks if c not in excluded],
                               headers=tenant.headers)

    fuzz()
    return calls


@pytest.fixture
def api_schema(app: Flask) -> Any:
    return schemathesis.openapi.from_wsgi("/api/openapi.json", app)


def test_the_document_has_operations(api_schema: Any) -> None:
    labels = [result.ok().label for result in api_schema.get_all_operations()]
    assert len(labels) >= 20 and len(labels) == len(set(labels))
    assert "GET /api/projects/{project_id}/runs/{run_id}/events" in labels


@pytest.fixture
def live_worker(app: Flask, settings: Any) -> Iterator[None]:
    """A registered RQ worker with a heartbeat: /api/ready answers 200 (its documented 503,
    no worker, is a 5xx that schemathesis's server-error check would flag)."""
    import redis
    from rq import Queue, Worker

    conn = redis.Redis.from_url(settings.redis_url or "")
    worker = Worker([Queue(settings.runs_queue, connection=conn)], connection=conn)
    worker.register_birth()
    worker.heartbeat()
    yield
    worker.register_death()


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE],
                         ids=["valid", "invalid"])
def test_fuzz_every_operation(api_schema: Any, factory: Factory, mode: GenerationMode,
                              live_worker: None) -> None:
    checks = CONFORMANCE if mode == GenerationMode.POSITIVE else NEGATIVE
    operations = [result.ok() for result in api_schema.get_all_operations()]
    operations.sort(key=lambda op: (_deletes(op), op.label))
    tenant = make_tenant(factory)
    calls = {}
    for operation in operations:
        if mode == GenerationMode.NEGATIVE and not _has_inputs(operation):
            continue  # nothing to make invalid
        if _deletes(operation):
            tenant = make_tenant(factory)
        calls[operation.label] = _run(operation, tenant, mode, checks)
    assert calls and all(count > 0 for count in calls.values()), calls
