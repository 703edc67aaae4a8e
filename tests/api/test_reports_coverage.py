"""Which of a project's scorers have scores (GET /reports/scorers): the reports open on one
that has, not on the first scorer made."""

from __future__ import annotations

from tests.api import report_data as rd
from tests.api.test_reports import REPORTS, get
from tests.factories import Factory


def test_scorer_coverage_counts_each_scorers_scores_over_its_versions(
        factory: Factory) -> None:
    owner = factory.user()
    project = factory.project(owner, "Coverage")
    browser = factory.login(owner)
    url = REPORTS.format(project.id) + "/scorers"
    unused, _ = rd.scorer(project, "Never attached")
    used, (v1, v2) = rd.scorer(project, "Judge", versions=2)
    assert get(browser, url) == {"items": []}

    fast, smart = rd.models(owner, project)
    data = rd.dataset(project, rd.questions(2))
    run = rd.run(project, data.version_id, [(fast, "Fast"), (smart, "Smart")])
    rd.score(rd.output(run, data.case_ids[0], 0), v1, 0.5, None)
    rd.score(rd.output(run, data.case_ids[1], 0), v2, None, True)
    rd.score(rd.output(run, data.case_ids[0], 1), v2, 1.0, False)
    assert get(browser, url) == {"items": [
        {"scorer_id": used, "values": 2, "verdicts": 2, "models": 2, "discriminates": True}]}
    assert unused not in [i["scorer_id"] for i in get(browser, url)["items"]]

    other_owner = factory.user()
    other = factory.project(other_owner, "Elsewhere")
    assert get(factory.login(other_owner), REPORTS.format(other.id) + "/scorers") == {
        "items": []}
    assert get(browser, REPORTS.format(other.id) + "/scorers", 404)["code"] == "NOT_FOUND"


def test_a_scorer_every_output_passed_alike_does_not_discriminate(factory: Factory) -> None:
    """Issue 33 item 7: the reports open on a scorer that tells outputs apart."""
    owner = factory.user()
    project = factory.project(owner, "Alike")
    browser = factory.login(owner)
    check, [check_v] = rd.scorer(project, "Contains", "contains")
    fast, smart = rd.models(owner, project)
    data = rd.dataset(project, rd.questions(2))
    run = rd.run(project, data.version_id, [(fast, "Fast"), (smart, "Smart")])
    for target in (0, 1):
        for case_id in data.case_ids:
            rd.score(rd.output(run, case_id, target), check_v, 1.0, True, kind="contains")
    [item] = get(browser, REPORTS.format(project.id) + "/scorers")["items"]
    assert (item["scorer_id"], item["values"], item["discriminates"]) == (check, 4, False)
