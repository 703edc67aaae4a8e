"""Run exports through the HTTP layer: CSV, JSON and JUnit XML, streamed as downloads."""

from __future__ import annotations

import csv
import io
import json
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from typing import Any

import pytest

from assay.core.projects.models import Project
from assay.core.reports import export_rows
from tests.api import report_data as rd
from tests.factories import Factory, Session


@dataclass
class Exported:
    project: Project
    browser: Session
    run: rd.RunRows
    data: rd.Data

    def url(self, run_id: int | None = None) -> str:
        return f"/api/projects/{self.project.id}/runs/{run_id or self.run.run_id}/export"


@pytest.fixture
def exported(factory: Factory) -> Exported:
    """Two cases, targets Fast and Smart, the scorers Judge then Rules:
      Fast  c0 "=SUM(A1:A9)"  Judge 1.0 pass, Rules pass
            c1 failed call (timeout, a bell character in the message)
      Smart c0 "+cmd|' /C calc'!A0"  Judge 0.0 fail "Missed the key point", Rules pass
            c1 r0 "-1 and @x"  judges 1.0 pass and 0.5 fail (the panel fails it)
            c1 r1 skipped"""
    owner = factory.user()
    project = factory.project(owner, "Exports")
    fast, smart = rd.models(owner, project)
    data = rd.dataset(project, rd.questions(2))
    _, [judge] = rd.scorer(project, "Judge")
    _, [rules] = rd.scorer(project, "Rules", "rules")
    run = rd.run(project, data.version_id, [(fast, "Fake Fast"), (smart, "Fake Smart")],
                 "Exported run!")
    rd.pin(run.run_id, judge, 0)
    rd.pin(run.run_id, rules, 1)
    c0, c1 = data.case_ids
    first = rd.output(run, c0, 0, text="=SUM(A1:A9)", latency_ms=1500)
    rd.score(first, judge, 1.0, True, source="judge-a", rationale="Right")
    rd.score(first, rules, 1.0, True, kind="rules")
    rd.output(run, c1, 0, status="failed", error_class="timeout",
              error_message="Timed out \x07 after 30 s")
    missed = rd.output(run, c0, 1, text="+cmd|' /C calc'!A0")
    rd.score(missed, judge, 0.0, False, source="judge-a", rationale="Missed the key point")
    rd.score(missed, rules, 1.0, True, kind="rules")
    split = rd.output(run, c1, 1, 0, text="-1 and @x")
    rd.score(split, judge, 1.0, True, source="judge-a", rationale="Fine")
    rd.score(split, judge, 0.5, False, source="judge-b", rationale="Too short")
    rd.output(run, c1, 1, 1, status="skipped", error_class="cancelled")
    return Exported(project, factory.login(owner), run, data)


def download(browser: Session, url: str, **query: Any) -> Any:
    reply = browser.get(url, query_string=query)
    assert reply.status_code == 200, reply.get_data(as_text=True)[:500]
    assert reply.is_streamed
    return reply


def test_csv_export_one_row_per_output_with_scorer_columns(exported: Exported) -> None:
    reply = download(exported.browser, exported.url(), format="csv")
    assert reply.mimetype == "text/csv"
    assert reply.headers["Content-Disposition"] == (
        f'attachment; filename="run-{exported.run.run_id}-Exported-run.csv"')
    table = list(csv.reader(io.StringIO(reply.get_data(as_text=True))))
    header, rows = table[0], table[1:]
    assert header == ["output_id", "case_id", "input", "expected", "target", "model", "repeat",
                      "turn", "status", "text", "error_class", "tokens_in", "tokens_out",
                      "cost_micros", "latency_ms", "Judge: value", "Judge: passed",
                      "Rules: value", "Rules: passed"]
    assert len(rows) == 5
    by_text = {r[9]: dict(zip(header, r, strict=True)) for r in rows}
    first = by_text["'=SUM(A1:A9)"]  # formulas are quoted out of being formulas
    assert json.loads(first["input"]) == {"question": "Question 0?"}
    assert json.loads(first["expected"]) == {"output": "Answer 0"}
    assert (first["target"], first["model"], first["status"], first["latency_ms"]) == (
        "Fake Fast", "Fake Fast", "succeeded", "1500")
    assert (first["Judge: value"], first["Judge: passed"], first["Rules: passed"]) == (
        "1.0", "true", "true")
    assert by_text["'+cmd|' /C calc'!A0"]["Judge: passed"] == "false"
    panel = by_text["'-1 and @x"]
    assert (panel["Judge: value"], panel["Judge: passed"], panel["Rules: value"]) == (
        "0.75", "false", "")
    failed = next(r for r in rows if r[8] == "failed")
    assert failed[10] == "timeout" and failed[9] == ""


def test_json_export_nests_case_target_and_every_score(exported: Exported) -> None:
    reply = download(exported.browser, exported.url())  # json is the default
    assert reply.mimetype == "application/json"
    assert reply.headers["Content-Disposition"].endswith('.json"')
    body = json.loads(reply.get_data(as_text=True))
    assert body["run"]["name"] == "Exported run!"
    assert [(s["name"], s["kind"], s["versions"]) for s in body["scorers"]] == [
        ("Judge", "llm_judge", [1]), ("Rules", "rules", [1])]
    assert len(body["outputs"]) == 5
    panel = next(o for o in body["outputs"] if o["text"] == "-1 and @x")  # JSON is not quoted
    assert panel["case"]["input"] == {"question": "Question 1?"}
    assert (panel["target"]["label"], panel["target"]["model"]) == ("Fake Smart", "Fake Smart")
    judge = panel["scores"][0]
    assert (judge["scorer"], judge["value"], judge["passed"]) == ("Judge", 0.75, False)
    assert [(r["source"], r["passed"], r["rationale"]) for r in judge["results"]] == [
        ("judge-a", True, "Fine"), ("judge-b", False, "Too short")]
    assert panel["scores"][1] == {"scorer_id": panel["scores"][1]["scorer_id"],
                                  "scorer": "Rules", "value": None, "shown": None,
                                  "passed": None, "results": []}


def test_junit_export_one_suite_per_target(exported: Exported) -> None:
    reply = download(exported.browser, exported.url(), format="junit")
    assert reply.mimetype == "application/xml"
    assert reply.headers["Content-Disposition"].endswith('.xml"')
    root = ET.fromstring(reply.get_data())
    assert root.tag == "testsuites" and root.get("name") == "Exported run!"
    assert [root.get(k) for k in ("tests", "failures", "errors", "skipped")] == [
        "5", "2", "1", "1"]
    fast, smart = root.findall("testsuite")
    assert fast.get("name") == "Fake Fast" and smart.get("name") == "Fake Smart"
    assert [fast.get(k) for k in ("tests", "failures", "errors", "skipped")] == [
        "2", "0", "1", "0"]
    passed, errored = fast.findall("testcase")
    assert passed.get("time") == "1.500" and list(passed) == []
    error = errored.find("error")
    assert error is not None and error.get("type") == "timeout"
    assert error.get("message") == "Timed out \ufffd after 30 s"  # no control characters
    missed, split, skipped = smart.findall("testcase")
    # the case number in its dataset version (cases 1 and 2), not the case id
    assert missed.get("name") == "case 1 repeat 0"
    failure = missed.find("failure")
    assert failure is not None and failure.get("message") == "Missed the key point"
    assert failure.get("type") == "Judge"
    split_failure = split.find("failure")
    assert split_failure is not None and split_failure.get("message") == "Too short"
    assert skipped.get("name") == "case 2 repeat 1"
    assert skipped.find("skipped") is not None


def test_junit_testcase_joins_the_turns_of_a_case(factory: Factory,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    owner = factory.user()
    project = factory.project(owner, "Turns")
    fast, _ = rd.models(owner, project)
    data = rd.dataset(project, rd.questions(2))
    _, [judge] = rd.scorer(project)
    run = rd.run(project, data.version_id, [(fast, "Fake Fast")])
    rd.pin(run.run_id, judge)
    for case_id in data.case_ids:
        for turn, passed in enumerate((True, False, True)):
            rd.score(rd.output(run, case_id, turn=turn), judge, float(passed), passed,
                     rationale=f"turn {turn}")
    browser = factory.login(owner)
    url = f"/api/projects/{project.id}/runs/{run.run_id}/export"
    for batch in (2, 1000):  # a case's turns split across batches, or in one
        monkeypatch.setattr(export_rows, "BATCH", batch)
        root = ET.fromstring(download(browser, url, format="junit").get_data())
        cases = root.findall("testsuite/testcase")
        assert len(cases) == 2 and root.get("tests") == "2" and root.get("failures") == "2"
        messages = [failure.get("message") for failure in root.iter("failure")]
        assert messages == ["turn 1", "turn 1"]


def test_exports_stream_in_batches(exported: Exported, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(export_rows, "BATCH", 2)
    reply = exported.browser.client.get(exported.url(), query_string={"format": "csv"},
                                        buffered=False)
    chunks = [bytes(c) for c in reply.response if c]
    reply.close()
    assert len(chunks) == 3  # 5 rows in batches of 2, 2 and 1; the header with the first
    assert chunks[0].startswith(b"output_id,") and chunks[0].count(b"\n") == 3
    reply = exported.browser.client.get(exported.url(), buffered=False)
    assert len([c for c in reply.response if c]) == 5  # head, 3 batches, the closing
    reply.close()


def test_empty_run_exports(exported: Exported) -> None:
    empty = rd.run(exported.project, exported.data.version_id, [(None, "Recorded trace")])
    url = exported.url(empty.run_id)
    table = download(exported.browser, url, format="csv").get_data(as_text=True)
    assert table.splitlines() == ["output_id,case_id,input,expected,target,model,repeat,turn,"
                                  "status,text,error_class,tokens_in,tokens_out,cost_micros,"
                                  "latency_ms"]
    assert json.loads(download(exported.browser, url).get_data())["outputs"] == []
    root = ET.fromstring(download(exported.browser, url, format="junit").get_data())
    [suite] = root.findall("testsuite")
    assert suite.get("tests") == "0" and suite.findall("testcase") == []


def test_export_bad_input(exported: Exported, factory: Factory) -> None:
    reply = exported.browser.get(exported.url(), query_string={"format": "xlsx"})
    assert reply.status_code == 422 and "format" in reply.json["errors"]["query"]
    reply = exported.browser.get(exported.url(2**31 - 1))
    assert reply.status_code == 404 and reply.json["message"] == "Run not found"
    stranger = factory.user()
    theirs = factory.project(stranger, "Theirs")
    their_data = rd.dataset(theirs, rd.questions(1))
    their_run = rd.run(theirs, their_data.version_id, [(None, "Recorded trace")])
    assert exported.browser.get(exported.url(their_run.run_id)).status_code == 404
    outsider = factory.login(stranger)
    reply = outsider.get(exported.url())
    assert reply.status_code == 404 and reply.json["code"] == "NOT_FOUND"
