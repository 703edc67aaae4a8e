"""Cancel means stop, for the jobs beside a run's shards: a run's scoring job (judges added
to a finished run), its pairwise comparisons, a generation job, and a project deleted with
a run in flight. Each is cancelled over HTTP with calls in flight on a slow fake provider
and a real worker: the provider sees those requests closed, the job ends cancelled
promptly, and what was spent (the counters and the ledger) is exactly what the provider
answered: its tokens at a micro-dollar each."""

from __future__ import annotations

import json
import subprocess
import threading
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select

from assay.core.auth.models import User
from assay.core.experiments.models import Experiment
from assay.core.generation import store
from assay.core.llm.models import Credential, ModelConfig
from assay.core.llm.service import ensure_demo_models
from assay.core.projects.models import Membership, Project, Role
from assay.core.reports.models import SpendDay
from assay.core.runs.models import Output, Run, RunTarget
from assay.core.scoring.models import Comparison, Score
from assay.extensions import db
from assay.jobs import stops
from assay.jobs.experiments import advance
from assay.providers.fake import FakeProviderThread
from assay.runtime import current
from tests.api.test_comparisons import pairwise_scorer
from tests.engine.experiment_setup import build, iterations, recorded  # noqa: F401
from tests.engine.test_cancel_in_flight import PROMPT_S, SLOW_MS, a_slow_run, set_fake, wait
from tests.engine.test_control_live import CASES
from tests.engine.test_experiment_loop import Calls, drive, url
from tests.engine.test_experiment_pairwise import _to_second_run
from tests.engine.test_providers_engine import configure, fake, stats  # noqa: F401
from tests.factories import Factory

RUBRIC = {"criteria": [
    {"name": "Accuracy", "description": "The answer is factually right.", "weight": 0.5,
     "scale": "1-5"},
    {"name": "Clarity", "description": "The answer is easy to follow.", "weight": 0.5,
     "scale": "1-5"}]}


def per_token(project_id: int) -> None:
    """One micro-dollar a token in and out: the bill is the provider's own token count."""
    with db.factory() as session:
        for model in session.scalars(select(ModelConfig).where(
                ModelConfig.project_id == project_id)):
            model.input_price_per_mtok_micros = model.output_price_per_mtok_micros = 1_000_000
        session.commit()


def some_answer_then_slow(fake: FakeProviderThread) -> None:  # noqa: F811
    """From now on: counts from zero, replies spread over a minute (a first one soon)."""
    httpx.post(f"{fake.url}/_fake/reset").raise_for_status()
    set_fake(fake, latency_ms=SLOW_MS / 2, jitter_ms=SLOW_MS / 2 - 200, seed=3)


def provider_bill(fake: FakeProviderThread) -> int:  # noqa: F811
    seen = stats(fake)
    return int(seen["tokens_in"]) + int(seen["tokens_out"])


def closed_and_billed(fake: FakeProviderThread) -> dict[str, Any]:  # noqa: F811
    """Once nothing is in flight: every call the provider did not answer was closed."""
    wait(lambda: stats(fake)["in_flight"] == 0, "the requests closed", PROMPT_S)
    seen = stats(fake)
    assert seen["answered"] >= 1
    assert seen["disconnected"] == seen["total"] - seen["answered"] >= 1, seen
    return seen


def ledger(project_id: int, kind: str) -> tuple[int, int, int]:
    """(calls, micro-dollars, tokens) the ledger holds for the project's `kind`."""
    with db.factory() as session:
        row = session.execute(select(
            func.coalesce(func.sum(SpendDay.calls), 0),
            func.coalesce(func.sum(SpendDay.spent_micros), 0),
            func.coalesce(func.sum(SpendDay.tokens_in + SpendDay.tokens_out), 0)).where(
            SpendDay.project_id == project_id, SpendDay.kind == kind)).one()
    return int(row[0]), int(row[1]), int(row[2])


def run_events(run_id: int, kind: str) -> list[dict[str, Any]]:
    rt = current()
    return [json.loads(fields[b"data"]) for _, fields in rt.redis.xrange(rt.events_key(run_id))
            if fields[b"type"].decode() == kind]


def finished(factory: Factory, fake: FakeProviderThread  # noqa: F811
             ) -> tuple[Project, int, httpx.Client]:
    """A run of 12 cases on 2 models, executed and over, priced a micro-dollar a token;
    and an editor's client on the live server."""
    configure(fake, latency_ms=0)
    owner = factory.user()
    project = factory.project(owner, "Cancelled jobs")
    run_id = factory.finished_run(owner, project, execute=True)
    per_token(project.id)
    return project, run_id, httpx.Client(
        headers={"Authorization": f"Bearer {factory.api_token(owner)}"}, timeout=30)


def no_holds(run_id: int, project_id: int) -> Run:
    with db.factory() as session:
        run, project = session.get(Run, run_id), session.get(Project, project_id)
        assert run is not None and project is not None
        assert run.reserved_micros == run.scoring_reserved_micros == 0
        assert project.reserved_micros == 0
        return run


def test_cancelling_a_scoring_job_closes_its_judges_calls_and_bills_what_answered(
        factory: Factory, live_url: str, worker: subprocess.Popen[bytes],
        fake: FakeProviderThread) -> None:  # noqa: F811
    project, run_id, client = finished(factory, fake)
    judge = factory.scorer(project, "Judge", "llm_judge",
                           {"judges": ["Fake Fast"], "rubric": RUBRIC})[1]
    base = f"{live_url}/api/projects/{project.id}/runs/{run_id}/scorers"
    some_answer_then_slow(fake)
    assert client.post(base, json={"scorer_version_ids": [judge]}).status_code == 202
    wait(lambda: stats(fake)["answered"] >= 1, "a first verdict", 90)
    asked = time.monotonic()
    cancelled = client.post(f"{base}/cancel")
    assert cancelled.status_code == 202 and cancelled.json() == {
        "run_id": run_id, "stopping": True}
    seen = closed_and_billed(fake)
    wait(lambda: bool(run_events(run_id, "run.scoring_finished")), "the job ended", PROMPT_S)
    assert time.monotonic() - asked < PROMPT_S
    (final,) = run_events(run_id, "run.scoring_finished")
    with db.factory() as session:
        scores = session.scalar(select(func.count()).select_from(Score).where(
            Score.run_id == run_id, Score.scorer_version_id == judge))
    # one judge call an output: each verdict the provider gave is a score, and no more
    assert final["stopped"] == "cancelled" and final["scores"] == scores == seen["answered"]
    run = no_holds(run_id, project.id)
    bill = provider_bill(fake)
    assert run.judge_spent_micros == bill > 0
    assert ledger(project.id, "judges") == (seen["answered"], bill, bill)
    assert client.post(f"{base}/cancel").json()["stopping"] is False  # nothing left to stop


def test_cancelling_pairwise_comparisons_closes_the_judges_calls_and_bills_what_answered(
        factory: Factory, live_url: str, worker: subprocess.Popen[bytes],
        fake: FakeProviderThread) -> None:  # noqa: F811
    project, run_id, client = finished(factory, fake)
    with db.factory() as session:
        targets = list(session.scalars(select(RunTarget.id).where(
            RunTarget.run_id == run_id).order_by(RunTarget.position)))
    base = f"{live_url}/api/projects/{project.id}/runs/{run_id}/comparisons"
    some_answer_then_slow(fake)
    started = client.post(base, json={"scorer_id": pairwise_scorer(project.id),
                                      "target_a_id": targets[0], "target_b_id": targets[1]})
    assert started.status_code == 202 and started.json()["pairs"] == 12, started.text
    wait(lambda: stats(fake)["answered"] >= 1, "a first verdict", 90)
    cancelled = client.post(f"{base}/cancel")
    assert cancelled.status_code == 202 and cancelled.json()["stopping"] is True
    seen = closed_and_billed(fake)
    wait(lambda: any(e.get("stopped") == "cancelled" for e in run_events(
        run_id, "run.compared")), "the job ended", PROMPT_S)
    with db.factory() as session:
        rows = session.scalar(select(func.count()).select_from(Comparison).where(
            Comparison.run_id == run_id))
    # a pair is kept once both its orders are in: never more pairs than replies halved
    assert rows is not None and rows <= seen["answered"] // 2
    no_holds(run_id, project.id)
    bill = provider_bill(fake)
    # every judge call the provider answered is paid, the pairs left unjudged included
    assert ledger(project.id, "pairwise_targets") == (seen["answered"], bill, bill)
    assert bill > 0


def test_cancelling_a_generation_job_closes_its_batches_and_bills_what_answered(
        factory: Factory, live_url: str, worker: subprocess.Popen[bytes],
        fake: FakeProviderThread) -> None:  # noqa: F811
    owner = factory.user()
    project = factory.project(owner, "Generating")
    with db.factory() as session:
        models = ensure_demo_models(session, session.merge(owner), session.merge(project),
                                    factory.settings.fake_provider_url)
        session.commit()
        model_id = models[0].id
    per_token(project.id)
    client = httpx.Client(headers={"Authorization": f"Bearer {factory.api_token(owner)}"},
                          timeout=30)
    base = f"{live_url}/api/projects/{project.id}/generation"
    some_answer_then_slow(fake)
    started = client.post(f"{base}/questions", json={  # 4 batches of 25, all at once
        "model_id": model_id, "count": 100, "topic": "deltas"})
    assert started.status_code == 202, started.text
    job_id = started.json()["id"]
    wait(lambda: stats(fake)["answered"] >= 1, "a first batch", 90)
    cancelled = client.post(f"{base}/{job_id}/cancel")
    assert cancelled.status_code == 202, cancelled.text
    seen = closed_and_billed(fake)
    wait(lambda: client.get(f"{base}/{job_id}").json()["status"] == "cancelled",
         "the job cancelled", PROMPT_S)
    job = client.get(f"{base}/{job_id}").json()
    assert job["error"].startswith("Cancelled after")
    bill = provider_bill(fake)
    assert job["cost_micros"] == bill > 0
    assert ledger(project.id, "generation") == (seen["answered"], bill, bill)
    with db.factory() as session:
        found = session.get(Project, project.id)
        assert found is not None and found.spent_micros == bill
    again = client.post(f"{base}/{job_id}/cancel")  # it has ended: nothing to stop
    assert again.status_code == 409, again.text
    assert again.json()["code"] == "JOB_ENDED"
    assert again.json()["errors"] == {"status": "cancelled"}
    assert seen["total"] == 4  # each batch asked once


def test_deleting_a_project_closes_its_runs_calls_in_flight(
        factory: Factory, settings: Any, fake: FakeProviderThread,  # noqa: F811
        live_url: str, worker: subprocess.Popen[bytes]) -> None:
    live = a_slow_run(factory, settings, fake, live_url)
    live.start()
    wait(lambda: stats(fake)["in_flight"] >= 1, "calls in flight")
    with db.factory() as session:
        owner = session.scalar(select(User).join(Membership).where(
            Membership.project_id == live.project_id, Membership.role == Role.owner))
        assert owner is not None
        token = factory.api_token(owner)
    deleted = httpx.delete(f"{live_url}/api/projects/{live.project_id}", timeout=30,
                           headers={"Authorization": f"Bearer {token}"})
    assert deleted.status_code == 204, deleted.text
    wait(lambda: stats(fake)["in_flight"] == 0, "the requests closed", PROMPT_S)
    wait(lambda: live.cells().get("running", 0) == 0, "the cells ended", PROMPT_S)
    seen = stats(fake)
    assert seen["answered"] == 0 and seen["disconnected"] == seen["total"] >= 1
    assert live.run().status == "cancelled" and live.cells() == {"skipped": CASES}
    assert live.run().spent_micros == 0


def test_pausing_an_iterations_judging_closes_its_pairwise_calls_and_bills_what_answered(
        factory: Factory, settings: Any, fake: FakeProviderThread,  # noqa: F811
        recorded: Calls) -> None:  # noqa: F811
    """The judging phase (pairwise against the previous iteration) on the test's own
    thread; the pause over the API reaches it through Redis, as from another machine."""
    b = build(factory, settings, fake, pairwise=True, stop={"max_iterations": 2}, cases=10)
    _to_second_run(b, factory, recorded)
    second = iterations(b.experiment_id)[1]
    assert second.status == "judging"
    per_token(b.project.id)
    some_answer_then_slow(fake)
    outcome: list[str] = []
    step = threading.Thread(target=lambda: outcome.append(advance(second.id)))
    step.start()
    wait(lambda: stats(fake)["answered"] >= 1, "a first verdict", 90)
    assert factory.login(b.owner).post(url(b, "/pause")).status_code == 200
    seen = closed_and_billed(fake)
    step.join(PROMPT_S)
    assert not step.is_alive() and outcome == ["paused"]
    assert iterations(b.experiment_id)[1].status == "judging"
    bill = provider_bill(fake)
    # every verdict the provider gave is paid for, in the judging phase and on the ledger
    assert ledger(b.project.id, "pairwise_judge") == (seen["answered"], bill, bill)
    with db.factory() as session:
        found, project = session.get(Experiment, b.experiment_id), session.get(
            Project, b.project.id)
        assert found is not None and project is not None
        assert found.reserved_micros == project.reserved_micros == 0
        rows = session.scalar(select(func.count()).select_from(Comparison).where(
            Comparison.run_id == second.run_id))
    assert rows is not None and rows <= seen["answered"] // 2

    set_fake(fake, latency_ms=0, jitter_ms=0)
    assert factory.login(b.owner).post(url(b, "/resume")).status_code == 200
    drive(recorded)
    second = iterations(b.experiment_id)[1]
    assert second.status == "completed"
    with db.factory() as session:
        assert session.scalar(select(func.count()).select_from(Comparison).where(
            Comparison.run_id == second.run_id)) == 10  # each pair once


def _scoring(factory: Factory, project: Project, run_id: int, client: httpx.Client,
             live_url: str) -> Callable[[], bool]:
    judge = factory.scorer(project, "Judge", "llm_judge",
                           {"judges": ["Fake Fast"], "rubric": RUBRIC})[1]
    base = f"{live_url}/api/projects/{project.id}/runs/{run_id}/scorers"
    assert client.post(base, json={"scorer_version_ids": [judge]}).status_code == 202
    return lambda: any(e.get("stopped") == "cancelled"
                       for e in run_events(run_id, "run.scoring_finished"))


def _pairwise(factory: Factory, project: Project, run_id: int, client: httpx.Client,
              live_url: str) -> Callable[[], bool]:
    with db.factory() as session:
        targets = list(session.scalars(select(RunTarget.id).where(
            RunTarget.run_id == run_id).order_by(RunTarget.position)))
    started = client.post(f"{live_url}/api/projects/{project.id}/runs/{run_id}/comparisons",
                          json={"scorer_id": pairwise_scorer(project.id),
                                "target_a_id": targets[0], "target_b_id": targets[1]})
    assert started.status_code == 202, started.text
    return lambda: any(e.get("stopped") == "cancelled"
                       for e in run_events(run_id, "run.compared"))


def _generation(factory: Factory, project: Project, run_id: int, client: httpx.Client,
                live_url: str) -> Callable[[], bool]:
    with db.factory() as session:
        model_id = session.scalars(select(ModelConfig.id).where(
            ModelConfig.project_id == project.id).order_by(ModelConfig.id)).first()
    started = client.post(f"{live_url}/api/projects/{project.id}/generation/questions",
                          json={"model_id": model_id, "count": 100, "topic": "deltas"})
    assert started.status_code == 202, started.text
    job_id, rt = started.json()["id"], current()
    return lambda: (store.load(rt.redis, rt.settings.redis_prefix, job_id) or {}).get(
        "status") == store.CANCELLED


def _written(project_id: int, run_id: int) -> tuple[Any, ...]:
    """Everything a job of the project writes: scores, comparisons, the ledger, spend."""
    with db.factory() as session:
        project = session.get(Project, project_id)
        assert project is not None
        return (session.scalar(select(func.count()).select_from(Score).where(
                    Score.run_id == run_id)),
                session.scalar(select(func.count()).select_from(Comparison).where(
                    Comparison.run_id == run_id)),
                session.execute(select(func.sum(SpendDay.calls), func.sum(
                    SpendDay.spent_micros)).where(SpendDay.project_id == project_id)).one(),
                project.spent_micros)


@pytest.mark.parametrize(("start", "kind"), [(_scoring, "judges"),
                                             (_pairwise, "pairwise_targets"),
                                             (_generation, "generation")])
def test_deleting_a_project_stops_its_jobs_in_flight_and_bills_what_answered(
        factory: Factory, live_url: str, worker: subprocess.Popen[bytes],
        fake: FakeProviderThread, start: Any, kind: str) -> None:  # noqa: F811
    """Not its runs only: a scoring job, pairwise comparisons, a generation job."""
    project, run_id, client = finished(factory, fake)
    before = ledger(project.id, kind)
    some_answer_then_slow(fake)
    ended = start(factory, project, run_id, client, live_url)
    wait(lambda: stats(fake)["answered"] >= 1, "a first reply", 90)
    asked = time.monotonic()
    deleted = client.delete(f"{live_url}/api/projects/{project.id}")
    assert deleted.status_code == 204, deleted.text
    seen = closed_and_billed(fake)
    wait(ended, "the job ended cancelled", PROMPT_S)
    assert time.monotonic() - asked < PROMPT_S
    written = _written(project.id, run_id)
    no_holds(run_id, project.id)
    bill = provider_bill(fake)
    calls, spent, tokens = ledger(project.id, kind)
    assert (calls - before[0], spent - before[1], tokens - before[2]) == (
        seen["answered"], bill, bill) and bill > 0
    time.sleep(2 * stops.POLL_S + 1)  # nothing lands after the job said it ended
    assert _written(project.id, run_id) == written
    assert stats(fake)["total"] == seen["total"]


def slow_judge(project_id: int) -> str:
    """A third judge model on a credential of its own whose every reply takes a minute
    (the fake provider's per-request latency header): a cancel always cuts it."""
    with db.factory() as session:
        fast = session.scalars(select(ModelConfig).where(
            ModelConfig.project_id == project_id).order_by(ModelConfig.id)).first()
        assert fast is not None
        own = fast.credential
        credential = Credential(project_id=project_id, kind=own.kind, label="Slow judges",
                                base_url=own.base_url, secret_ciphertext=own.secret_ciphertext,
                                secret_last4=own.secret_last4, secret_env=own.secret_env,
                                config={**(own.config or {}),
                                        "headers": {"X-Fake-Latency-Ms": str(SLOW_MS)}})
        session.add(credential)
        session.flush()
        session.add(ModelConfig(project_id=project_id, credential_id=credential.id,
                                name="Slow Judge", model="fake-slow",
                                input_price_per_mtok_micros=1_000_000,
                                output_price_per_mtok_micros=1_000_000))
        session.commit()
    return "Slow Judge"


def test_cancelling_judges_that_answered_beside_a_cut_one_are_all_on_the_ledger(
        factory: Factory, live_url: str, worker: subprocess.Popen[bytes],
        fake: FakeProviderThread) -> None:  # noqa: F811
    """Three judges on each output, one of them slow: the cancel cuts the slow one on every
    output, and the two that answered are billed by the provider, so they are on the
    ledger and the run's spend, though no output got its scores."""
    project, run_id, client = finished(factory, fake)
    judges = ["Fake Fast", "Fake Smart", slow_judge(project.id)]
    judge = factory.scorer(project, "Three judges", "llm_judge",
                           {"judges": judges, "rubric": RUBRIC})[1]
    base = f"{live_url}/api/projects/{project.id}/runs/{run_id}/scorers"
    httpx.post(f"{fake.url}/_fake/reset").raise_for_status()
    set_fake(fake, latency_ms=0, jitter_ms=0)
    assert client.post(base, json={"scorer_version_ids": [judge]}).status_code == 202
    with db.factory() as session:
        outputs = session.scalar(select(func.count()).select_from(Output).where(
            Output.run_id == run_id))
    assert outputs == 24  # 12 cases on 2 models
    wait(lambda: stats(fake)["answered"] >= 2 * outputs and stats(fake)["in_flight"]
         >= outputs, "the fast judges' verdicts, the slow ones in flight", 90)
    assert client.post(f"{base}/cancel").status_code == 202
    seen = closed_and_billed(fake)
    wait(lambda: bool(run_events(run_id, "run.scoring_finished")), "the job ended", PROMPT_S)
    (final,) = run_events(run_id, "run.scoring_finished")
    assert final["stopped"] == "cancelled" and final["scores"] == 0
    assert seen["answered"] == 2 * outputs and seen["disconnected"] == outputs
    bill = provider_bill(fake)
    assert ledger(project.id, "judges") == (seen["answered"], bill, bill) and bill > 0
    run = no_holds(run_id, project.id)
    assert run.judge_spent_micros == bill
