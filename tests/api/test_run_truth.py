"""Numbers that are true (issue 14, C9/C10): a cancelled or stopped run never looks
complete, and scoring failures are failures. Cells are written directly (Factory.planned_run)
so each test states exactly which cells ended how."""

from __future__ import annotations

import csv
import io
import json
import xml.etree.ElementTree as ET
from typing import Any

import pytest
from sqlalchemy import update

from assay.core.datasets.models import VersionCase
from assay.core.datasets.service import create_dataset, latest_version, version_cases
from assay.core.projects.models import Project
from assay.core.runs.models import RunStatus
from assay.extensions import db
from tests.api import report_data as rd
from tests.api.test_run_results import base, get_json, ok, set_run, set_target, skipped
from tests.factories import Factory, Session


@pytest.fixture
def owner(factory: Factory) -> Any:
    return factory.user()


@pytest.fixture
def project(factory: Factory, owner: Any) -> Project:
    return factory.project(owner, "Truth")


@pytest.fixture
def browser(factory: Factory, owner: Any) -> Session:
    return factory.login(owner)


def _cancelled_at_a_fifth(factory: Factory, owner: Any, project: Project) -> Any:
    """5 cases x 2 targets: 2 cells succeeded, then the run was cancelled (8 skipped)."""
    planned = factory.planned_run(owner, project, cases=5, targets=2)
    ok(planned, 0, 0)
    ok(planned, 0, 1)
    for case in range(1, 5):
        for target in range(2):
            skipped(planned, case, target, "cancelled")
    for target_id in planned.target_ids:
        set_target(target_id, succeeded=1, skipped=4)
    set_run(planned.run_id, status=RunStatus.cancelled, succeeded=2, skipped=8,
            error="Cancelled by someone")
    return planned


def test_progress_of_a_cancelled_run_counts_done_without_skipped_cells(
        factory: Factory, owner: Any, project: Project, browser: Session) -> None:
    planned = _cancelled_at_a_fifth(factory, owner, project)
    progress = get_json(browser, base(project, planned.run_id) + "/progress")
    assert (progress["status"], progress["total"], progress["done"]) == ("cancelled", 10, 2)
    assert (progress["succeeded"], progress["failed"], progress["skipped"]) == (2, 0, 8)


def test_success_rate_means_one_thing_on_a_cancelled_run(
        factory: Factory, owner: Any, project: Project, browser: Session) -> None:
    """Issue 33 item 6: the summary said 20% (skipped cells counted as not succeeded) where
    the dashboard said 100% of 2: one rate, of the calls sent, with the skipped beside it."""
    planned = _cancelled_at_a_fifth(factory, owner, project)
    summary = get_json(browser, base(project, planned.run_id) + "/summary")
    board = get_json(browser, f"/api/projects/{project.id}/reports/runs/{planned.run_id}"
                              "/dashboard")
    assert summary["success_rate"] == board["success_rate"]["rate"] == 1.0
    assert (board["success_rate"]["k"], board["success_rate"]["n"]) == (2, 2)
    assert board["counts"]["skipped"] == 8
    assert [t["success_rate"] for t in summary["targets"]] == [1.0] * 2
    assert [t["success_rate"]["rate"] for t in board["targets"]] == [1.0] * 2
    assert [(t["succeeded"], t["skipped"]) for t in summary["targets"]] == [(1, 4)] * 2


# --- scoring failures are failures (C10) ------------------------------------------------------

REJECTED = ("Judge 'fake-judge' reply rejected: reply is not JSON. The judge must answer with "
            "only the JSON object the prompt describes")
CALL_FAILED = "Judge 'fake-judge' call failed (timeout): timed out after 30 s"


def _judged(factory: Factory) -> tuple[Session, Project, Any, list[int], int]:
    """One target, four cases, a Judge scorer: c0 passed, c1 failed, c2 and c3 errored (a
    rejected reply, a failed judge call)."""
    owner = factory.user()
    project = factory.project(owner, "Judged")
    fast, _ = rd.models(owner, project)
    data = rd.dataset(project, rd.questions(4))
    judge_id, [judge] = rd.scorer(project, "Judge")
    run = rd.run(project, data.version_id, [(fast, "Fake Fast")], "Judged run")
    rd.pin(run.run_id, judge)
    outputs = [rd.output(run, c, 0) for c in data.case_ids]
    rd.score(outputs[0], judge, 1.0, True, source="fake-judge", rationale="Right")
    rd.score(outputs[1], judge, 0.0, False, source="fake-judge", rationale="Wrong")
    rd.score(outputs[2], judge, None, None, source="fake-judge", error=REJECTED)
    rd.score(outputs[3], judge, None, None, source="fake-judge", error=CALL_FAILED)
    return factory.login(owner), project, run, data.case_ids, judge_id


def test_summary_counts_scores_passed_failed_and_errored_by_class(factory: Factory) -> None:
    browser, project, run, _, judge_id = _judged(factory)
    summary = get_json(browser, base(project, run.run_id) + "/summary")
    assert summary["scoring"] == [{
        "scorer_id": judge_id, "name": "Judge", "kind": "llm_judge", "scores": 4,
        "passed": 1, "failed": 1, "errored": 2,
        "errors": {"judge_reply_rejected": 1, "judge_call_timeout": 1}}]


def test_summary_scoring_is_empty_without_scorers(
        factory: Factory, owner: Any, project: Project, browser: Session) -> None:
    planned = _cancelled_at_a_fifth(factory, owner, project)
    assert get_json(browser, base(project, planned.run_id) + "/summary")["scoring"] == []


def test_junit_counts_each_failed_or_errored_score_as_a_failure(factory: Factory) -> None:
    browser, project, run, _, _ = _judged(factory)
    reply = browser.get(base(project, run.run_id) + "/export", query_string={"format": "junit"})
    assert reply.status_code == 200
    root = ET.fromstring(reply.get_data())
    assert [root.get(k) for k in ("tests", "failures", "errors", "skipped")] == [
        "4", "3", "0", "0"]
    cases = root.findall("testsuite/testcase")
    assert [c.find("failure") is not None for c in cases] == [False, True, True, True]
    rejected = cases[2].find("failure")
    assert rejected is not None
    assert rejected.get("message", "").startswith("Judge could not score it: Judge 'fake-judge'")
    assert "reply is not JSON" in (rejected.text or "")


# --- multi-turn grid: each cell shows the turn it answers (C13) --------------------------------


def test_grid_cells_name_the_user_turn_they_answer(factory: Factory) -> None:
    owner = factory.user()
    project = factory.project(owner, "Turns")
    fast, _ = rd.models(owner, project)
    talk = [{"role": "system", "content": "Be brief."},
            {"role": "user", "content": "First question"}, {"role": "assistant", "content": "a0"},
            {"role": "user", "content": "Second question"},
            {"role": "assistant", "content": "a1"}, {"role": "user", "content": "Last question"}]
    with db.factory() as session:
        dataset = create_dataset(session, None, session.merge(project), "Talks",
                                 "conversations", [{"input": {"messages": talk}}])
        version = latest_version(session, dataset.id)
        [case] = version_cases(session, version.id)
        session.commit()
        version_id, case_id = version.id, case.id
    run = rd.run(project, version_id, [(fast, "Fake Fast")], "Talk run")
    for turn in range(3):
        rd.output(run, case_id, 0, turn=turn, text=f"Reply to turn {turn}")
    grid = get_json(factory.login(owner), base(project, run.run_id) + "/grid")
    [row] = grid["rows"]
    assert row["turns"] == 3
    assert row["input"] == "First question"  # beside the first turn's reply, not the last's
    outputs = row["cells"][0]["outputs"]
    assert [(o["turn"], o["prompt"], o["text"]) for o in outputs] == [
        (0, "First question", "Reply to turn 0"), (1, "Second question", "Reply to turn 1"),
        (2, "Last question", "Reply to turn 2")]


def test_grid_of_single_turn_cases_has_no_turn_prompts(
        factory: Factory, owner: Any, project: Project, browser: Session) -> None:
    planned = factory.planned_run(owner, project, cases=1, targets=1)
    ok(planned, 0, 0)
    [row] = get_json(browser, base(project, planned.run_id) + "/grid")["rows"]
    assert (row["turns"], row["input"]) == (1, "Question 0?")
    assert row["cells"][0]["outputs"][0]["prompt"] is None


# --- one scale per score (C14) -----------------------------------------------------------------


def _rated(factory: Factory) -> tuple[Session, Project, Any]:
    """One output rated 4 on a manual 1-5 scorer (value 0.75 normalised)."""
    owner = factory.user()
    project = factory.project(owner, "Rated")
    fast, _ = rd.models(owner, project)
    data = rd.dataset(project, rd.questions(1))
    _, version = factory.scorer(project, "Helpfulness", kind="manual", params={"scale": "1-5"})
    run = rd.run(project, data.version_id, [(fast, "Fake Fast")], "Rated run")
    rd.pin(run.run_id, version)
    output = rd.output(run, data.case_ids[0], 0)
    browser = factory.login(owner)
    reply = browser.request("PUT", base(project, run.run_id)
                            + f"/outputs/{output}/scores/{version}", json={"rating": 4})
    assert reply.status_code in (200, 201), reply.json
    return browser, project, run


def test_exports_write_a_manual_rating_on_its_own_scale(factory: Factory) -> None:
    browser, project, run = _rated(factory)
    url = base(project, run.run_id) + "/export"
    table = list(csv.reader(io.StringIO(
        browser.get(url, query_string={"format": "csv"}).get_data(as_text=True))))
    column = table[0].index("Helpfulness: value")
    assert table[1][column] == "4/5"
    body = json.loads(browser.get(url, query_string={"format": "json"}).get_data(as_text=True))
    [score] = body["outputs"][0]["scores"]
    assert (score["value"], score["shown"]) == (0.75, "4/5")  # the normalised value named
    assert [(r["value"], r["rating"], r["shown"]) for r in score["results"]] == [
        (0.75, 4, "4/5")]


# --- CSV import: one row numbering for the preview and the errors (C16) ------------------------


def test_import_errors_name_the_rows_the_preview_numbers(factory: Factory) -> None:
    owner = factory.user()
    project = factory.project(owner, "Imports")
    browser = factory.login(owner)
    reply = browser.post(f"/api/projects/{project.id}/datasets",
                         json={"name": "Cases", "kind": "cases"})
    assert reply.status_code == 201, reply.json
    url = f"/api/projects/{project.id}/datasets/{reply.json['id']}/import"
    # the second row spans two lines; the third has a difficulty that is not one
    content = 'q,a,level\nQ0,A0,easy\n"multi\nline",A1,hard\nQ2,A2,impossible\n'
    preview = get_ok(browser.post(url + "/preview", json={"format": "csv", "content": content}))
    assert preview["row_numbers"] == [2, 3, 5]  # as a spreadsheet numbers them: header is 1
    failed = browser.post(url, json={"format": "csv", "content": content,
                                     "mapping": {"variables": {"q": "q"}, "expected": "a",
                                                 "difficulty": "level"}})
    assert failed.status_code == 422 and failed.json is not None
    [error] = failed.json["errors"]["rows"]
    assert error["row"] == preview["row_numbers"][2]


def get_ok(reply: Any) -> Any:
    assert reply.status_code == 200, reply.json
    return reply.json


# --- one case number everywhere: its place in the run's dataset version (C16) ------------------


def test_case_numbers_are_the_case_place_in_its_dataset_version(factory: Factory) -> None:
    owner = factory.user()
    project = factory.project(owner, "Numbers")
    fast, _ = rd.models(owner, project)
    data = rd.dataset(project, rd.questions(3))
    with db.factory() as session:  # positions with a gap, as after a case was deleted
        session.execute(update(VersionCase).where(
            VersionCase.version_id == data.version_id,
            VersionCase.case_id == data.case_ids[2]).values(position=7))
        session.commit()
    run = rd.run(project, data.version_id, [(fast, "Fake Fast")], "Numbered")
    for case_id in data.case_ids:
        rd.output(run, case_id, 0)
    browser = factory.login(owner)
    url = base(project, run.run_id)
    outputs = get_json(browser, url + "/outputs")["items"]
    assert [o["case_number"] for o in outputs] == [1, 2, 3]
    rows = get_json(browser, url + "/grid")["rows"]
    assert [r["number"] for r in rows] == [1, 2, 3]
    view = get_json(browser, url + f"/cases/{data.case_ids[2]}")
    assert view["position"] == 3
    junit = ET.fromstring(browser.get(url + "/export", query_string={"format": "junit"})
                          .get_data())
    assert [c.get("name") for c in junit.findall("testsuite/testcase")] == [
        "case 1 repeat 0", "case 2 repeat 0", "case 3 repeat 0"]
