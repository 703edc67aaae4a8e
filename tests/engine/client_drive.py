"""Drive one run through a client generated from the OpenAPI document, with no hand-written
HTTP: sign up, sign in (cookie + CSRF) to mint an API token, then with the token create a
project, a fake-provider credential and model, a dataset with cases and a run; wait for the
run to finish and read its outputs.

    python -m tests.engine.client_drive <client package dir> <API base URL> <fake URL>

`tests/engine/test_generated_client.py` generates the package and runs `drive` against a
live server and worker.
"""

from __future__ import annotations

import importlib
import sys
import time
import uuid
from pathlib import Path
from types import ModuleType
from typing import Any

TERMINAL = {"completed", "partial", "failed", "cancelled", "budget_exceeded"}
QUESTIONS = ["What is 2 + 2?", "Name a primary colour.", "What is the capital of France?"]


def _ok(result: Any, kind: str) -> Any:
    """The parsed success body; an Error (or nothing) fails with what the server said."""
    if result is None or type(result).__name__ != kind:
        raise AssertionError(f"expected {kind}, got {result!r}")
    return result


def drive(package: str, base_url: str, fake_url: str, timeout_s: float = 60.0) -> dict[str, Any]:
    c = importlib.import_module(package)
    api: dict[str, ModuleType] = {}

    def op(tag: str, name: str) -> Any:  # api/<tag>/<operationId>.py
        if name not in api:
            api[name] = importlib.import_module(f"{package}.api.{tag}.{name}")
        return api[name]

    models = importlib.import_module(f"{package}.models")
    email, password = f"client-{uuid.uuid4().hex[:8]}@example.com", "Generated-client-1!"

    anonymous = c.Client(base_url=base_url, raise_on_unexpected_status=True)
    _ok(op("auth", "auth_register").sync(client=anonymous, body=models.Register(
        email=email, password=password, confirm_password=password, name="Client")),
        "LoginResult")  # registering signs in too; signing in again works as well
    signed_in = _ok(op("auth", "auth_login").sync(client=anonymous, body=models.Login(
        email=email, password=password)), "LoginResult")
    # signed in by the session cookie; with it, unsafe methods need the CSRF header
    browser = c.Client(base_url=base_url, raise_on_unexpected_status=True,
                       cookies=dict(anonymous.get_httpx_client().cookies),
                       headers={"X-CSRF-Token": signed_in.csrf_token})
    token = _ok(op("auth", "tokens_create").sync(client=browser, body=models.TokenCreate(
        name="generated client")), "TokenCreated").token

    client = c.AuthenticatedClient(base_url=base_url, token=token,
                                   raise_on_unexpected_status=True)
    project = _ok(op("projects", "projects_create").sync(client=client, body=models.ProjectCreate(
        name="Generated client")), "Project")
    credential = _ok(op("credentials", "credentials_create").sync(
        client=client, project_id=project.id, body=models.CredentialCreate.from_dict({
            "kind": "fake", "label": "Fake", "base_url": fake_url})), "Credential")
    model = _ok(op("models", "models_create").sync(
        client=client, project_id=project.id, body=models.ModelCreate.from_dict({
            "name": "Fake fast", "credential_id": credential.id, "model": "fake-fast",
            "input_price_per_mtok_micros": 150_000,
            "output_price_per_mtok_micros": 600_000})), "Model")
    dataset = _ok(op("datasets", "datasets_create").sync(
        client=client, project_id=project.id, body=models.DatasetCreate.from_dict({
            "name": "Questions", "kind": "questions",
            "cases": [{"input": {"question": q}} for q in QUESTIONS]})), "Dataset")
    run = _ok(op("runs", "runs_create").sync(
        client=client, project_id=project.id, body=models.RunCreate.from_dict({
            "dataset_id": dataset.id, "targets": [{"model_id": model.id}]})), "Run")

    deadline = time.monotonic() + timeout_s
    while str(run.status) not in TERMINAL:
        assert time.monotonic() < deadline, f"run still {run.status} after {timeout_s} s"
        time.sleep(0.2)
        run = _ok(op("runs", "runs_get").sync(client=client, project_id=project.id,
                                               run_id=run.id), "Run")
    outputs = _ok(op("runs", "runs_outputs_list").sync(
        client=client, project_id=project.id, run_id=run.id), "OutputPage")
    summary = _ok(op("runs", "runs_summary").sync(client=client, project_id=project.id,
                                                   run_id=run.id), "RunSummary")
    return {"status": str(run.status), "succeeded": run.succeeded, "total": run.total,
            "outputs": [o.to_dict() for o in outputs.items], "summary": summary.to_dict()}


if __name__ == "__main__":
    folder, base, fake = sys.argv[1:4]
    sys.path.insert(0, str(Path(folder).resolve().parent))
    result = drive(Path(folder).name, base, fake)
    print(result["status"], f"{result['succeeded']}/{result['total']} cells succeeded")
