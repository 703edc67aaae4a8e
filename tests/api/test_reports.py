"""Project reports through the HTTP layer: leaderboard, cost and token reports, the run
dashboard and the run diff, checked against numbers worked out by hand in the comments.

Rows are written directly (tests/api/report_data.py). Intervals: Wilson bounds against the
formula with SciPy's normal quantile; bootstrap intervals of two case means are exact (a
resample of two cases has mean a, (a+b)/2 or b with chances 1/4, 1/2, 1/4, so the 2.5% and
97.5% quantiles are the two case means themselves)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import pytest
from scipy.stats import norm

from assay.core import ledger, stats
from assay.core.ledger import PURPOSES
from assay.core.projects.models import Project
from assay.extensions import db
from tests.api import report_data as rd
from tests.factories import Factory, Session

REPORTS = "/api/projects/{}/reports"


def wilson(k: int, n: int) -> tuple[float, float]:
    z = norm.ppf(0.975)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def check_rate(found: dict[str, Any], k: int, n: int) -> None:
    low, high = wilson(k, n)
    assert (found["k"], found["n"]) == (k, n)
    assert found["rate"] == pytest.approx(k / n)
    assert (found["low"], found["high"]) == (pytest.approx(low), pytest.approx(high))


def get(browser: Session, url: str, status: int = 200, **query: Any) -> Any:
    reply = browser.get(url, query_string=query)
    assert reply.status_code == status, reply.get_data(as_text=True)[:500]
    return reply.json


def query_error(browser: Session, url: str, field: str, **query: Any) -> dict[str, Any]:
    body = get(browser, url, 422, **query)
    assert body["code"] == "VALIDATION_ERROR" and body["message"]
    assert field in body["errors"]["query"], body
    return dict(body)


@dataclass
class World:
    project: Project
    browser: Session
    fast: int
    smart: int
    data: rd.Data
    scorer_id: int
    versions: list[int]
    run1: rd.RunRows
    run2: rd.RunRows

    @property
    def url(self) -> str:
        return REPORTS.format(self.project.id)


@pytest.fixture
def world(factory: Factory) -> World:
    """Two models, three cases (c0..c2), a scorer with versions v1 and v2.
    run1 (3 days ago, v1), targets Fast and Smart:
      Fast  c0 ok 100 ms 10 µ$ -> 1.0 pass | c1 ok 300 ms 20 µ$ -> 0.5 fail | c2 failed
      Smart c0 ok 200 ms 30 µ$ -> two judges: 0.2 pass and 0.4 fail
            c1 ok cached 400 ms 40 µ$ -> 0.9 pass | c2 skipped
    run2 (1 day ago, v2), target Fast with two repeats, 5 µ$ each:
      c0 r0 500 ms -> 0.0 fail | c0 r1 50 ms -> 1.0 pass | c1 250 ms -> 0.5 pass
      c2 r0 150 ms -> scoring failed (no value) | c2 r1 pending
    Another project has a run of its own, which must never show."""
    owner = factory.user()
    project = factory.project(owner, "Reports")
    fast, smart = rd.models(owner, project)
    data = rd.dataset(project, rd.questions(3))
    scorer_id, (v1, v2) = rd.scorer(project, versions=2)
    c0, c1, c2 = data.case_ids
    day3, day1 = rd.days_ago(3), rd.days_ago(1)
    run1 = rd.run(project, data.version_id, [(fast, "Fake Fast"), (smart, "Fake Smart")],
                  "First", created_at=day3)
    rd.pin(run1.run_id, v1)
    rd.score(rd.output(run1, c0, 0, latency_ms=100, cost_micros=10, finished_at=day3),
             v1, 1.0, True)
    rd.score(rd.output(run1, c1, 0, latency_ms=300, cost_micros=20, finished_at=day3),
             v1, 0.5, False)
    rd.output(run1, c2, 0, status="failed", error_class="timeout", finished_at=day3)
    both = rd.output(run1, c0, 1, latency_ms=200, cost_micros=30, finished_at=day3)
    rd.score(both, v1, 0.2, True, source="judge-a")
    rd.score(both, v1, 0.4, False, source="judge-b")
    rd.score(rd.output(run1, c1, 1, latency_ms=400, cost_micros=40, cached=True,
                       finished_at=day3), v1, 0.9, True)
    rd.output(run1, c2, 1, status="skipped", error_class="cancelled")
    run2 = rd.run(project, data.version_id, [(fast, "Fake Fast · temperature=1")], "Second",
                  created_at=day1)
    rd.pin(run2.run_id, v2)
    for case_id, repeat, latency, value, passed in ((c0, 0, 500, 0.0, False),
                                                    (c0, 1, 50, 1.0, True),
                                                    (c1, 0, 250, 0.5, True)):
        rd.score(rd.output(run2, case_id, 0, repeat, latency_ms=latency, cost_micros=5,
                           finished_at=day1), v2, value, passed)
    rd.score(rd.output(run2, c2, 0, 0, latency_ms=150, cost_micros=5, finished_at=day1),
             v2, None, None, error="The judge replied with no JSON")
    rd.output(run2, c2, 0, 1, status="pending")
    stranger = factory.user()
    theirs = factory.project(stranger, "Theirs")
    their_data = rd.dataset(theirs, rd.questions(1))
    their_run = rd.run(theirs, their_data.version_id, [(rd.models(stranger, theirs)[0], "X")])
    rd.output(their_run, their_data.case_ids[0], cost_micros=1_000_000)
    return World(project, factory.login(owner), fast, smart, data, scorer_id, [v1, v2],
                 run1, run2)


# --- leaderboard ------------------------------------------------------------------------------


def test_leaderboard_pools_versions_and_ranks_models(world: World) -> None:
    body = get(world.browser, world.url + "/leaderboard", scorer_id=world.scorer_id)
    assert body["scorer"] == {"id": world.scorer_id, "name": "Judge", "kind": "llm_judge",
                              "versions": [1, 2]}
    smart, fast = body["items"]  # Smart 0.6 > Fast 7/12
    # Fast: 7 finished (6 ok, 1 failed); 5 scored; case means c0 (1+0+1)/3, c1 (.5+.5)/2
    assert (fast["model_id"], fast["model_name"], fast["runs"]) == (world.fast, "Fake Fast", 2)
    assert (fast["outputs"], fast["succeeded"], fast["failed"], fast["scores"]) == (7, 6, 1, 5)
    check_rate(fast["success_rate"], 6, 7)
    assert fast["score"]["mean"] == pytest.approx(7 / 12)
    assert (fast["score"]["low"], fast["score"]["high"]) == (pytest.approx(0.5),
                                                             pytest.approx(2 / 3))
    assert (fast["score"]["n_cases"], fast["score"]["n_values"]) == (2, 5)
    check_rate(fast["pass_rate"], 3, 5)  # pass, fail | fail, pass, pass
    assert fast["spent_micros"] == 50 and fast["cost_per_output_micros"] == pytest.approx(50 / 7)
    assert (fast["tokens_in"], fast["tokens_out"]) == (60, 30)
    assert fast["tokens_in_per_output"] == pytest.approx(60 / 7)
    # latencies 50 100 150 250 300 500: p50 = 3rd of 6, p95 = 6th
    assert (fast["latency_p50_ms"], fast["latency_p95_ms"]) == (150, 500)
    # Smart: c0 judged by two, (0.2 + 0.4) / 2 = 0.3; c1 0.9; each verdict counts: 2 of 3;
    # c1 was cached: no latency
    assert (smart["model_id"], smart["runs"], smart["outputs"], smart["scores"]) == (
        world.smart, 1, 2, 3)
    assert smart["score"]["mean"] == pytest.approx(0.6)
    assert (smart["score"]["low"], smart["score"]["high"]) == (pytest.approx(0.3),
                                                               pytest.approx(0.9))
    check_rate(smart["pass_rate"], 2, 3)
    assert (smart["spent_micros"], smart["cost_per_output_micros"]) == (70, 35)
    assert (smart["latency_p50_ms"], smart["latency_p95_ms"]) == (200, 200)


def test_leaderboard_interval_is_the_case_clustered_bootstrap(world: World) -> None:
    body = get(world.browser, world.url + "/leaderboard", scorer_id=world.scorer_id)
    fast = body["items"][1]
    expected = stats.mean_ci({"c0": [2 / 3], "c1": [0.5]}, n_resamples=2000)
    assert (fast["score"]["low"], fast["score"]["high"]) == (
        pytest.approx(expected.low), pytest.approx(expected.high))


def test_leaderboard_latest_version_only(world: World) -> None:
    body = get(world.browser, world.url + "/leaderboard", scorer_id=world.scorer_id,
               versions="latest")
    assert body["scorer"]["versions"] == [2]
    fast, smart = body["items"]  # Smart has no v2 score: ranked last
    assert fast["score"]["mean"] == pytest.approx(0.5)  # c0 (0 + 1) / 2, c1 0.5
    check_rate(fast["pass_rate"], 2, 3)
    assert (smart["scores"], smart["score"]["mean"], smart["score"]["low"]) == (0, None, None)
    assert (smart["pass_rate"]["n"], smart["pass_rate"]["rate"]) == (0, None)


def test_leaderboard_without_scorer_ranks_by_success(world: World) -> None:
    body = get(world.browser, world.url + "/leaderboard")
    assert body["scorer"] is None
    smart, fast = body["items"]  # 2/2 succeeded > 6/7
    assert smart["score"] is None and smart["pass_rate"] is None and fast["scores"] == 0
    check_rate(fast["success_rate"], 6, 7)


def test_leaderboard_date_range_counts_outputs_by_the_day_they_finished(world: World) -> None:
    since = rd.days_ago(2).date().isoformat()
    body = get(world.browser, world.url + "/leaderboard", scorer_id=world.scorer_id,
               date_from=since)
    [fast] = body["items"]  # run2 only
    assert (fast["runs"], fast["outputs"], fast["scores"], fast["spent_micros"]) == (1, 4, 3, 20)
    body = get(world.browser, world.url + "/leaderboard", scorer_id=world.scorer_id,
               date_to=since)
    assert [(r["model_name"], r["outputs"]) for r in body["items"]] == [
        ("Fake Fast", 3), ("Fake Smart", 2)]  # run1 only: Fast 0.75 > Smart 0.6
    today = rd.days_ago(0).date().isoformat()
    body = get(world.browser, world.url + "/leaderboard", date_from=today, date_to=today)
    assert body["items"] == []


def test_leaderboard_dataset_filter(world: World) -> None:
    other = rd.dataset(world.project, rd.questions(1), name="Other")
    extra = rd.run(world.project, other.version_id, [(world.fast, "Fake Fast")])
    rd.score(rd.output(extra, other.case_ids[0]), world.versions[0], 0.0, False)
    everything = get(world.browser, world.url + "/leaderboard", scorer_id=world.scorer_id)
    assert everything["items"][1]["outputs"] == 8 and everything["items"][1]["runs"] == 3
    body = get(world.browser, world.url + "/leaderboard", scorer_id=world.scorer_id,
               dataset_id=world.data.dataset_id)
    assert [r["outputs"] for r in body["items"]] == [2, 7]
    body = get(world.browser, world.url + "/leaderboard", scorer_id=world.scorer_id,
               dataset_id=other.dataset_id)
    assert [(r["model_name"], r["outputs"], r["score"]["mean"]) for r in body["items"]] == [
        ("Fake Fast", 1, 0.0)]


def test_reports_of_an_empty_project_are_empty(factory: Factory) -> None:
    owner = factory.user()
    project = factory.project(owner, "Empty")
    browser = factory.login(owner)
    url = REPORTS.format(project.id)
    scorer_id, _ = rd.scorer(project)
    assert get(browser, url + "/leaderboard") == {"scorer": None, "confidence": 0.95,
                                                  "items": []}
    assert get(browser, url + "/leaderboard", scorer_id=scorer_id)["items"] == []
    nothing = [{"kind": kind, "spent_micros": 0, "calls": 0, "tokens_in": 0, "tokens_out": 0}
               for kind in PURPOSES]
    assert get(browser, url + "/costs") == {
        "total": {**_sums(0, 0, 0, 0), "by_kind": nothing},
        "by_model": [], "by_run": [], "by_day": []}
    assert get(browser, url + "/tokens") == {"items": [], "by_kind": nothing}


def test_bad_report_filters_are_422(world: World, factory: Factory) -> None:
    stranger = factory.user()
    theirs = factory.project(stranger, "Elsewhere")
    their_scorer, _ = rd.scorer(theirs)
    their_data = rd.dataset(theirs, rd.questions(1))
    url = world.url + "/leaderboard"
    body = query_error(world.browser, url, "scorer_id", scorer_id=their_scorer)
    assert body["message"] == "No such scorer"
    query_error(world.browser, url, "scorer_id", scorer_id=2**31 - 1)
    for path in ("/leaderboard", "/costs", "/tokens"):
        body = query_error(world.browser, world.url + path, "dataset_id",
                           dataset_id=their_data.dataset_id)
        assert body["message"] == "No such dataset"
        body = query_error(world.browser, world.url + path, "date_to",
                           date_from="2025-03-02", date_to="2025-03-01")
        assert body["message"] == "The date range ends before it starts"
        query_error(world.browser, world.url + path, "date_from", date_from="2025-02-30")
        query_error(world.browser, world.url + path, "date_to", date_to="yesterday")
    query_error(world.browser, url, "versions", versions="newest")
    missing = REPORTS.format(world.project.id + 1000) + "/leaderboard"
    assert get(world.browser, missing, 404)["code"] == "NOT_FOUND"


# --- costs and tokens ---------------------------------------------------------------------------


def _sums(spent: int, outputs: int, tokens_in: int, tokens_out: int,
          judged: int = 0) -> dict[str, int]:
    return {"spent_micros": spent + judged, "calls_micros": spent, "judge_micros": judged,
            "generation_micros": 0, "outputs": outputs, "tokens_in": tokens_in,
            "tokens_out": tokens_out}


def test_cost_report_by_model_run_and_day(world: World) -> None:
    body = get(world.browser, world.url + "/costs")
    assert {k: v for k, v in body["total"].items() if k != "by_kind"} == _sums(120, 9, 80, 40)
    assert [(m["model_name"], m["spent_micros"], m["outputs"], m["tokens_in"])
            for m in body["by_model"]] == [("Fake Smart", 70, 2, 20), ("Fake Fast", 50, 7, 60)]
    assert [(r["run_id"], r["run_name"], r["status"], r["spent_micros"], r["outputs"],
             r["tokens_in"], r["tokens_out"]) for r in body["by_run"]] == [
        (world.run2.run_id, "Second", "completed", 20, 4, 40, 20),
        (world.run1.run_id, "First", "completed", 100, 5, 40, 20)]
    day3, day1 = (rd.days_ago(n).date().isoformat() for n in (3, 1))
    assert body["by_day"] == [{"day": day3, **_sums(100, 5, 40, 20)},
                              {"day": day1, **_sums(20, 4, 40, 20)}]
    since = get(world.browser, world.url + "/costs", date_from=day1)
    assert since["total"]["spent_micros"] == 20 and len(since["by_run"]) == 1


def test_the_cost_report_adds_the_judges_and_lists_runs_newest_first(world: World) -> None:
    """Judges' cost is spend (by kind, model, run and day), and "newest first" means
    created last, not the highest id (a run can be recorded with an earlier date)."""
    older = rd.run(world.project, world.data.version_id, [(world.smart, "Fake Smart")],
                   "Imported", created_at=rd.days_ago(30))
    rd.output(older, world.data.case_ids[0], cost_micros=100, judge_cost_micros=40,
              finished_at=rd.days_ago(1))
    tab = ledger.Tab()  # the judge (Fake Smart) that scored it, as the engine records it
    tab.add(world.smart, calls=1, spent=40, tokens_in=30, tokens_out=10)
    with db.factory() as session:
        ledger.record(session, world.project.id, "judges", tab, older.run_id,
                      rd.days_ago(1).date())
        session.commit()
    body = get(world.browser, world.url + "/costs")
    total = body["total"]
    assert (total["spent_micros"], total["calls_micros"], total["judge_micros"]) == (
        260, 220, 40)
    assert [(k["kind"], k["spent_micros"]) for k in total["by_kind"]] == [
        (purpose, {"model_calls": 220, "judges": 40}.get(purpose, 0)) for purpose in PURPOSES]
    assert [(r["run_name"], r["spent_micros"], r["judge_micros"]) for r in body["by_run"]] == [
        ("Second", 20, 0), ("First", 100, 0), ("Imported", 140, 40)]
    smart = next(m for m in body["by_model"] if m["model_name"] == "Fake Smart")
    assert (smart["spent_micros"], smart["judge_micros"]) == (210, 40)
    day1 = rd.days_ago(1).date().isoformat()
    assert next(d for d in body["by_day"] if d["day"] == day1)["spent_micros"] == 160


def test_token_usage_per_day_and_model(world: World) -> None:
    day3, day1 = (rd.days_ago(n).date().isoformat() for n in (3, 1))
    body = get(world.browser, world.url + "/tokens")
    assert body["items"] == [
        {"day": day3, "model_id": world.fast, "model_name": "Fake Fast", "tokens_in": 20,
         "tokens_out": 10, "outputs": 3},
        {"day": day3, "model_id": world.smart, "model_name": "Fake Smart", "tokens_in": 20,
         "tokens_out": 10, "outputs": 2},
        {"day": day1, "model_id": world.fast, "model_name": "Fake Fast", "tokens_in": 40,
         "tokens_out": 20, "outputs": 4}]
    body = get(world.browser, world.url + "/tokens", dataset_id=world.data.dataset_id,
               date_to=day3)
    assert [i["model_name"] for i in body["items"]] == ["Fake Fast", "Fake Smart"]


def test_cost_by_day_splits_a_target_that_ran_past_midnight(world: World) -> None:
    long_run = rd.run(world.project, world.data.version_id, [(world.smart, "Fake Smart")],
                      "Overnight")
    before, after = rd.days_ago(6), rd.days_ago(5)
    rd.output(long_run, world.data.case_ids[0], cost_micros=100, finished_at=before)
    rd.output(long_run, world.data.case_ids[1], cost_micros=200, finished_at=after)
    rd.output(long_run, world.data.case_ids[2], cost_micros=300, finished_at=after)
    body = get(world.browser, world.url + "/costs", date_to=after.date().isoformat())
    assert [(d["day"], d["spent_micros"], d["outputs"]) for d in body["by_day"]] == [
        (before.date().isoformat(), 100, 1), (after.date().isoformat(), 500, 2)]
    assert [(r["run_name"], r["spent_micros"]) for r in body["by_run"]] == [("Overnight", 600)]
