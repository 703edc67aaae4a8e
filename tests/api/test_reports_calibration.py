"""Judge calibration across runs (GET /reports/judge-calibration): per judge scorer
version, its judges' agreement with each other and with people, over the outputs of every
run it scored, equal to core.stats on the same values written out by hand."""

from __future__ import annotations

import pytest

from assay.core import stats
from tests.api import report_data as rd
from tests.api.test_reports import REPORTS, get
from tests.factories import Factory


def test_judge_calibration_pools_every_run_a_judge_version_scored(factory: Factory) -> None:
    owner = factory.user()
    project = factory.project(owner, "Calibration")
    browser = factory.login(owner)
    url = REPORTS.format(project.id) + "/judge-calibration"
    assert get(browser, url) == {"items": []}

    fast, _ = rd.models(owner, project)
    data = rd.dataset(project, rd.questions(2))
    judge, (judge_v1,) = rd.scorer(project, "Helpful")
    _, (manual_v1,) = rd.scorer(project, "By hand", kind="manual")
    rd.scorer(project, "Unused judge")
    # judge A, judge B and a reviewer on four outputs of two runs
    a = {0: 0.8, 1: 0.4, 2: 1.0, 3: 0.2}
    b = {0: 0.6, 1: 0.4, 2: 0.8, 3: 0.4}
    person = {0: 0.75, 1: 0.5, 2: 1.0}  # the fourth output was never reviewed
    outputs: list[int] = []
    for run_name in ("First", "Second"):
        run = rd.run(project, data.version_id, [(fast, "Fast")], run_name)
        outputs += [rd.output(run, case_id) for case_id in data.case_ids]
    for i, output_id in enumerate(outputs):
        rd.score(output_id, judge_v1, a[i], a[i] >= 0.5, source="judge-a")
        rd.score(output_id, judge_v1, b[i], b[i] >= 0.5, source="judge-b")
        if i in person:
            rd.score(output_id, manual_v1, person[i], None, source="user:1", kind="manual")

    (item,) = get(browser, url)["items"]
    assert (item["scorer_id"], item["name"], item["scorer_version_id"], item["version"]) == (
        judge, "Helpful", judge_v1, 1)
    assert (item["runs"], item["outputs"], item["judges"]) == (2, 4, ["judge-a", "judge-b"])
    alpha = stats.krippendorff_alpha([[a[i] for i in range(4)], [b[i] for i in range(4)]],
                                     level="interval")
    assert item["agreement"]["alpha"]["alpha"] == pytest.approx(alpha.alpha)
    assert item["agreement"]["alpha"]["n_units"] == 4
    kappa = stats.cohens_kappa([a[i] >= 0.5 for i in range(4)], [b[i] >= 0.5 for i in range(4)],
                               categories=(False, True))
    assert item["agreement"]["kappa"]["kappa"] == pytest.approx(kappa.kappa)

    by_judge = {found["judge"]: found for found in item["judge_human"]}
    assert set(by_judge) == {"judge-a", "judge-b", None}  # None: the judges' mean
    human = {outputs[i]: v for i, v in person.items()}
    for name, values in (("judge-a", a), ("judge-b", b),
                         (None, {i: (a[i] + b[i]) / 2 for i in range(4)})):
        expected = stats.judge_human_agreement({outputs[i]: v for i, v in values.items()},
                                               human, level="interval")
        found = by_judge[name]
        assert (found["n"], found["judge_only"], found["human_only"]) == (3, 1, 0)
        assert found["human_scorer_version_id"] == manual_v1
        assert (found["human_name"], found["reviewers"]) == ("By hand", 1)
        assert found["mean_abs_difference"] == pytest.approx(expected.mean_abs_difference)
        assert found["alpha"]["alpha"] == pytest.approx(expected.alpha.alpha)

    stranger = factory.user()
    assert get(factory.login(stranger), url, 404)["code"] == "NOT_FOUND"
