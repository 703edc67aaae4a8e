"""The score trend across runs (GET /reports/trend) through the HTTP layer, on the world of
test_reports.py, against numbers worked out by hand in the comments."""

from __future__ import annotations

import pytest

from tests.api import report_data as rd
from tests.api.test_reports import REPORTS, World, get, query_error
from tests.api.test_reports import world as world  # the fixture
from tests.factories import Factory


def mean(found: dict[str, float], value: float, low: float, high: float, n_cases: int,
         n_values: int) -> None:
    assert found["mean"] == pytest.approx(value)
    assert (found["low"], found["high"]) == (pytest.approx(low), pytest.approx(high))
    assert (found["n_cases"], found["n_values"]) == (n_cases, n_values)


def test_trend_per_run_and_model_oldest_first(world: World) -> None:
    body = get(world.browser, world.url + "/trend", scorer_id=world.scorer_id)
    assert body["scorer"] == {"id": world.scorer_id, "name": "Judge", "kind": "llm_judge",
                              "versions": [1, 2]}
    assert body["confidence"] == 0.95
    assert body["models"] == [{"model_id": world.fast, "model_name": "Fake Fast"},
                              {"model_id": world.smart, "model_name": "Fake Smart"}]
    first, second = body["runs"]
    assert (first["run_id"], first["name"], second["run_id"], second["name"]) == (
        world.run1.run_id, "First", world.run2.run_id, "Second")
    assert first["dataset_id"] == world.data.dataset_id
    # run1: c0 outputs Fast 1.0 and Smart (0.2 + 0.4) / 2 = 0.3 -> 0.65; c1 0.5, 0.9 -> 0.7
    mean(first["score"], 0.675, 0.65, 0.7, 2, 4)
    fast, smart = first["models"]
    assert (fast["model_id"], smart["model_id"]) == (world.fast, world.smart)
    mean(fast["score"], 0.75, 0.5, 1.0, 2, 2)
    mean(smart["score"], 0.6, 0.3, 0.9, 2, 2)
    # run2: Fast only; c0 (0 + 1) / 2, c1 0.5; c2's score failed (no value)
    [only] = second["models"]
    assert only["model_name"] == "Fake Fast"
    mean(only["score"], 0.5, 0.5, 0.5, 2, 3)
    mean(second["score"], 0.5, 0.5, 0.5, 2, 3)


def test_trend_filters(world: World) -> None:
    url = world.url + "/trend"
    latest = get(world.browser, url, scorer_id=world.scorer_id, versions="latest")
    assert latest["scorer"]["versions"] == [2]
    assert [r["run_id"] for r in latest["runs"]] == [world.run2.run_id]
    assert latest["models"] == [{"model_id": world.fast, "model_name": "Fake Fast"}]
    recent = get(world.browser, url, scorer_id=world.scorer_id, limit=1)
    assert [r["run_id"] for r in recent["runs"]] == [world.run2.run_id]
    since = rd.days_ago(2).date().isoformat()
    dated = get(world.browser, url, scorer_id=world.scorer_id, date_to=since)
    assert [r["run_id"] for r in dated["runs"]] == [world.run1.run_id]
    other = rd.dataset(world.project, rd.questions(1), name="Other")
    assert get(world.browser, url, scorer_id=world.scorer_id,
               dataset_id=other.dataset_id)["runs"] == []
    assert len(get(world.browser, url, scorer_id=world.scorer_id,
                   dataset_id=world.data.dataset_id)["runs"]) == 2


def test_trend_of_a_project_without_scores_is_empty(factory: Factory) -> None:
    owner = factory.user()
    project = factory.project(owner, "Empty")
    scorer_id, _ = rd.scorer(project)
    browser = factory.login(owner)
    url = REPORTS.format(project.id) + "/trend"
    assert get(browser, url) == {"scorer": None, "confidence": 0.95, "models": [],
                                 "runs": []}
    body = get(browser, url, scorer_id=scorer_id)
    assert body["scorer"]["id"] == scorer_id
    assert (body["models"], body["runs"]) == ([], [])


def test_trend_follows_the_latest_runs_scorer_by_default(world: World) -> None:
    body = get(world.browser, world.url + "/trend")
    assert body["scorer"]["id"] == world.scorer_id
    assert len(body["runs"]) == 2


def test_bad_trend_arguments_are_422(world: World, factory: Factory) -> None:
    url = world.url + "/trend"
    query_error(world.browser, url, "scorer_id", scorer_id=0)
    query_error(world.browser, url, "scorer_id", scorer_id="judge")
    theirs = factory.project(factory.user(), "Elsewhere")
    their_scorer, _ = rd.scorer(theirs)
    body = query_error(world.browser, url, "scorer_id", scorer_id=their_scorer)
    assert body["message"] == "No such scorer"
    for limit in (0, 101, "many"):
        query_error(world.browser, url, "limit", scorer_id=world.scorer_id, limit=limit)
    query_error(world.browser, url, "versions", scorer_id=world.scorer_id, versions="newest")
    their_data = rd.dataset(theirs, rd.questions(1))
    body = query_error(world.browser, url, "dataset_id", scorer_id=world.scorer_id,
                       dataset_id=their_data.dataset_id)
    assert body["message"] == "No such dataset"
    body = query_error(world.browser, url, "date_to", scorer_id=world.scorer_id,
                       date_from="2025-03-02", date_to="2025-03-01")
    assert body["message"] == "The date range ends before it starts"
    missing = REPORTS.format(world.project.id + 1000) + "/trend"
    assert get(world.browser, missing, 404, scorer_id=world.scorer_id)["code"] == "NOT_FOUND"
