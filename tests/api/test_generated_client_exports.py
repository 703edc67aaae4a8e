"""The client openapi-python-client (pinned in the dev dependencies) generates from the
OpenAPI document does every job the browser does, against a real HTTP server: sign in by
the session cookie + CSRF header, mint a token and work by bearer token, create a project,
credential, model, dataset and case, start a run on the fake provider, read it, and
download every export (dataset CSV/JSONL, run JSON/CSV/JUnit, each experiment report
format) through the generated functions' parsed results. Issue 32 item 6: every export
once crashed in the client (text declared `format: binary` -> BytesIO(str)).

Generated offline into a temporary folder with no post hooks (no ruff run, nothing
downloaded). `Client.with_headers()` returns a client without the first one's cookie jar
(a generated-library behaviour the document cannot change): pass the login's cookies with
`cookies=` and the CSRF token with `headers=` instead, as below."""

from __future__ import annotations

import csv
import importlib
import io
import json
import subprocess
import sys
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any
from xml.etree import ElementTree

import pytest
from flask import Flask
from werkzeug.serving import make_server

from assay.core.auth.models import User
from assay.core.projects.models import Project
from assay.extensions import db
from assay.jobs.runs import execute_run
from assay.providers.fake import FakeProviderThread
from tests.experiment_seed import seed
from tests.factories import PASSWORD, Factory

GENERATOR = Path(sys.executable).parent / "openapi-python-client"
PACKAGE = "assay_generated_client"  # not tests/engine's name: both may be imported at once


@pytest.fixture(scope="module")
def package(app: Flask, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("client")
    document = folder / "openapi.json"
    document.write_text(json.dumps(app.test_client().get("/api/openapi.json").get_json()))
    config = folder / "config.yaml"
    config.write_text("post_hooks: []\n")  # no formatter: offline, and faster
    done = subprocess.run(
        [str(GENERATOR), "generate", "--path", str(document), "--meta", "none",
         "--output-path", str(folder / PACKAGE), "--config", str(config)],
        capture_output=True, text=True, timeout=180, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    sys.path.insert(0, str(folder))
    yield PACKAGE
    sys.path.remove(str(folder))
    for name in [m for m in sys.modules if m == PACKAGE or m.startswith(PACKAGE + ".")]:
        del sys.modules[name]


@pytest.fixture(scope="module")
def base_url(app: Flask) -> Iterator[str]:
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()


class Api:
    def __init__(self, package: str):
        self.package = package
        self.c = importlib.import_module(package)
        self.models = importlib.import_module(f"{package}.models")
        self.types = importlib.import_module(f"{package}.types")

    def op(self, tag: str, name: str) -> ModuleType:  # api/<tag>/<operationId>.py
        return importlib.import_module(f"{self.package}.api.{tag}.{name}")


def _ok(result: Any, kind: str) -> Any:
    assert type(result).__name__ == kind, result
    return result


def _download(api: Api, tag: str, name: str, client: Any, **kwargs: Any) -> tuple[Any, bytes]:
    """The generated function's parsed result (what a caller of sync() gets) and the bytes."""
    response = api.op(tag, name).sync_detailed(client=client, **kwargs)
    assert response.status_code == 200, (name, kwargs, response.content[:300])
    return response.parsed, response.content


def test_a_generated_client_signs_in_both_ways_runs_and_downloads_every_export(
        package: str, base_url: str, factory: Factory,
        fake_provider: FakeProviderThread) -> None:
    api, m = Api(package), Api(package).models
    owner = factory.user()

    # 1. cookie + CSRF: the login's cookie jar and its csrf_token, passed to a new client
    anonymous = api.c.Client(base_url=base_url, raise_on_unexpected_status=True)
    login = _ok(api.op("auth", "auth_login").sync(
        client=anonymous, body=m.Login(email=owner.email, password=PASSWORD)), "LoginResult")
    browser = api.c.Client(base_url=base_url, raise_on_unexpected_status=True,
                           cookies=dict(anonymous.get_httpx_client().cookies),
                           headers={"X-CSRF-Token": login.csrf_token})
    _ok(api.op("auth", "auth_me").sync(client=browser), "User")
    token = _ok(api.op("auth", "tokens_create").sync(
        client=browser, body=m.TokenCreate(name="generated")), "TokenCreated").token

    # 2. bearer token
    client = api.c.AuthenticatedClient(base_url=base_url, token=token,
                                       raise_on_unexpected_status=True)
    project = _ok(api.op("projects", "projects_create").sync(
        client=client, body=m.ProjectCreate(name="Generated")), "Project")
    pid = project.id
    credential = _ok(api.op("credentials", "credentials_create").sync(
        client=client, project_id=pid, body=m.CredentialCreate.from_dict({
            "kind": "fake", "label": "Fake", "base_url": fake_provider.url})), "Credential")
    model = _ok(api.op("models", "models_create").sync(
        client=client, project_id=pid, body=m.ModelCreate.from_dict({
            "name": "Fake fast", "credential_id": credential.id, "model": "fake-fast"})),
        "Model")
    dataset = _ok(api.op("datasets", "datasets_create").sync(
        client=client, project_id=pid, body=m.DatasetCreate.from_dict({
            "name": "Questions", "kind": "questions",
            "cases": [{"input": {"question": "What is 2 + 2?"}}]})), "Dataset")
    api.op("datasets", "cases_create").sync(
        client=client, project_id=pid, dataset_id=dataset.id,
        body=m.CaseWrite.from_dict({"input": {"question": "Name a primary colour."}}))
    run = _ok(api.op("runs", "runs_create").sync(
        client=client, project_id=pid, body=m.RunCreate.from_dict({
            "dataset_id": dataset.id, "targets": [{"model_id": model.id}]})), "Run")
    execute_run(run.id)  # no worker in this suite: the queued job, run here
    run = _ok(api.op("runs", "runs_get").sync(client=client, project_id=pid, run_id=run.id),
              "Run")
    assert str(run.status) == "completed" and run.succeeded == run.total == 2, run
    outputs = _ok(api.op("runs", "runs_outputs_list").sync(
        client=client, project_id=pid, run_id=run.id), "OutputPage")
    assert len(outputs.items) == 2 and all(o.text for o in outputs.items)

    # 3. every export, read through the generated parse (text formats come back as str)
    formats = m.DatasetsExportFormat
    text, _ = _download(api, "dataset_transfer", "datasets_export", client, project_id=pid,
                        dataset_id=dataset.id, format_=formats.CSV)
    assert isinstance(text, str) and len(list(csv.DictReader(io.StringIO(text)))) == 2
    text, _ = _download(api, "dataset_transfer", "datasets_export", client, project_id=pid,
                        dataset_id=dataset.id, format_=formats.JSONL)
    assert [json.loads(line)["input"] for line in text.splitlines()] == [
        {"question": "What is 2 + 2?"}, {"question": "Name a primary colour."}]

    run_formats = m.RunsExportFormat
    text, _ = _download(api, "run_exports", "runs_export", client, project_id=pid,
                        run_id=run.id, format_=run_formats.JSON)
    assert len(json.loads(text)["outputs"]) == 2
    text, _ = _download(api, "run_exports", "runs_export", client, project_id=pid,
                        run_id=run.id, format_=run_formats.CSV)
    assert len(list(csv.DictReader(io.StringIO(text)))) == 2
    text, _ = _download(api, "run_exports", "runs_export", client, project_id=pid,
                        run_id=run.id, format_=run_formats.JUNIT)
    assert len(ElementTree.fromstring(text).iter("testcase").__next__().attrib) > 0

    # the experiment report's formats, binary ones included, come back as a File of bytes
    with db.factory() as session:
        found = seed(session, session.get(User, owner.id), session.get(Project, pid),
                     fake_provider.url, iterations=2, cases=6, peak=1)
        session.commit()
    files: dict[str, bytes] = {}
    for fmt in m.ExperimentExportFormat:
        parsed, raw = _download(api, "experiment_reports", "experiment_reports_export",
                                client, project_id=pid, experiment_id=found.experiment_id,
                                format_=fmt)
        assert isinstance(parsed, api.types.File), (fmt, parsed)
        files[fmt.value] = parsed.payload.read()
        assert files[fmt.value] == raw and raw, fmt
    assert files["pdf"].startswith(b"%PDF")
    assert zipfile.ZipFile(io.BytesIO(files["bundle"])).namelist()
    assert list(csv.reader(io.StringIO(files["csv"].decode())))
    assert files["md"].decode().startswith("#") and files["prompt-txt"].decode()
