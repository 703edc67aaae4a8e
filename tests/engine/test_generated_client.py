"""A client generated from the OpenAPI document by openapi-python-client (pinned in the dev
dependencies): it generates with no warning at all (a warning means a model or an operation
was dropped), and it drives a run end to end against a live server and worker
(tests/engine/client_drive.py), with no hand-written HTTP."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from flask import Flask

from assay.providers.fake import FakeProviderThread
from tests.engine.client_drive import drive

GENERATOR = Path(sys.executable).parent / "openapi-python-client"
PACKAGE = "assay_client"


@dataclass
class Generated:
    folder: Path
    output: str
    returncode: int


@pytest.fixture(scope="module")
def generated(app: Flask, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Generated]:
    folder = tmp_path_factory.mktemp("generated")
    document = folder / "openapi.json"
    document.write_text(json.dumps(app.test_client().get("/api/openapi.json").get_json()))
    config = folder / "config.yaml"
    config.write_text("post_hooks: []\n")  # no formatter run: faster, and nothing to warn
    done = subprocess.run(
        [str(GENERATOR), "generate", "--path", str(document), "--meta", "none",
         "--output-path", str(folder / PACKAGE), "--config", str(config)],
        capture_output=True, text=True, timeout=180, check=False)
    sys.path.insert(0, str(folder))
    yield Generated(folder, done.stdout + done.stderr, done.returncode)
    sys.path.remove(str(folder))
    for name in [m for m in sys.modules if m == PACKAGE or m.startswith(PACKAGE + ".")]:
        del sys.modules[name]


def test_the_client_generates_without_a_warning(generated: Generated) -> None:
    lines = [line for line in generated.output.splitlines() if line.strip()]
    assert generated.returncode == 0, generated.output
    assert lines == [f"Generating {generated.folder / PACKAGE}"], generated.output


def test_the_members_api_is_whole(generated: Generated) -> None:
    """Item 7: MemberRole's inline enum once collided with Member.role's, and the generator
    dropped Member and MemberPage; now both use the one Role enum."""
    models = generated.folder / PACKAGE / "models"
    assert (models / "member.py").exists() and (models / "member_page.py").exists()
    assert "role: Role" in (models / "member.py").read_text()
    assert "role: Role" in (models / "member_role.py").read_text()


def test_every_operation_has_a_function(generated: Generated, app: Flask) -> None:
    document: dict[str, Any] = app.test_client().get("/api/openapi.json").get_json()
    missing = []
    for item in document["paths"].values():
        for method, operation in item.items():
            if method == "parameters":
                continue
            tag = operation["tags"][0].replace("-", "_")
            module = generated.folder / PACKAGE / "api" / tag / f"{operation['operationId']}.py"
            if not module.exists():
                missing.append(f"{method.upper()} {operation['operationId']}")
    assert not missing


def test_the_generated_client_drives_a_run(generated: Generated, live_url: str,
                                           worker: Any,
                                           fake_provider: FakeProviderThread) -> None:
    assert generated.returncode == 0, generated.output
    result = drive(PACKAGE, live_url, fake_provider.url)
    assert result["status"] == "completed", result
    assert result["succeeded"] == result["total"] == 3
    assert len(result["outputs"]) == 3
    assert all(o["status"] == "succeeded" and o["text"] for o in result["outputs"]), result
