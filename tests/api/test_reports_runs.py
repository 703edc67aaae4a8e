"""Per-run reports through the HTTP layer: the dashboard (edison FR-RV-001) and the diff of
two runs (EvalArena's regression view), against numbers worked out by hand."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from assay.core import stats
from assay.core.projects.models import Project
from tests.api import report_data as rd
from tests.api.test_reports import REPORTS, check_rate, get
from tests.factories import Factory, Session


@dataclass
class Diffed:
    project: Project
    browser: Session
    data: rd.Data
    scorer_id: int
    base: rd.RunRows
    head: rd.RunRows

    def url(self, head: int, base: int) -> str:
        return REPORTS.format(self.project.id) + f"/runs/{head}/diff/{base}"


@pytest.fixture
def diffed(factory: Factory) -> Diffed:
    """Six cases; base and head each have Fast (renamed between the runs: matched by
    model) and Smart (matched by label). Scores 1.0 pass / 0.0 fail:
      Fast  base: c0 pass, c1 fail, c2 pass, c3 fail, c4 absent, c5 unscored
            head: c0 pass, c1 pass, c2 fail, c3 fail, c4 fail,   c5 pass
      Smart base: c0 0.8 pass; head: nothing."""
    owner = factory.user()
    project = factory.project(owner, "Diff")
    fast, smart = rd.models(owner, project)
    data = rd.dataset(project, rd.questions(6))
    scorer_id, [version] = rd.scorer(project)
    c = data.case_ids
    base = rd.run(project, data.version_id, [(fast, "Fake Fast · Support v1"),
                                             (smart, "Fake Smart")], "Base")
    head = rd.run(project, data.version_id, [(fast, "Fake Fast · Support v2"),
                                             (smart, "Fake Smart")], "Head")
    for case_index, passed in ((0, True), (1, False), (2, True), (3, False)):
        rd.score(rd.output(base, c[case_index]), version, float(passed), passed)
    rd.output(base, c[5])
    rd.score(rd.output(base, c[0], 1), version, 0.8, True)
    for case_index, passed in ((0, True), (1, True), (2, False), (3, False), (4, False),
                               (5, True)):
        rd.score(rd.output(head, c[case_index]), version, float(passed), passed)
    return Diffed(project, factory.login(owner), data, scorer_id, base, head)


def test_diff_counts_and_lists_each_outcome(diffed: Diffed) -> None:
    url = diffed.url(diffed.head.run_id, diffed.base.run_id)
    body = get(diffed.browser, url, scorer_id=diffed.scorer_id, page_size=3)
    assert (body["base_run_id"], body["head_run_id"], body["verdicts_from"]) == (
        diffed.base.run_id, diffed.head.run_id, "scorer")
    assert body["counts"] == {"regressed": 1, "new_fail": 1, "still_failing": 1, "fixed": 1,
                              "new_pass": 1, "still_passing": 1, "missing": 1}
    c = diffed.data.case_ids
    assert body["cases"]["total"] == 7 and body["cases"]["page_size"] == 3
    assert [(r["case_id"], r["outcome"]) for r in body["cases"]["items"]] == [
        (c[2], "regressed"), (c[4], "new_fail"), (c[3], "still_failing")]
    regressed = body["cases"]["items"][0]
    assert regressed["input"] == {"question": "Question 2?"}
    assert (regressed["base"]["passed"], regressed["head"]["passed"]) == (True, False)
    assert (regressed["base_label"], regressed["head_label"]) == (
        "Fake Fast · Support v1", "Fake Fast · Support v2")
    assert body["cases"]["items"][1]["base"] is None  # c4 was not in the base
    last = get(diffed.browser, url, scorer_id=diffed.scorer_id, page_size=3, page=3)
    [missing] = last["cases"]["items"]
    assert (missing["case_id"], missing["outcome"], missing["head"]) == (c[0], "missing", None)
    assert missing["base"]["score"] == pytest.approx(0.8)
    fixed = get(diffed.browser, url, scorer_id=diffed.scorer_id, outcome="fixed")
    assert fixed["cases"]["total"] == 1 and fixed["cases"]["items"][0]["case_id"] == c[1]
    assert fixed["cases"]["items"][0]["case_number"] == 2  # the dataset's #2, not its id
    assert fixed["counts"] == body["counts"]  # the filter narrows the list only


def test_diff_paired_comparison_of_case_means(diffed: Diffed) -> None:
    body = get(diffed.browser, diffed.url(diffed.head.run_id, diffed.base.run_id),
               scorer_id=diffed.scorer_id)
    fast, smart = body["targets"]
    assert fast["counts"]["fixed"] == 1 and smart["counts"]["missing"] == 1
    # Fast on c0..c3: base 1 0 1 0, head 1 1 0 0: differences 0 1 -1 0
    assert (fast["comparison"]["n"], fast["comparison"]["mean_difference"]) == (4, 0.0)
    assert fast["comparison"]["binary"] is True
    assert fast["comparison"]["verdict"] == "not distinguishable"
    # Both targets, case means: base c0 (1 + 0.8) / 2 = 0.9, c1 0, c2 1, c3 0;
    # head c0 1, c1 1, c2 0, c3 0, c4 0, c5 1; on the 4 common cases: 0.1 1 -1 0
    overall = body["comparison"]
    assert overall["n"] == 4 and overall["mean_difference"] == pytest.approx(0.025)
    expected = stats.compare_paired({0: 0.9, 1: 0.0, 2: 1.0, 3: 0.0},
                                    {0: 1.0, 1: 1.0, 2: 0.0, 3: 0.0, 4: 0.0, 5: 1.0})
    assert (overall["low"], overall["high"], overall["p_value"]) == (
        pytest.approx(expected.low), pytest.approx(expected.high),
        pytest.approx(expected.p_value))
    assert overall["verdict"] == "not distinguishable"


def test_diff_without_scorer_uses_the_status_and_finds_a_clear_regression(
        factory: Factory) -> None:
    owner = factory.user()
    project = factory.project(owner, "Status")
    fast, _ = rd.models(owner, project)
    data = rd.dataset(project, rd.questions(20))
    base = rd.run(project, data.version_id, [(fast, "Fake Fast")])
    head = rd.run(project, data.version_id, [(fast, "Fake Fast")])
    for case_id in data.case_ids:
        rd.output(base, case_id)
        rd.output(head, case_id, status="failed", error_class="timeout")
    browser = factory.login(owner)
    body = get(browser, REPORTS.format(project.id) + f"/runs/{head.run_id}/diff/{base.run_id}")
    assert body["verdicts_from"] == "status" and body["scorer"] is None
    assert body["counts"]["regressed"] == 20
    assert body["comparison"]["mean_difference"] == -1.0
    assert body["comparison"]["verdict"] == "base better"
    assert body["comparison"]["test"] == "mcnemar_exact"
    same = get(browser, REPORTS.format(project.id) + f"/runs/{head.run_id}/diff/{head.run_id}")
    assert same["counts"]["still_failing"] == 20 and same["counts"]["regressed"] == 0


def test_diff_refuses_runs_of_different_datasets_and_unknown_runs(
        diffed: Diffed, factory: Factory) -> None:
    other = rd.dataset(diffed.project, rd.questions(1), name="Other")
    elsewhere = rd.run(diffed.project, other.version_id, [(None, "Recorded trace")])
    body = get(diffed.browser, diffed.url(diffed.head.run_id, elsewhere.run_id), 422)
    assert body["code"] == "DIFFERENT_DATASETS"
    assert "different datasets" in body["message"]
    assert body["errors"] == {"path": {"base_run_id": ["Not a run on the same dataset"]}}
    assert get(diffed.browser, diffed.url(diffed.head.run_id, 2**31 - 1), 404)["message"] \
        == "Run not found"
    stranger = factory.user()
    theirs = factory.project(stranger, "Theirs")
    their_data = rd.dataset(theirs, rd.questions(1))
    their_run = rd.run(theirs, their_data.version_id, [(None, "Recorded trace")])
    assert get(diffed.browser, diffed.url(diffed.head.run_id, their_run.run_id), 404)
    assert get(diffed.browser, diffed.url(their_run.run_id, diffed.base.run_id), 404)
    their_scorer, _ = rd.scorer(theirs)
    body = get(diffed.browser, diffed.url(diffed.head.run_id, diffed.base.run_id), 422,
               scorer_id=their_scorer)
    assert "scorer_id" in body["errors"]["query"]


# --- dashboard --------------------------------------------------------------------------------


@dataclass
class Dash:
    project: Project
    browser: Session
    run: rd.RunRows
    previous: rd.RunRows
    scorer_id: int

    @property
    def url(self) -> str:
        return REPORTS.format(self.project.id) + f"/runs/{self.run.run_id}/dashboard"


@pytest.fixture
def dash(factory: Factory) -> Dash:
    """Four cases (c0, c1 tagged math; c2 prose; c3 untagged). An earlier run scored 0.5 on
    every case. This run pins a pairwise judge first, then the rubric judge:
      Fast  c0 1.0 pass {accuracy 1, tone .5} | c1 .5 fail {.5, .5} | c2 0 fail {0, 1}
            c3 failed call
      Smart c0 1 | c1 1 | c2 .5 | c3 1, all pass, {accuracy = value, tone 1}
    Pairwise: c0 Smart wins, c1 tie, c2 Smart wins, c3 the orders disagreed."""
    owner = factory.user()
    project = factory.project(owner, "Dashboard")
    fast, smart = rd.models(owner, project)
    data = rd.dataset(project, [
        {"input": {"question": "Sum?"}, "tags": ["math"], "difficulty": "easy"},
        {"input": {"question": "Product?"}, "tags": ["math"], "difficulty": "hard"},
        {"input": {"question": "A poem?"}, "tags": ["prose"]},
        {"input": {"question": "Anything?"}}])
    scorer_id, [version] = rd.scorer(project)
    _, [pairwise] = rd.scorer(project, "Pairs", "pairwise_judge")
    c = data.case_ids
    previous = rd.run(project, data.version_id, [(fast, "Fake Fast")], "Earlier",
                      created_at=rd.days_ago(2))
    for case_id in c:
        rd.score(rd.output(previous, case_id), version, 0.5, True)
    run = rd.run(project, data.version_id, [(fast, "Fake Fast"), (smart, "Fake Smart")],
                 "Iteration 2")
    rd.pin(run.run_id, pairwise, 0)
    rd.pin(run.run_id, version, 1)
    outputs: dict[tuple[int, int], int] = {}
    for i, (value, passed, tone) in enumerate(((1.0, True, .5), (.5, False, .5),
                                               (0.0, False, 1.0))):
        outputs[(0, i)] = rd.output(run, c[i], 0)
        rd.score(outputs[(0, i)], version, value, passed,
                 criteria={"accuracy": value, "tone": tone})
    rd.output(run, c[3], 0, status="failed", error_class="timeout")
    for i, value in enumerate((1.0, 1.0, 0.5, 1.0)):
        outputs[(1, i)] = rd.output(run, c[i], 1)
        rd.score(outputs[(1, i)], version, value, True,
                 criteria={"accuracy": value, "tone": 1.0})
    for i, winner in enumerate(("b", "tie", "b")):
        rd.comparison(run.run_id, c[i], pairwise, outputs[(0, i)], outputs[(1, i)], winner)
    rd.comparison(run.run_id, c[0], pairwise, outputs[(0, 0)], outputs[(1, 0)], None,
                  judge="other-judge")
    return Dash(project, factory.login(owner), run, previous, scorer_id)


def test_dashboard_numbers(dash: Dash) -> None:
    body = get(dash.browser, dash.url)
    assert body["scorer"]["id"] == dash.scorer_id  # the first pointwise scorer of the run
    assert body["counts"] == {"total": 8, "succeeded": 7, "failed": 1, "skipped": 0,
                              "pending": 0, "scored": 7}
    check_rate(body["success_rate"], 7, 8)
    # case means: c0 (1 + 1) / 2, c1 (.5 + 1) / 2, c2 (0 + .5) / 2, c3 1 (Smart alone)
    assert body["score"]["mean"] == pytest.approx(0.75)
    expected = stats.mean_ci({0: [1.0], 1: [0.75], 2: [0.25], 3: [1.0]})
    assert (body["score"]["low"], body["score"]["high"]) == (pytest.approx(expected.low),
                                                             pytest.approx(expected.high))
    check_rate(body["pass_rate"], 5, 7)
    assert body["delta_vs_previous"] == {"previous_run_id": dash.previous.run_id,
                                         "previous": 0.5, "absolute": 0.25,
                                         "percentage": 50.0}
    assert [(t["run_id"], t["score"]["mean"]) for t in body["trend"]] == [
        (dash.previous.run_id, 0.5), (dash.run.run_id, 0.75)]
    assert body["pairwise_win_rate"] == pytest.approx(5 / 6)  # Smart: 2 wins, 1 tie of 3
    assert (body["spent_micros"], body["tokens_in"], body["tokens_out"], body["tokens"]) == (
        49, 70, 35, 105)
    assert (body["latency_p50_ms"], body["latency_p95_ms"]) == (100, 100)
    accuracy = body["criteria"]["accuracy"]
    assert (accuracy["n"], accuracy["avg"], accuracy["min"], accuracy["max"]) == (
        7, pytest.approx(5 / 7), 0.0, 1.0)
    fast, smart = body["targets"]
    assert (body["best_target_id"], body["worst_target_id"]) == (smart["target_id"],
                                                                 fast["target_id"])
    assert fast["score"]["mean"] == pytest.approx(0.5) and fast["scored"] == 3
    check_rate(fast["pass_rate"], 1, 3)
    assert fast["criteria"] == {"accuracy": pytest.approx(0.5), "tone": pytest.approx(2 / 3)}
    assert fast["pairwise"] == {"wins": 0, "losses": 2, "ties": 1,
                                "win_rate": pytest.approx(1 / 6)}
    assert (fast["failed"], fast["spent_micros"]) == (1, 21)
    assert smart["score"]["mean"] == pytest.approx(0.875)
    check_rate(smart["pass_rate"], 4, 4)


def test_dashboard_facets(dash: Dash) -> None:
    facets = get(dash.browser, dash.url)["facets"]
    math_group, prose, untagged = facets["by_tag"]
    assert (math_group["key"], math_group["n_outputs"], math_group["n_cases"]) == ("math", 4, 2)
    assert math_group["score"]["mean"] == pytest.approx(0.875)  # c0 1, c1 .75
    check_rate(math_group["pass_rate"], 3, 4)
    assert (prose["key"], prose["n_outputs"]) == ("prose", 2)
    assert (untagged["key"], untagged["n_outputs"]) == ("(untagged)", 2)
    assert [g["key"] for g in facets["by_difficulty"]] == ["easy", "hard", "unset"]
    assert [g["key"] for g in facets["by_length"]] == ["XS"]


def test_dashboard_with_another_scorer_or_none(dash: Dash, factory: Factory) -> None:
    other_id, _ = rd.scorer(dash.project, "Rules", "rules")
    body = get(dash.browser, dash.url, scorer_id=other_id)
    assert body["scorer"]["name"] == "Rules" and body["counts"]["scored"] == 0
    assert body["score"]["mean"] is None and body["pass_rate"]["rate"] is None
    assert body["delta_vs_previous"] is None
    bare = rd.run(dash.project, rd.dataset(dash.project, rd.questions(1), "Bare").version_id,
                  [(None, "Recorded trace")])
    url = REPORTS.format(dash.project.id) + f"/runs/{bare.run_id}/dashboard"
    body = get(dash.browser, url)
    assert (body["scorer"], body["score"], body["pass_rate"], body["facets"]) == (
        None, None, None, None)
    assert body["counts"]["total"] == 0 and body["trend"] == []
    assert body["success_rate"]["rate"] is None and body["best_target_id"] is None
    stranger = factory.user()
    their_scorer, _ = rd.scorer(factory.project(stranger, "Theirs"))
    body = get(dash.browser, dash.url, 422, scorer_id=their_scorer)
    assert "scorer_id" in body["errors"]["query"]
    missing = REPORTS.format(dash.project.id) + f"/runs/{2**31 - 1}/dashboard"
    assert get(dash.browser, missing, 404)["message"] == "Run not found"
