"""A run's progress snapshot and results API: outputs (filters, order, detail), summary.

Runs are written row by row (Factory.planned_run) and their outputs set directly, so each
test states exactly which cells ended how.
"""

from __future__ import annotations

import random
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import update

from assay.core.base import utcnow
from assay.core.projects.models import Project
from assay.core.runs.models import Output, Run, RunStatus, RunTarget
from assay.core.runs.progress import snapshot
from assay.core.runs.results import nearest_rank
from assay.extensions import db
from tests.factories import Factory, PlannedRun, Session


def cell(planned: PlannedRun, case: int, target: int, repeat: int = 0, turn: int = 0,
         **values: Any) -> None:
    """Set the output of one cell (by case and target index)."""
    values.setdefault("finished_at", utcnow())
    with db.factory() as session:
        moved = session.execute(update(Output).where(
            Output.run_id == planned.run_id, Output.case_id == planned.case_ids[case],
            Output.target_id == planned.target_ids[target], Output.repeat == repeat,
            Output.turn == turn).values(**values))
        assert getattr(moved, "rowcount", 0) == 1
        session.commit()


def ok(planned: PlannedRun, case: int, target: int, repeat: int = 0, **values: Any) -> None:
    values = {"text": "An answer", "latency_ms": 100, "tokens_in": 10, "tokens_out": 5,
              "cost_micros": 7, "attempts": 1, **values}
    cell(planned, case, target, repeat, status="succeeded", **values)


def failed(planned: PlannedRun, case: int, target: int, error_class: str,
           repeat: int = 0, **values: Any) -> None:
    cell(planned, case, target, repeat, status="failed", error_class=error_class,
         error_message=f"It failed: {error_class}", attempts=1, **values)


def skipped(planned: PlannedRun, case: int, target: int, error_class: str = "cancelled",
            repeat: int = 0) -> None:
    cell(planned, case, target, repeat, status="skipped", error_class=error_class,
         error_message="Never sent")


def set_run(run_id: int, **values: Any) -> None:
    with db.factory() as session:
        session.execute(update(Run).where(Run.id == run_id).values(**values))
        session.commit()


def set_target(target_id: int, **values: Any) -> None:
    with db.factory() as session:
        session.execute(update(RunTarget).where(RunTarget.id == target_id).values(**values))
        session.commit()


@pytest.fixture
def owner(factory: Factory) -> Any:
    return factory.user()


@pytest.fixture
def project(factory: Factory, owner: Any) -> Project:
    return factory.project(owner, "Results")


@pytest.fixture
def browser(factory: Factory, owner: Any) -> Session:
    return factory.login(owner)


def base(project: Project, run_id: int) -> str:
    return f"/api/projects/{project.id}/runs/{run_id}"


def get_json(browser: Session, url: str, **query: Any) -> Any:
    reply = browser.get(url, query_string=query)
    assert reply.status_code == 200, reply.json
    return reply.json


# --- progress ---------------------------------------------------------------------------------


def _mixed(factory: Factory, owner: Any, project: Project) -> PlannedRun:
    """2 targets x 3 cases x 2 repeats = 12 cells; counters set as the engine would."""
    planned = factory.planned_run(owner, project, cases=3, targets=2, repeats=2)
    ok(planned, 0, 0)
    ok(planned, 1, 0)
    ok(planned, 2, 0)
    failed(planned, 0, 0, "timeout", repeat=1)
    ok(planned, 0, 1)
    ok(planned, 1, 1)
    failed(planned, 2, 1, "rate_limited")
    failed(planned, 0, 1, "timeout", repeat=1)
    skipped(planned, 1, 1, repeat=1)
    skipped(planned, 2, 1, repeat=1)
    first, second = planned.target_ids
    set_target(first, succeeded=3, failed=1, spent_micros=21, tokens_in=30, tokens_out=15)
    set_target(second, succeeded=2, failed=2, skipped=2, spent_micros=14, tokens_in=20,
               tokens_out=10)
    with db.factory() as session:
        session.execute(update(Project).where(Project.id == project.id).values(
            budget_micros=10_000, spent_micros=535))
        session.commit()
    set_run(planned.run_id, status=RunStatus.running, started_at=utcnow() - timedelta(seconds=60),
            succeeded=5, failed=3, skipped=2, spent_micros=35, judge_spent_micros=7,
            reserved_micros=12,
            tokens_in=50, tokens_out=25, budget_micros=1000)
    return planned


def test_snapshot_reports_counters_errors_budget_elapsed_and_eta(
        factory: Factory, owner: Any, project: Project) -> None:
    planned = _mixed(factory, owner, project)
    with db.factory() as session:
        data = snapshot(session, planned.run_id)
    elapsed, eta = data.pop("elapsed_s"), data.pop("eta_s")
    assert 59.5 < elapsed < 90
    assert eta == pytest.approx(2 * elapsed / 8, rel=0.01)  # 2 cells open, 8 sent, 2 skipped
    started = data.pop("started_at")
    assert started is not None and started.endswith("+00:00")
    first, second = planned.target_ids
    assert data == {
        "run_id": planned.run_id, "status": "running", "total": 12, "done": 8,
        "succeeded": 5, "failed": 3, "skipped": 2, "spent_micros": 35, "judge_spent_micros": 7,
        "reserved_micros": 12,
        "budget_micros": 1000, "project_budget_micros": 10_000, "project_spent_micros": 535,
        "tokens_in": 50, "tokens_out": 25, "finished_at": None, "error": None,
        "errors": {"timeout": 2, "rate_limited": 1, "cancelled": 2},
        "targets": [
            {"target_id": first, "label": "Target 0", "total": 6, "succeeded": 3, "failed": 1,
             "skipped": 0, "spent_micros": 21, "tokens_in": 30, "tokens_out": 15,
             "errors": {"timeout": 1}},
            {"target_id": second, "label": "Target 1", "total": 6, "succeeded": 2,
             "failed": 2, "skipped": 2, "spent_micros": 14, "tokens_in": 20, "tokens_out": 10,
             "errors": {"timeout": 1, "rate_limited": 1, "cancelled": 2}}]}


def test_targets_come_in_position_order(factory: Factory, owner: Any, project: Project) -> None:
    planned = factory.planned_run(owner, project, cases=1, targets=3)
    for target_id, position in zip(planned.target_ids, (2, 0, 1), strict=True):
        set_target(target_id, position=position)
    with db.factory() as session:
        data = snapshot(session, planned.run_id)
    ids = planned.target_ids
    assert [t["target_id"] for t in data["targets"]] == [ids[1], ids[2], ids[0]]


def test_no_eta_before_anything_is_done_nor_after_the_finish(
        factory: Factory, owner: Any, project: Project) -> None:
    planned = factory.planned_run(owner, project, cases=2, targets=1)
    with db.factory() as session:
        pending = snapshot(session, planned.run_id)
    assert (pending["status"], pending["elapsed_s"], pending["eta_s"]) == ("pending", 0.0, None)
    assert pending["started_at"] is None and pending["errors"] == {}
    assert pending["project_budget_micros"] is None

    start = utcnow() - timedelta(seconds=30)
    set_run(planned.run_id, status=RunStatus.running, started_at=start)
    with db.factory() as session:
        running = snapshot(session, planned.run_id)
    assert running["eta_s"] is None and running["elapsed_s"] >= 30  # nothing done yet

    set_run(planned.run_id, status=RunStatus.completed, succeeded=2,
            finished_at=start + timedelta(seconds=12.5))
    with db.factory() as session:
        over = snapshot(session, planned.run_id)
    assert (over["elapsed_s"], over["eta_s"], over["done"]) == (12.5, None, 2)

    set_run(planned.run_id, status=RunStatus.paused, finished_at=None)
    with db.factory() as session:
        assert snapshot(session, planned.run_id)["eta_s"] is None  # not moving: no ETA


def test_progress_endpoint_returns_the_snapshot(factory: Factory, owner: Any, project: Project,
                                                browser: Session) -> None:
    planned = _mixed(factory, owner, project)
    data = get_json(browser, base(project, planned.run_id) + "/progress")
    with db.factory() as session:
        expected = snapshot(session, planned.run_id)
    for key in ("elapsed_s", "eta_s"):
        assert data.pop(key) == pytest.approx(expected.pop(key), abs=2)
    assert data == expected


def test_progress_of_another_projects_run_is_404(factory: Factory, owner: Any, project: Project,
                                                 browser: Session) -> None:
    stranger = factory.user()
    theirs = factory.project(stranger, "Theirs")
    planned = factory.planned_run(stranger, theirs, cases=1, targets=1)
    for path in ("/progress", "/summary", "/outputs"):
        reply = browser.get(base(project, planned.run_id) + path)
        assert reply.status_code == 404 and reply.json["code"] == "NOT_FOUND", path
        assert browser.get(base(theirs, planned.run_id) + path).status_code == 404, path


# --- outputs ----------------------------------------------------------------------------------


def test_outputs_in_case_target_position_repeat_turn_order(
        factory: Factory, owner: Any, project: Project, browser: Session) -> None:
    planned = factory.planned_run(owner, project, cases=2, targets=2, repeats=2, turns=2)
    first, second = planned.target_ids
    set_target(first, position=1)
    set_target(second, position=0)  # the second target comes first
    items = get_json(browser, base(project, planned.run_id) + "/outputs", page_size=100)["items"]
    keys = [(o["case_id"], o["target_id"], o["repeat"], o["turn"]) for o in items]
    assert keys == [(case, target, r, turn) for case in planned.case_ids
                    for target in (second, first) for r in (0, 1) for turn in (0, 1)]
    pages = [get_json(browser, base(project, planned.run_id) + "/outputs", page=n,
                      page_size=5) for n in (1, 2, 3, 4)]
    assert [o["id"] for p in pages for o in p["items"]] == [o["id"] for o in items]
    assert {p["total"] for p in pages} == {16}


def test_output_fields(factory: Factory, owner: Any, project: Project,
                       browser: Session) -> None:
    planned = factory.planned_run(owner, project, cases=1, targets=1)
    ok(planned, 0, 0, ttft_ms=40, cached=True, attempts=2)
    items = get_json(browser, base(project, planned.run_id) + "/outputs")["items"]
    with db.factory() as session:
        target = session.get(RunTarget, planned.target_ids[0])
        assert target is not None
        model_id = target.model_id
    assert items == [{
        "id": items[0]["id"], "case_id": planned.case_ids[0], "case_number": 1,
        "target_id": planned.target_ids[0], "model_id": model_id, "label": "Target 0",
        "repeat": 0, "turn": 0, "status": "succeeded", "text": "An answer",
        "error_class": None, "error": None, "latency_ms": 100, "ttft_ms": 40,
        "tokens_in": 10, "tokens_out": 5, "cost_micros": 7, "cached": True, "attempts": 2,
        "retrieved": None}]


def test_outputs_filters(factory: Factory, owner: Any, project: Project,
                         browser: Session) -> None:
    planned = _mixed(factory, owner, project)
    url = base(project, planned.run_id) + "/outputs"
    first, second = planned.target_ids

    def found(**query: Any) -> list[tuple[int, str, str | None]]:
        page = get_json(browser, url, page_size=100, **query)
        assert page["total"] == len(page["items"])
        return [(o["target_id"], o["status"], o["error_class"]) for o in page["items"]]

    assert len(found()) == 12
    assert {t for t, _, _ in found(target_id=second)} == {second}
    assert len(found(target_id=first)) == 6
    assert found(status="failed") == [(first, "failed", "timeout"), (second, "failed", "timeout"),
                                      (second, "failed", "rate_limited")]
    assert found(status="pending") == [(first, "pending", None)] * 2
    assert found(error_class="timeout") == [(first, "failed", "timeout"),
                                            (second, "failed", "timeout")]
    assert found(error_class="cancelled") == [(second, "skipped", "cancelled")] * 2
    assert found(target_id=second, error_class="timeout") == [(second, "failed", "timeout")]
    assert found(target_id=first, status="skipped") == []
    assert found(error_class="content_filter") == []
    assert len(found(status="succeeded")) == 5


@pytest.mark.parametrize(("query", "field"), [
    ({"target_id": "abc"}, "target_id"), ({"target_id": 0}, "target_id"),
    ({"target_id": 2**31}, "target_id"), ({"status": "done"}, "status"),
    ({"status": "SUCCEEDED"}, "status"), ({"error_class": "Not a class!"}, "error_class"),
    ({"error_class": "x" * 33}, "error_class"), ({"error_class": ""}, "error_class"),
    ({"page_size": 101}, "page_size"),
])
def test_bad_filters_are_422(factory: Factory, owner: Any, project: Project, browser: Session,
                             query: dict[str, Any], field: str) -> None:
    planned = factory.planned_run(owner, project, cases=1, targets=1)
    reply = browser.get(base(project, planned.run_id) + "/outputs", query_string=query)
    assert reply.status_code == 422, reply.json
    assert reply.json["code"] == "VALIDATION_ERROR"
    assert field in reply.json["errors"]["query"], reply.json


def test_a_target_of_another_run_is_422(factory: Factory, owner: Any, project: Project,
                                        browser: Session) -> None:
    planned = factory.planned_run(owner, project, cases=1, targets=1)
    other = factory.planned_run(owner, project, cases=1, targets=1)
    for target_id in (other.target_ids[0], 2**31 - 1):
        reply = browser.get(base(project, planned.run_id) + "/outputs",
                            query_string={"target_id": target_id})
        assert reply.status_code == 422, reply.json
        assert reply.json["code"] == "VALIDATION_ERROR"
        assert reply.json["errors"] == {"query": {"target_id": ["Not a target of this run"]}}


# --- one output -------------------------------------------------------------------------------


def test_output_detail_has_raw_exchange_and_case(factory: Factory, owner: Any,
                                                 project: Project, browser: Session) -> None:
    planned = factory.planned_run(owner, project, cases=2, targets=1)
    request = {"model": "fake-fast", "messages": [{"role": "user", "content": "Question 1?"}]}
    response = {"choices": [{"message": {"content": "An answer"}}], "usage": {"total": 15}}
    ok(planned, 1, 0, raw_request=request, raw_response=response)
    items = get_json(browser, base(project, planned.run_id) + "/outputs")["items"]
    listed = next(o for o in items if o["case_id"] == planned.case_ids[1])
    detail = get_json(browser, base(project, planned.run_id) + f"/outputs/{listed['id']}")
    finished = detail.pop("finished_at")
    assert finished is not None and finished.endswith("+00:00")
    assert detail == {**listed, "raw_request": request, "raw_response": response,
                      "case_input": {"question": "Question 1?"},
                      "case_expected": {"output": "Answer 1"}, "scores": []}
    pending = next(o for o in items if o["case_id"] == planned.case_ids[0])
    detail = get_json(browser, base(project, planned.run_id) + f"/outputs/{pending['id']}")
    assert (detail["status"], detail["raw_request"], detail["finished_at"]) == \
        ("pending", None, None)


def test_output_detail_is_404_outside_its_run_and_project(
        factory: Factory, owner: Any, project: Project, browser: Session) -> None:
    planned = factory.planned_run(owner, project, cases=1, targets=1)
    sibling = factory.planned_run(owner, project, cases=1, targets=1)
    stranger = factory.user()
    theirs = factory.project(stranger, "Theirs")
    foreign = factory.planned_run(stranger, theirs, cases=1, targets=1)

    def output_id(p: PlannedRun) -> int:
        with db.factory() as session:
            found = session.query(Output.id).filter_by(run_id=p.run_id).scalar()
            assert found is not None
            return int(found)

    mine, foreign_output = output_id(planned), output_id(foreign)
    assert browser.get(base(project, planned.run_id) + f"/outputs/{mine}").status_code == 200
    for url in (base(project, sibling.run_id) + f"/outputs/{mine}",  # another run's output
                base(project, planned.run_id) + f"/outputs/{foreign_output}",
                base(project, foreign.run_id) + f"/outputs/{foreign_output}",
                base(theirs, foreign.run_id) + f"/outputs/{foreign_output}",
                base(project, planned.run_id) + f"/outputs/{mine + 10_000}"):
        reply = browser.get(url)
        assert reply.status_code == 404 and reply.json["code"] == "NOT_FOUND", url
        assert "Theirs" not in reply.get_data(as_text=True)


# --- summary ----------------------------------------------------------------------------------


def test_summary_counts_costs_rates_and_errors(factory: Factory, owner: Any, project: Project,
                                               browser: Session) -> None:
    planned = _mixed(factory, owner, project)
    ok(planned, 1, 0, repeat=1, cached=True, cost_micros=0, latency_ms=1)  # 4 ok, 1 pending
    summary = get_json(browser, base(project, planned.run_id) + "/summary")
    first, second = planned.target_ids
    models = {t["target_id"]: t.pop("model_id") for t in summary["targets"]}
    assert set(models) == {first, second} and all(models.values())
    assert summary == {
        "run_id": planned.run_id, "success_rate": pytest.approx(6 / 9, abs=1e-6),  # of calls sent
        "targets": [
            {"target_id": first, "label": "Target 0", "total": 6, "succeeded": 4, "failed": 1,
             "skipped": 0, "pending": 1, "success_rate": 0.8, "spent_micros": 21,
             "tokens_in": 40, "tokens_out": 20, "cached": 1,
             "latency_p50_ms": 100, "latency_p95_ms": 100,  # the cached 1 ms is no call
             "ttft_p50_ms": None, "ttft_p95_ms": None, "errors": {"timeout": 1}},
            {"target_id": second, "label": "Target 1", "total": 6, "succeeded": 2,
             "failed": 2, "skipped": 2, "pending": 0, "success_rate": 0.5,
             "spent_micros": 14, "tokens_in": 20, "tokens_out": 10, "cached": 0,
             "latency_p50_ms": 100, "latency_p95_ms": 100, "ttft_p50_ms": None,
             "ttft_p95_ms": None, "errors": {"timeout": 1, "rate_limited": 1,
                                             "cancelled": 2}}], "scoring": []}


def test_summary_of_a_run_with_nothing_finished(factory: Factory, owner: Any,
                                                project: Project, browser: Session) -> None:
    planned = factory.planned_run(owner, project, cases=2, targets=1)
    skipped(planned, 0, 0, "budget_exceeded")
    summary = get_json(browser, base(project, planned.run_id) + "/summary")
    target = summary["targets"][0]
    # 1 skipped, 1 pending: no call was sent, so there is no rate (not a 0% success)
    assert summary["success_rate"] is None and target["success_rate"] is None
    assert (target["total"], target["pending"], target["skipped"]) == (2, 1, 1)
    assert target["errors"] == {"budget_exceeded": 1}
    assert [target[k] for k in ("latency_p50_ms", "latency_p95_ms", "ttft_p50_ms",
                                "ttft_p95_ms")] == [None] * 4


def test_summary_percentiles_match_nearest_rank(factory: Factory, owner: Any,
                                                project: Project, browser: Session) -> None:
    """Random latencies (with ties) over targets of 37, 2 and 1 measured cells: the database's
    p50/p95 are exactly the nearest-rank values of the same data."""
    rng = random.Random(11)
    planned = factory.planned_run(owner, project, cases=40, targets=3)
    measured: dict[int, dict[str, list[int]]] = {t: {"latency": [], "ttft": []}
                                                 for t in planned.target_ids}
    plan = {0: 37, 1: 2, 2: 1}
    for target, count in plan.items():
        for case in range(40):
            if case < count:
                latency, ttft = rng.randint(50, 5000), rng.choice([None, rng.randint(5, 400)])
                if case % 9 == 0:
                    latency = 777  # ties
                ok(planned, case, target, latency_ms=latency, ttft_ms=ttft)
                tid = planned.target_ids[target]
                measured[tid]["latency"].append(latency)
                if ttft is not None:
                    measured[tid]["ttft"].append(ttft)
            elif case < count + 2:
                failed(planned, case, target, "timeout", latency_ms=99_999)  # not counted
            elif case == count + 2:
                ok(planned, case, target, latency_ms=None)  # unmeasured: not counted
    summary = get_json(browser, base(project, planned.run_id) + "/summary")
    for row in summary["targets"]:
        values = measured[row["target_id"]]
        for metric in ("latency", "ttft"):
            for p in (50, 95):
                assert row[f"{metric}_p{p}_ms"] == nearest_rank(values[metric], p), \
                    (row["target_id"], metric, p, sorted(values[metric]))
    assert summary["targets"][2]["latency_p50_ms"] == summary["targets"][2]["latency_p95_ms"]


def test_every_run_event_carries_the_progress_payload(factory: Factory, owner: Any,
                                                      project: Project,
                                                      browser: Session) -> None:
    """A run executed in process: each event in its stream is a valid Progress, the last one
    the final counts; the SSE stream ends with it and the polling endpoint agrees."""
    import json

    from assay.api.runs.results_schemas import ProgressSchema
    from assay.runtime import current

    run_id = factory.finished_run(owner, project, execute=True)
    rt = current()
    events = [(fields[b"type"].decode(), json.loads(fields[b"data"]))
              for _, fields in rt.redis.xrange(rt.events_key(run_id))]
    assert events[0][0] == "run.started" and events[-1][0] == "run.finished"
    keys = set(ProgressSchema().fields)
    for kind, data in events:
        assert data.pop("type") == kind and data.pop("at")
        assert ProgressSchema().validate(data) == {}, (kind, data)
        assert set(data) == keys, kind
    final = events[-1][1]
    assert (final["status"], final["done"], final["eta_s"]) == ("completed", 24, None)
    assert [t["label"] for t in final["targets"]] and final["finished_at"] is not None
    polled = get_json(browser, base(project, run_id) + "/progress")
    assert {k: v for k, v in polled.items() if k != "elapsed_s"} == \
        {k: v for k, v in final.items() if k != "elapsed_s"}
    stream = browser.get(base(project, run_id) + "/events").get_data(as_text=True)
    assert stream.rstrip().endswith("}") and "event: run.finished" in stream


def test_postgresql_percentiles_equal_the_portable_ones(factory: Factory, owner: Any,
                                                        project: Project) -> None:
    """percentile_disc (PostgreSQL's fast path) and the window query give the same values,
    the nearest-rank ones, for every count from 1 to 41 measured cells."""
    from assay.core.runs import results

    rng = random.Random(3)
    planned = factory.planned_run(owner, project, cases=41, targets=41)
    expected: dict[int, dict[int, int]] = {}
    for target in range(41):
        tid = planned.target_ids[target]
        values = [rng.choice([rng.randint(1, 30), rng.randint(1, 10_000)])
                  for _ in range(target + 1)]
        for case, value in enumerate(values):
            ok(planned, case, target, latency_ms=value)
        expected[tid] = {p: int(v) for p in (50, 95)
                         if (v := nearest_rank(values, p)) is not None}
    with db.factory() as session:
        assert results.percentiles_window(session, planned.run_id, Output.latency_ms) == expected
        assert results.percentiles(session, planned.run_id, Output.latency_ms) == expected
        if session.get_bind().dialect.name == "postgresql":
            ps = (1, 5, 33, 50, 66, 90, 95, 99, 100)
            assert results.percentiles_postgresql(
                session, planned.run_id, Output.latency_ms, ps) == \
                results.percentiles_window(session, planned.run_id, Output.latency_ms, ps)
