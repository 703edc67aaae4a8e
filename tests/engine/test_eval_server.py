"""`assay eval --server`: the config's credentials, models, dataset, prompt, scorers and run
are created on a live server through its HTTP API, a real worker runs it, progress comes
from the SSE stream and the command prints the run's URL and exits as a local run would."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from sqlalchemy import func, select

from assay.cli import main
from assay.core.llm.models import ModelConfig
from assay.core.runs.models import Output, Run
from assay.extensions import db
from assay.providers.fake import FakeProviderThread
from tests.factories import Factory

CONFIG = """\
prompts:
  - name: ask
    template: "Answer: {{{{question}}}}"
providers:
  - name: fake
    kind: fake
    base_url: {url}
{extra}models:
  - name: fast
    provider: fake
    model: fake-fast
    params: {{temperature: 0}}
    input_price_per_mtok: 1
    output_price_per_mtok: 1
tests:
  - vars: {{question: question 1}}
  - vars: {{question: question 2}}
  - vars: {{question: question 3}}
scorers:
  - name: says
    kind: icontains
    params: {{value: {value}}}
settings:
  max_retries: 0
"""


def _eval(tmp_path: Path, live_url: str, token: str, project: int, text: str,
          *extra: str) -> Any:
    path = tmp_path / "assay.yaml"
    path.write_text(text)
    return CliRunner().invoke(main, ["eval", str(path), "--server", live_url, "--project",
                                     str(project), *extra],
                              env={"ASSAY_TOKEN": token, "ASSAY_FAKE_PROVIDER_URL": "",
                                   "COLUMNS": "160"})  # the table's rows on one line each


def test_eval_on_a_live_server(tmp_path: Path, factory: Factory, live_url: str,
                               worker: subprocess.Popen[bytes],
                               fake_provider: FakeProviderThread) -> None:
    owner = factory.user()
    project = factory.project(owner)
    token = factory.api_token(owner)
    text = CONFIG.format(url=fake_provider.url, extra="", value="question")
    result = _eval(tmp_path, live_url, token, project.id, text)
    assert result.exit_code == 0, result.output
    with db.factory() as session:
        run = session.scalars(select(Run).where(Run.project_id == project.id)).one()
        assert run.status == "completed" and run.succeeded == 3
        assert f"{live_url}/projects/{project.id}/runs/{run.id}" in result.output
    # the results table, from the server's statistics and summary: the scorer's mean with
    # its interval and pass rate, then the target's calls
    table = result.output[result.output.index(f"run {run.id}: completed"):]
    row = next(line for line in table.splitlines() if "says" in line)
    assert row.split("│")[1].strip() == "fast · ask v1", row  # as the config names them
    assert "1.000" in row and "100.0% (3/3)" in row and "3/0" in row, table  # all said it
    # a second eval reuses the credential and the model (the same ones); a failing check
    # is exit 1
    failing = CONFIG.format(url=fake_provider.url, extra="", value="zzzz")
    second = _eval(tmp_path, live_url, token, project.id, failing, "-q")
    assert second.exit_code == 1, second.output
    with db.factory() as session:
        assert session.scalar(select(func.count()).select_from(ModelConfig).where(
            ModelConfig.project_id == project.id)) == 1
    # provider errors: exit 4
    broken = CONFIG.format(url=fake_provider.url, value="question",
                           extra="    headers: {X-Fake-Fault: '500'}\n")
    result = _eval(tmp_path, live_url, token, project.id, broken, "-q", "--no-cache")
    assert result.exit_code == 4, result.output
    with db.factory() as session:
        assert session.scalar(select(func.count()).select_from(Output).join(Run).where(
            Run.project_id == project.id, Output.status == "failed")) == 3


def test_server_mode_needs_a_token_and_a_project(tmp_path: Path, live_url: str,
                                                 fake_provider: FakeProviderThread) -> None:
    text = CONFIG.format(url=fake_provider.url, extra="", value="question")
    assert _eval(tmp_path, live_url, "", 1, text).exit_code == 2
    result = _eval(tmp_path, live_url, "not-a-token", 1, text)
    assert result.exit_code == 2 and "401" in result.output


def test_push_a_local_run_to_a_live_server(tmp_path: Path, factory: Factory, live_url: str,
                                           worker: subprocess.Popen[bytes],
                                           fake_provider: FakeProviderThread) -> None:
    import time

    from assay.core.evalcli import runfiles
    from assay.core.scoring.models import Score

    owner = factory.user()
    project = factory.project(owner)
    token = factory.api_token(owner)
    path = tmp_path / "assay.yaml"
    path.write_text(CONFIG.format(url=fake_provider.url, extra="", value="question"))
    runs_dir = tmp_path / "runs"
    local = CliRunner().invoke(main, ["eval", str(path), "-q", "--runs-dir", str(runs_dir)],
                               env={"ASSAY_FAKE_PROVIDER_URL": ""})
    assert local.exit_code == 0, local.output
    data = runfiles.read_run(runfiles.resolve(runs_dir, "latest"))
    pushed = CliRunner().invoke(main, ["push", "latest", "--runs-dir", str(runs_dir),
                                       "--server", live_url, "--project", str(project.id)],
                                env={"ASSAY_TOKEN": token})
    assert pushed.exit_code == 0, pushed.output
    assert f"{live_url}/projects/{project.id}/runs/" in pushed.output
    deadline = time.monotonic() + 120
    while True:  # the recorded replies are scored by a scoring job after the run is done
        with db.factory() as session:
            run = session.scalars(select(Run).where(Run.project_id == project.id)).one()
            scored = session.scalar(select(func.count()).select_from(Score).where(
                Score.run_id == run.id))
            if (run.status == "completed" and scored == 3) or time.monotonic() > deadline:
                break
        time.sleep(0.5)
    assert run.status == "completed" and run.name == f"{data.id} · fast"
    with db.factory() as session:
        texts = sorted(session.scalars(select(Output.text).where(Output.run_id == run.id)))
        scores = session.scalars(select(Score.passed).where(Score.run_id == run.id)).all()
    assert texts == sorted(r["text"] for r in data.responses)  # the local replies, not new calls
    assert len(scores) == 3 and all(scores)  # scored on the server by the same scorer


def test_push_needs_a_token(tmp_path: Path, live_url: str) -> None:
    from assay.core.evalcli.fixture import write_fixture_run

    write_fixture_run(tmp_path, outputs=4, models=2)
    result = CliRunner().invoke(main, ["push", "latest", "--runs-dir", str(tmp_path),
                                       "--server", live_url, "--project", "1"],
                                env={"ASSAY_TOKEN": ""})
    assert result.exit_code == 2 and "ASSAY_TOKEN" in result.output
