"""The project's Bradley-Terry leaderboard (GET /reports/ratings): every judged comparison
across the project's runs is a game between two models; same-model comparisons are counted
apart; the ratings are those of core.stats.bradley_terry over exactly those games."""

from __future__ import annotations

import pytest

from assay.core.stats.bradley_terry import bradley_terry
from tests.api import report_data as rd
from tests.api.test_reports import REPORTS, get, query_error
from tests.factories import Factory


def test_ratings_across_runs_are_bradley_terry_over_the_models_games(factory: Factory) -> None:
    owner = factory.user()
    project = factory.project(owner, "Arena")
    browser = factory.login(owner)
    url = REPORTS.format(project.id) + "/ratings"
    empty = get(browser, url)
    assert (empty["available"], empty["items"], empty["n_comparisons"]) == (False, [], 0)
    assert "No pairwise judgements" in empty["message"]

    fast, smart = rd.models(owner, project)
    data = rd.dataset(project, rd.questions(3))
    _, (version,) = rd.scorer(project, "Preference", kind="pairwise_judge")
    first = rd.run(project, data.version_id, [(fast, "Fast"), (smart, "Smart")], "First")
    second = rd.run(project, data.version_id, [(smart, "Smart"), (fast, "Fast")], "Second")
    rerun = rd.run(project, data.version_id, [(fast, "Fast")], "Rerun")
    winners = {0: "b", 1: "b", 2: "tie"}  # Smart wins twice, one tie
    for i, case_id in enumerate(data.case_ids):
        a, b = rd.output(first, case_id, 0), rd.output(first, case_id, 1)
        rd.comparison(first.run_id, case_id, version, a, b, winners[i])
    # second run: Smart is A; Fast wins once, one judgement whose orders disagreed
    a, b = rd.output(second, data.case_ids[0], 0), rd.output(second, data.case_ids[0], 1)
    rd.comparison(second.run_id, data.case_ids[0], version, a, b, "b")
    a, b = rd.output(second, data.case_ids[1], 0), rd.output(second, data.case_ids[1], 1)
    rd.comparison(second.run_id, data.case_ids[1], version, a, b, None)
    # Fast against itself (a run against its rerun): no evidence about the models
    again = rd.output(rerun, data.case_ids[0])
    rd.comparison(rerun.run_id, data.case_ids[0], version, first.outputs[0], again, "a")

    body = get(browser, url)
    games = [("Fake Fast", "Fake Smart", w) for w in ("b", "b", "tie")] + [
        ("Fake Smart", "Fake Fast", "b"), ("Fake Smart", "Fake Fast", "tie")]
    expected = bradley_terry(games, items=["Fake Fast", "Fake Smart"])
    assert body["available"] is True and body["message"] is None
    assert (body["n_comparisons"], body["same_model"], body["without_model"], body["runs"]) == (
        5, 1, 0, 3)
    assert [(r["model_name"], r["wins"], r["ties"], r["losses"], r["games"])
            for r in body["items"]] == [("Fake Smart", 2, 2, 1, 5), ("Fake Fast", 1, 2, 2, 5)]
    for row, rating in zip(body["items"], expected.ratings, strict=True):
        assert row["model_name"] == rating.item
        assert row["model_id"] == {"Fake Fast": fast, "Fake Smart": smart}[rating.item]
        assert (row["rating"], row["low"], row["high"]) == (
            pytest.approx(rating.rating), pytest.approx(rating.low), pytest.approx(rating.high))

    # one dataset's runs only; a date range before any comparison: nothing
    other = rd.dataset(project, rd.questions(1), name="Other")
    assert get(browser, url, dataset_id=other.dataset_id)["n_comparisons"] == 0
    assert get(browser, url, date_to="2020-01-01")["n_comparisons"] == 0
    query_error(browser, url, "date_to", date_from="2025-03-02", date_to="2025-03-01")
    stranger = factory.user()
    assert get(factory.login(stranger), url, 404)["code"] == "NOT_FOUND"
