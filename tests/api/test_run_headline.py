"""One headline per run (issue 33 items 6 and 7): the dashboard leads with a rubric judge's
composite or a scorer whose scores discriminate, never merely the first scorer, and a user
can pin another one of the run's scorers (stored on the run, guarded by its ETag)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from assay.core.projects.models import Project, Role
from tests.api import report_data as rd
from tests.api.test_reports import REPORTS, get
from tests.factories import Factory, Session


@dataclass
class Headed:
    project: Project
    browser: Session
    run_id: int
    check: int  # first scorer: every output passed, the same value
    length: int  # a deterministic scorer whose values differ
    judge: int  # a rubric judge whose values differ
    pairs: int

    @property
    def board(self) -> str:
        return REPORTS.format(self.project.id) + f"/runs/{self.run_id}/dashboard"

    @property
    def headline(self) -> str:
        return f"/api/projects/{self.project.id}/runs/{self.run_id}/headline"


def _scored(factory: Factory, with_judge: bool = True) -> Headed:
    owner = factory.user()
    project = factory.project(owner, "Headline")
    fast, _ = rd.models(owner, project)
    data = rd.dataset(project, rd.questions(3))
    check, [check_v] = rd.scorer(project, "Contains the answer", "contains")
    length, [length_v] = rd.scorer(project, "Length", "length")
    judge, [judge_v] = rd.scorer(project, "Helpfulness judge", "llm_judge")
    pairs, [pairs_v] = rd.scorer(project, "Pairs", "pairwise_judge")
    run = rd.run(project, data.version_id, [(fast, "Fake Fast")], "Scored")
    rd.pin(run.run_id, pairs_v, 0)
    rd.pin(run.run_id, check_v, 1)
    rd.pin(run.run_id, length_v, 2)
    if with_judge:
        rd.pin(run.run_id, judge_v, 3)
    for i, case_id in enumerate(data.case_ids):
        out = rd.output(run, case_id)
        rd.score(out, check_v, 1.0, True, kind="contains")
        rd.score(out, length_v, [1.0, 0.0, 1.0][i], i != 1, kind="length")
        if with_judge:
            rd.score(out, judge_v, [0.2, 0.6, 0.9][i], i > 0)
    return Headed(project, factory.login(owner), run.run_id, check, length, judge, pairs)


def test_the_headline_is_the_composite_not_the_first_scorer(factory: Factory) -> None:
    h = _scored(factory)
    body = get(h.browser, h.board)
    assert body["scorer"]["id"] == h.judge
    assert body["score"]["mean"] == pytest.approx((0.2 + 0.6 + 0.9) / 3)
    assert (body["pass_rate"]["k"], body["pass_rate"]["n"]) == (2, 3)  # the judge's verdicts


def test_without_a_composite_the_headline_discriminates(factory: Factory) -> None:
    h = _scored(factory, with_judge=False)
    assert get(h.browser, h.board)["scorer"]["id"] == h.length  # not the all-pass check


def test_a_pinned_scorer_leads_and_is_kept_on_the_run(factory: Factory) -> None:
    h = _scored(factory)
    run = get(h.browser, f"/api/projects/{h.project.id}/runs/{h.run_id}")
    assert run["headline_scorer_id"] is None
    reply = h.browser.request("PUT", h.headline, json={"scorer_id": h.check},
                              headers={"If-Match": f'"{run["row_version"]}"'})
    assert reply.status_code == 200, reply.json
    assert reply.json["headline_scorer_id"] == h.check
    assert get(h.browser, h.board)["scorer"]["id"] == h.check
    stale = h.browser.request("PUT", h.headline, json={"scorer_id": h.length},
                              headers={"If-Match": f'"{run["row_version"]}"'})
    assert stale.status_code == 412
    assert get(h.browser, h.board)["scorer"]["id"] == h.check
    back = h.browser.request("PUT", h.headline, json={"scorer_id": None})
    assert back.status_code == 200 and back.json["headline_scorer_id"] is None
    assert get(h.browser, h.board)["scorer"]["id"] == h.judge


def test_only_a_pointwise_scorer_of_the_run_can_be_pinned(factory: Factory) -> None:
    h = _scored(factory)
    for scorer_id in (h.pairs, h.judge + 1000):
        reply = h.browser.request("PUT", h.headline, json={"scorer_id": scorer_id})
        assert reply.status_code == 422 and "scorer_id" in reply.json["errors"]["json"]
    viewer = factory.login(factory.member(h.project, Role.viewer))
    assert viewer.request("PUT", h.headline, json={"scorer_id": h.check}).status_code == 403
