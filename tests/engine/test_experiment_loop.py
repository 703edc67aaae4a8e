"""The experiment loop on the fake provider with a scripted refiner, its jobs run in this
process step by step (the dispatches are recorded, then run): the whole loop with an edited
approval, a rejection and a convergence stop, then its final report and every export; each
stop rule; the cap on rejections; concurrent approvals; pause, resume and cancel at each
phase. Review goes through HTTP."""

from __future__ import annotations

import csv
import io
import subprocess
import zipfile
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import func, select

from assay.core.audit import AuditEvent
from assay.core.experiments import loop
from assay.core.experiments.models import ReviewComment, Suggestion
from assay.core.prompts.models import PromptVersion
from assay.core.runs.models import Run
from assay.extensions import db
from assay.jobs.experiments import advance
from assay.jobs.runs import execute_run
from assay.providers.fake import FakeProviderThread
from assay.settings import Settings
from tests.engine.experiment_setup import (
    D1,
    D2,
    E1,
    Built,
    build,
    experiment,
    iterations,
    recorded,  # noqa: F401
    reply,
)
from tests.engine.test_providers_engine import fake  # noqa: F401
from tests.factories import Factory

Calls = list[tuple[str, int]]


def drive(calls: Calls, until: str | None = None) -> None:
    """Run the recorded dispatches (and those they make) in this process; with `until`,
    stop before the first of that kind."""
    while calls:
        kind, ident = calls[0]
        if kind == until:
            return
        calls.pop(0)
        if kind == loop.RUN:
            execute_run(ident)
        else:
            advance(ident)


def url(b: Built, tail: str) -> str:
    return f"/api/projects/{b.project.id}/experiments/{b.experiment_id}{tail}"


def test_the_whole_loop_then_the_final_report_and_every_export(
        factory: Factory, settings: Settings, fake: FakeProviderThread,  # noqa: F811
        recorded: Calls, tmp_path: Path) -> None:  # noqa: F811
    """Three iterations (an approval edited by hand, a rejection, a convergence stop),
    then the final report of what the loop stored and every export of it, the bundle
    imported back into a new experiment."""
    b = build(factory, settings, fake, stop={"convergence_window": 3, "min_delta": 10.0},
              rejected=reply(D2, "Asks the model to admit doubt."))
    me = factory.login(b.owner)
    drive(recorded)
    first = iterations(b.experiment_id)[0]
    assert first.status == "awaiting_review" and first.composite is not None
    models = first.aggregate["models"]
    entry = next(iter(models.values()))
    assert entry["holdout"]["composite"]["n"] == 3 and entry["refinement"]["composite"]["n"] == 7
    assert first.weakest_criteria[0] == "Empathy"
    live = me.get(url(b, "/progress")).json
    assert live["iteration"]["suggestion_ready"] is True and live["spent_micros"] > 0
    s1 = me.get(url(b, "/iterations/1/suggestion")).json
    assert s1["diff"] == D1 and s1["status"] == "pending" and s1["exemplars"]
    assert {e["case_id"] for e in s1["exemplars"]} <= set(experiment(
        b.experiment_id).refinement_case_ids)  # the refiner never saw a held-out case
    # edited by hand, then approved
    bad = me.post(url(b, "/iterations/1/edit"), json={"diff": "not a diff"})
    assert bad.status_code == 422 and "diff" in bad.json["errors"]["json"]
    assert me.post(url(b, "/iterations/1/edit"), json={"diff": E1}).json["diff"] == E1
    assert me.post(url(b, "/iterations/1/comments"),
                   json={"body": "Warmer, but keep it short"}).status_code == 201
    approved = me.post(url(b, "/iterations/1/approve"), json={})
    assert approved.status_code == 200, approved.json
    assert approved.json["next_iteration"] == 2
    with db.factory() as session:
        v2 = session.get(PromptVersion, approved.json["prompt_version_id"])
        assert v2 is not None and "say sorry for the trouble" in v2.template
        assert v2.parent_id == first.prompt_version_id and v2.created_by == b.owner.id
        # a hand-edited approval has its own changelog line
        assert v2.note and v2.note.startswith("Iteration 1, edited by hand:")
    drive(recorded)
    second = iterations(b.experiment_id)[1]
    e2 = experiment(b.experiment_id)
    assert second.status == "awaiting_review", (e2.stop_reason, e2.stop_detail)
    assert set(second.aggregate["delta"][next(iter(models))]) == {"all", "refinement",
                                                                  "holdout"}
    # rejected: a reason is required; the refiner is asked again, told why
    assert me.post(url(b, "/iterations/2/reject"), json={"reason": ""}).status_code == 422
    rejected = me.post(url(b, "/iterations/2/reject"), json={"reason": "Too vague"})
    assert rejected.status_code == 200 and rejected.json["status"] == "rejected"
    drive(recorded)
    again = me.get(url(b, "/iterations/2/suggestion")).json
    assert again["diff"] == D2 and again["status"] == "pending"
    assert me.post(url(b, "/iterations/2/approve"), json={}).json["next_iteration"] == 3
    drive(recorded)
    third = iterations(b.experiment_id)[2]
    done = experiment(b.experiment_id)
    assert third.status == "completed"
    assert done.status == "completed" and done.stop_reason == "converged"
    assert done.stop_detail and "Converged" in done.stop_detail
    assert done.refinement_micros > 0 and done.execution_micros > 0 and done.judging_micros > 0
    with db.factory() as session:
        runs = session.scalars(select(Run).where(Run.id.in_(
            [i.run_id for i in iterations(b.experiment_id)]))).all()
        assert sum(r.spent_micros for r in runs) == done.execution_micros + done.judging_micros
        actions = set(session.scalars(select(AuditEvent.action).where(
            AuditEvent.target_id == str(b.experiment_id))))
        assert {"suggestion.edited", "suggestion.approved", "suggestion.rejected",
                "suggestion.commented", "experiment.completed"} <= actions
        kinds = session.scalars(select(ReviewComment.kind)).all()
        assert {"edit", "comment", "approve", "reject"} <= set(kinds)
    _report_and_every_export(me, b, tmp_path)


def _report_and_every_export(me: Any, b: Built, tmp_path: Path) -> None:
    its, done = iterations(b.experiment_id), experiment(b.experiment_id)
    report = me.get(url(b, "/report")).json
    assert report["experiment"]["stop_reason"] == "converged"
    rows = report["iterations"]
    assert [r["number"] for r in rows] == [1, 2, 3]
    for row, it in zip(rows, its, strict=True):  # the loop's own numbers, with intervals
        best = it.aggregate["best_model"]
        assert row["all"] == it.aggregate["models"][best]["all"]["composite"]
        assert row["all"]["low"] <= row["all"]["mean"] <= row["all"]["high"]
        assert row["holdout"]["n"] == 3 and row["refinement"]["n"] == 7
    assert rows[1]["win_rate"]["source"] == "composite" and rows[1]["win_rate"]["n"] == 10
    assert report["best"]["chosen_on"] == "holdout"
    fvl = report["first_vs_last"]
    assert (fvl["first"], fvl["last"]) == (1, 3) and fvl["all"]["n"] == 10
    assert fvl["holdout"]["verdict"] and fvl["holdout"]["n"] == 3
    assert report["cost"] == {
        "execution_micros": done.execution_micros, "judging_micros": done.judging_micros,
        "refinement_micros": done.refinement_micros, "assist_micros": done.assist_micros,
        "total_micros": done.spent_micros}
    assert report["weak_criteria"][0]["name"] == "Empathy"
    assert report["recommended_model"]["model_id"] is not None

    base = url(b, "/report/export?format=")

    def download(fmt: str) -> bytes:
        reply = me.get(base + fmt)
        assert reply.status_code == 200, (fmt, reply.data[:300])
        assert "attachment" in reply.headers["Content-Disposition"]
        return bytes(reply.data)

    (tmp_path / "report.pdf").write_bytes(download("pdf"))
    text = subprocess.run(["pdftotext", "-enc", "UTF-8", str(tmp_path / "report.pdf"), "-"],
                          capture_output=True, text=True, check=True).stdout
    assert "EXPERIMENT REPORT\n\nWarmer support" in text and "Converged" in text
    assert "Best version" in text and "Cost by phase" in text and "Empathy" in text
    assert f"${done.spent_micros / 1e6:,.4f}" in text
    md = download("md").decode()
    assert md.startswith("# Experiment report: Warmer support")
    for row in rows:
        assert f"| {row['number']} | v{row['prompt_version']} |" in md
    best_prompt = report["best_prompt"]["template"]
    assert download("prompt-txt").decode() == best_prompt + "\n"
    assert best_prompt in download("prompt-md").decode()
    table = list(csv.reader(io.StringIO(download("csv").decode())))
    assert len(table) == 1 + 3 * 10  # a score per case, model and judge, per iteration
    assert {r[0] for r in table[1:]} == {"1", "2", "3"}
    assert sorted(r[2] for r in table[1:]).count("holdout") == 3 * 3
    bundle = download("bundle")
    with zipfile.ZipFile(io.BytesIO(bundle)) as z:
        assert {"experiment.yaml", "prompts.yaml", "cases.jsonl", "results.csv", "report.md",
                "prompts/v1.txt", "prompts/v2.txt", "prompts/v3.txt"} <= set(z.namelist())
        assert "say sorry for the trouble" in z.read("prompts/v2.txt").decode()
    imported = me.post(f"/api/projects/{b.project.id}/experiments/import",
                       data={"file": (io.BytesIO(bundle), "bundle.zip")},
                       content_type="multipart/form-data")
    assert imported.status_code == 201, imported.json
    draft = imported.json
    assert draft["id"] != b.experiment_id and draft["status"] == "draft"
    assert draft["name"] == "Warmer support (imported)"
    assert [c["name"] for c in draft["config"]["rubric"]["criteria"]] == [
        "Helpfulness", "Empathy"]
    assert draft["config"]["models"]["targets"] == done.config["models"]["targets"]
    cases = me.get(f"/api/projects/{b.project.id}/datasets").json["items"]
    assert any(d["case_count"] == 10 and d["name"].startswith("Warmer support")
               for d in cases)


@pytest.mark.parametrize(("rule", "options"), [
    ("max_iterations", {"stop": {"max_iterations": 1}}),
    ("converged", {"stop": {"convergence_window": 2, "min_delta": 10.0}}),
    ("no_suggestion", {"refiner": "I would not change a thing."}),
    ("budget", {"budget_micros": 500}),
    ("max_tokens", {"max_tokens": 10}),
])
def test_each_stop_rule_ends_the_experiment_for_its_reason(
        factory: Factory, settings: Settings, fake: FakeProviderThread,  # noqa: F811
        recorded: Calls, rule: str, options: dict) -> None:  # noqa: F811
    b = build(factory, settings, fake, **options)
    me = factory.login(b.owner)
    drive(recorded)
    if rule == "converged":  # needs a second iteration
        assert me.post(url(b, "/iterations/1/approve"), json={}).status_code == 200
        drive(recorded)
    done = experiment(b.experiment_id)
    its = iterations(b.experiment_id)
    with db.factory() as session:
        runs = [(r.status, r.error, r.spent_micros) for r in session.scalars(select(Run))]
    assert done.status == "completed" and done.stop_reason == rule, (
        done.stop_detail, [(i.status, i.run_id) for i in its], runs, recorded)
    assert done.stop_detail
    if rule == "budget":
        assert done.spent_micros <= 500
    if rule == "no_suggestion":
        with db.factory() as session:
            s = session.scalars(select(Suggestion)).all()[-1]
            assert s.status == "none" and s.attempts == 3 and s.no_suggestion_reason


def test_two_approvals_at_once_make_one_version_and_a_409(
        app: Flask, monkeypatch: pytest.MonkeyPatch, factory: Factory, settings: Settings,
        fake: FakeProviderThread, recorded: Calls) -> None:  # noqa: F811
    b = build(factory, settings, fake)
    drive(recorded)
    reviewer = factory.member(b.project, "reviewer")
    token_a, token_b = factory.api_token(b.owner), factory.api_token(reviewer)
    with db.factory() as session:
        before = session.scalar(select(func.count()).select_from(PromptVersion))
    replies = race_two(app, monkeypatch, b, token_a, token_b)
    assert sorted(r.status_code for r in replies) == [200, 409]
    with db.factory() as session:
        assert session.scalar(select(func.count()).select_from(PromptVersion)) == before + 1
    assert len(iterations(b.experiment_id)) == 2


def race_two(app: Flask, monkeypatch: pytest.MonkeyPatch, b: Built, token_a: str,
             token_b: str) -> list:
    import threading

    from assay.core.experiments import review

    original = review._open
    barrier = threading.Barrier(2, timeout=10)

    def held(*args, **kwargs):  # type: ignore[no-untyped-def]
        result = original(*args, **kwargs)
        barrier.wait()
        return result

    monkeypatch.setattr(review, "_open", held)
    out: list = [None, None]

    def send(i: int, token: str) -> None:
        out[i] = app.test_client().post(url(b, "/iterations/1/approve"), json={},
                                        headers={"Authorization": f"Bearer {token}"})

    threads = [threading.Thread(target=send, args=(i, t)) for i, t in
               enumerate((token_a, token_b))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    return out


def test_a_viewer_cannot_review_and_a_reviewer_can(
        factory: Factory, settings: Settings, fake: FakeProviderThread,  # noqa: F811
        recorded: Calls) -> None:  # noqa: F811
    b = build(factory, settings, fake, stop={"max_iterations": 2})
    drive(recorded)
    viewer = factory.login(factory.member(b.project, "viewer"))
    assert viewer.get(url(b, "/iterations/1/suggestion")).status_code == 200
    assert viewer.post(url(b, "/iterations/1/approve"), json={}).status_code == 403
    assert viewer.post(url(b, "/pause")).status_code == 403
    reviewer = factory.login(factory.member(b.project, "reviewer"))
    assert reviewer.post(url(b, "/iterations/1/approve"), json={}).status_code == 200
    assert reviewer.post(url(b, "/iterations/1/approve"), json={}).status_code == 409


@pytest.mark.parametrize("phase", ["executing", "aggregating", "refining", "awaiting_review"])
def test_pause_and_resume_at_each_phase(
        factory: Factory, settings: Settings, fake: FakeProviderThread,  # noqa: F811
        recorded: Calls, phase: str) -> None:  # noqa: F811
    b = build(factory, settings, fake, stop={"max_iterations": 2})
    me = factory.login(b.owner)
    _reach(recorded, b, phase)
    paused = me.post(url(b, "/pause"))
    assert paused.status_code == 200 and paused.json["iteration"]["paused"] is True
    assert paused.json["status"] == "paused"
    assert me.post(url(b, "/pause")).status_code == 409
    drive(recorded)  # whatever was dispatched stops at the pause
    held = iterations(b.experiment_id)[0]
    assert held.status == phase and held.paused
    if phase == "awaiting_review":
        assert me.post(url(b, "/iterations/1/approve"), json={}).status_code == 409
    resumed = me.post(url(b, "/resume"))
    assert resumed.status_code == 200 and resumed.json["iteration"]["paused"] is False
    drive(recorded)
    assert iterations(b.experiment_id)[0].status == "awaiting_review"
    assert me.post(url(b, "/iterations/1/approve"), json={}).status_code == 200


@pytest.mark.parametrize("phase", ["executing", "aggregating", "refining", "awaiting_review"])
def test_cancel_at_each_phase_keeps_what_is_done(
        factory: Factory, settings: Settings, fake: FakeProviderThread,  # noqa: F811
        recorded: Calls, phase: str) -> None:  # noqa: F811
    b = build(factory, settings, fake)
    me = factory.login(b.owner)
    _reach(recorded, b, phase)
    cancelled = me.post(url(b, "/cancel"))
    assert cancelled.status_code == 200 and cancelled.json["stop_reason"] == "cancelled"
    drive(recorded)
    it = iterations(b.experiment_id)[0]
    assert it.status == "cancelled"
    assert experiment(b.experiment_id).status == "cancelled"
    assert me.post(url(b, "/cancel")).status_code == 409
    assert me.post(url(b, "/resume")).status_code == 409
    with db.factory() as session:
        run = session.get(Run, it.run_id)
        assert run is not None and run.status in ("cancelled", "completed")


def _reach(calls: Calls, b: Built, phase: str) -> None:
    """Drive the first iteration to `phase` (its step not yet run)."""
    if phase == "executing":
        return
    kind, run_id = calls.pop(0)
    assert kind == loop.RUN
    execute_run(run_id)  # -> aggregating, advance dispatched
    if phase == "aggregating":
        return
    from assay.core.experiments import phases

    with db.factory() as session:
        assert phases.aggregate_iteration(session, calls[0][1]) == phases.REFINE
    if phase == "refining":
        return
    drive(calls)


def test_rejections_in_a_row_stop_the_experiment_at_the_cap(
        factory: Factory, settings: Settings, fake: FakeProviderThread,  # noqa: F811
        recorded: Calls) -> None:  # noqa: F811
    b = build(factory, settings, fake, stop={"max_rejections": 2},
              rejected=reply(D2, "Asks the model to admit doubt."))
    me = factory.login(b.owner)
    drive(recorded)
    assert me.post(url(b, "/iterations/1/reject"), json={"reason": "Too cold"}
                   ).status_code == 200
    drive(recorded)
    assert iterations(b.experiment_id)[0].status == "awaiting_review"
    last = me.post(url(b, "/iterations/1/reject"), json={"reason": "Still too vague"})
    assert last.status_code == 200 and last.json["status"] == "rejected"
    assert recorded == []  # the refiner is not asked a third time
    done = experiment(b.experiment_id)
    assert done.status == "completed" and done.stop_reason == "rejected"
    assert done.stop_detail and "2 rejected suggestions in a row" in done.stop_detail
    assert me.get(url(b, "")).json["stop_reason"] == "rejected"
    assert iterations(b.experiment_id)[0].status == "completed"
    assert me.post(url(b, "/iterations/1/reject"), json={"reason": "Again"}).status_code == 409


def test_the_rejection_cap_is_checked_and_defaults_to_three() -> None:
    from assay.core.experiments import config as cfg
    from assay.scorers.judging import FieldErrors

    assert cfg.max_rejections({"stop": {}}) == 3 == cfg.defaults()["stop"]["max_rejections"]
    assert cfg.max_rejections({"stop": {"max_rejections": 5}}) == 5
    for bad in (0, 21, 2.5, "3", True):
        errors = FieldErrors()
        cfg.CHECKS["stop"]({**cfg.defaults()["stop"], "max_rejections": bad}, errors)
        assert "stop.max_rejections" in errors.errors, bad
    errors = FieldErrors()
    cfg.CHECKS["stop"](cfg.defaults()["stop"], errors)
    assert errors.errors == {}
