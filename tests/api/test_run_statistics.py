"""A run's statistics, facets and paired comparisons through the HTTP layer.

Runs are written row by row (Factory.planned_run), their scores inserted one by one
(tests/api/stats_data.py), and every number is checked against a hand computation or
against core/stats fed with the values the test wrote.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from assay.core import stats
from assay.core.projects.models import Project
from tests.api.stats_data import (
    make_scorer,
    new_version,
    outputs,
    pin,
    rerun,
    score,
    set_case,
)
from tests.factories import Factory, PlannedRun, Session


@pytest.fixture
def owner(factory: Factory) -> Any:
    return factory.user()


@pytest.fixture
def project(factory: Factory, owner: Any) -> Project:
    return factory.project(owner, "Statistics")


@pytest.fixture
def browser(factory: Factory, owner: Any) -> Session:
    return factory.login(owner)


def base(planned: PlannedRun, project: Project) -> str:
    return f"/api/projects/{project.id}/runs/{planned.run_id}"


def get(browser: Session, url: str, status: int = 200, **query: Any) -> dict[str, Any]:
    reply = browser.get(url, query_string=query)
    assert reply.status_code == status, reply.json
    assert reply.json is not None
    return dict(reply.json)


def item(body: dict[str, Any], target_id: int, version_id: int) -> dict[str, Any]:
    found = [i for i in body["items"]
             if i["target_id"] == target_id and i["scorer_version_id"] == version_id]
    assert len(found) == 1, body["items"]
    return found[0]


def same_mean(got: dict[str, Any], want: stats.MeanCI) -> None:
    assert (got["mean"], got["low"], got["high"], got["n_cases"]) == pytest.approx(
        (want.mean, want.low, want.high, want.n_cases))


# --- per target and scorer -------------------------------------------------------------------


def test_means_pass_rates_and_counts_match_a_hand_computation(
        factory: Factory, owner: Any, project: Project, browser: Session) -> None:
    planned = factory.planned_run(owner, project, cases=4, targets=2)
    out = outputs(planned)
    version = make_scorer(project.id)
    pin(planned.run_id, version)
    for case, value in enumerate([1.0, 1.0, 0.0, 1.0]):
        score(planned.run_id, out[case, 0, 0, 0], version, value, passed=value == 1.0)
    for case, value in enumerate([0.5, 0.25, 0.75]):  # case 3: the scorer failed
        score(planned.run_id, out[case, 1, 0, 0], version, value, passed=value > 0.4)
    score(planned.run_id, out[3, 1, 0, 0], version, None)

    body = get(browser, base(planned, project) + "/statistics")
    assert [s["scorer_version_id"] for s in body["scorers"]] == [version]
    assert body["scorers"][0]["pinned"] is True and body["scorers"][0]["version"] == 1
    first = item(body, planned.target_ids[0], version)
    assert (first["n_outputs"], first["n_scored"], first["n_failed"]) == (4, 4, 0)
    assert first["mean"]["mean"] == pytest.approx(0.75)
    assert first["mean"]["n_values"] == 4 and first["mean"]["confidence"] == 0.95
    # Wilson 95% for 3 of 4 (Newcombe 1998, method 3): 0.3006 to 0.9544
    rate = first["pass_rate"]
    assert (rate["k"], rate["n"], rate["estimate"]) == (3, 4, 0.75)
    assert (rate["low"], rate["high"]) == pytest.approx((0.3006418, 0.9544127), abs=1e-6)
    same_mean(first["mean"], stats.mean_ci({i: [v] for i, v in enumerate([1, 1, 0, 1])}))
    # the bootstrap percentile interval of a mean lies inside the values' range
    assert 0 <= first["mean"]["low"] < 0.75 < first["mean"]["high"] <= 1

    second = item(body, planned.target_ids[1], version)
    assert (second["n_outputs"], second["n_scored"], second["n_failed"]) == (4, 3, 1)
    assert second["mean"]["mean"] == pytest.approx(0.5)
    assert (second["pass_rate"]["k"], second["pass_rate"]["n"]) == (2, 3)
    assert second["flakiness"] is None and second["agreement"] is None
    assert second["criteria"] == [] and second["judge_human"] == []


def test_repeats_and_turns_of_a_case_are_resampled_together(
        factory: Factory, owner: Any, project: Project, browser: Session) -> None:
    planned = factory.planned_run(owner, project, cases=6, targets=1, repeats=3)
    out = outputs(planned)
    version = make_scorer(project.id)
    pin(planned.run_id, version)
    per_case = [[0.9, 0.9, 0.9], [0.2, 0.2, 0.2], [0.8, 0.8, 0.8], [0.1, 0.1, 0.1],
                [1.0, 0.0, 1.0], [0.5, 0.5, 0.5]]
    for case, values in enumerate(per_case):
        for repeat, value in enumerate(values):
            score(planned.run_id, out[case, 0, repeat, 0], version, value)

    found = item(get(browser, base(planned, project) + "/statistics"),
                 planned.target_ids[0], version)
    clustered = stats.mean_ci(dict(enumerate(per_case)))
    naive = stats.mean_ci({i: [v] for i, v in enumerate(np.ravel(per_case))})
    same_mean(found["mean"], clustered)
    assert found["mean"]["n_cases"] == 6 and found["mean"]["n_values"] == 18
    # 18 outputs counted as independent make the interval narrower than 6 cases allow
    assert naive.high - naive.low < (clustered.high - clustered.low) * 0.8
    assert found["mean"]["high"] - found["mean"]["low"] == pytest.approx(
        clustered.high - clustered.low)

    flaky = found["flakiness"]
    assert (flaky["n_cases"], flaky["n_flaky"]) == (6, 1)
    assert [c["case_id"] for c in flaky["cases"]] == [planned.case_ids[4]]
    assert flaky["cases"][0]["case_number"] == 5  # the dataset's number, shown for it
    assert flaky["cases"][0]["spread"] == 1.0 and flaky["cases"][0]["repeats"] == 3
    assert flaky["flaky_share"]["estimate"] == pytest.approx(1 / 6)
    want = stats.flakiness(dict(enumerate(per_case)))
    assert flaky["mean_std"] == pytest.approx(want.mean_std)


def test_conversation_turns_count_as_one_case(
        factory: Factory, owner: Any, project: Project, browser: Session) -> None:
    planned = factory.planned_run(owner, project, cases=3, targets=1, turns=2)
    out = outputs(planned)
    version = make_scorer(project.id)
    pin(planned.run_id, version)
    turns = [[1.0, 0.0], [1.0, 1.0], [0.0, 0.5]]
    for case, values in enumerate(turns):
        for turn, value in enumerate(values):
            score(planned.run_id, out[case, 0, 0, turn], version, value)
    found = item(get(browser, base(planned, project) + "/statistics"),
                 planned.target_ids[0], version)
    same_mean(found["mean"], stats.mean_ci(dict(enumerate(turns))))
    assert found["mean"]["mean"] == pytest.approx((0.5 + 1.0 + 0.25) / 3)
    assert (found["mean"]["n_cases"], found["mean"]["n_values"]) == (3, 6)
    assert found["flakiness"] is None  # one repeat: turns are not repeats


def test_criteria_are_averaged_over_judges_then_summarised(
        factory: Factory, owner: Any, project: Project, browser: Session) -> None:
    planned = factory.planned_run(owner, project, cases=3, targets=1)
    out = outputs(planned)
    version = make_scorer(project.id, "llm_judge", judges=("judge-a", "judge-b"))
    pin(planned.run_id, version)
    given = {"judge-a": [{"Accuracy": 1.0, "Clarity": 0.5}, {"Accuracy": 0.5, "Clarity": 0.5},
                         {"Accuracy": 0.0, "Clarity": 1.0}],
             "judge-b": [{"Accuracy": 0.5, "Clarity": 0.5}, {"Accuracy": 0.5, "Clarity": 0.0},
                         {"Accuracy": 0.0, "Clarity": 1.0}]}
    for judge, rows in given.items():
        for case, criteria in enumerate(rows):
            score(planned.run_id, out[case, 0, 0, 0], version,
                  sum(criteria.values()) / 2, source=judge, kind="llm_judge", criteria=criteria)
    found = item(get(browser, base(planned, project) + "/statistics"),
                 planned.target_ids[0], version)
    per_output = [{"Accuracy": 0.75, "Clarity": 0.5}, {"Accuracy": 0.5, "Clarity": 0.25},
                  {"Accuracy": 0.0, "Clarity": 1.0}]
    want = stats.criterion_breakdown(per_output)
    assert [c["name"] for c in found["criteria"]] == ["Accuracy", "Clarity"]
    for got in found["criteria"]:
        summary = want[got["name"]]
        assert (got["n"], got["avg"], got["min"], got["max"], got["std"]) == pytest.approx(
            (summary.n, summary.avg, summary.min, summary.max, summary.std))
    accuracy = found["criteria"][0]
    assert accuracy["avg"] == pytest.approx(1.25 / 3)
    assert accuracy["std"] == pytest.approx(np.std([0.75, 0.5, 0.0]))


def _alpha_interval_two_raters(a: list[float], b: list[float]) -> float:
    """Krippendorff's alpha, interval level, two raters and no missing value, by its
    definition: D_o from the pairs within units, D_e from every pair of values."""
    values = np.array(a + b)
    n = len(values)
    observed = sum((x - y) ** 2 for x, y in zip(a, b, strict=True)) * 2 / n
    expected = sum((x - y) ** 2 for i, x in enumerate(values) for j, y in enumerate(values)
                   if i != j) / (n * (n - 1))
    return 1 - observed / expected


def test_two_judges_agreement_alpha_and_kappa(
        factory: Factory, owner: Any, project: Project, browser: Session) -> None:
    planned = factory.planned_run(owner, project, cases=10, targets=1)
    out = outputs(planned)
    version = make_scorer(project.id, "llm_judge", judges=("judge-a", "judge-b"))
    pin(planned.run_id, version)
    # verdicts: both pass 4, both fail 3, only a passes 2, only b passes 1
    passes_a = [True] * 4 + [False] * 3 + [True] * 2 + [False]
    passes_b = [True] * 4 + [False] * 3 + [False] * 2 + [True]
    values_a = [0.9, 0.8, 0.75, 1.0, 0.2, 0.1, 0.3, 0.7, 0.6, 0.4]
    values_b = [1.0, 0.8, 0.7, 0.9, 0.1, 0.2, 0.2, 0.4, 0.3, 0.6]
    for case in range(10):
        for judge, values, passes in (("judge-a", values_a, passes_a),
                                      ("judge-b", values_b, passes_b)):
            score(planned.run_id, out[case, 0, 0, 0], version, values[case],
                  passed=passes[case], source=judge, kind="llm_judge")

    found = item(get(browser, base(planned, project) + "/statistics"),
                 planned.target_ids[0], version)
    agreement = found["agreement"]
    assert [(r["source"], r["n"]) for r in agreement["raters"]] == \
        [("judge-a", 10), ("judge-b", 10)]
    assert agreement["raters"][0]["mean"] == pytest.approx(np.mean(values_a))
    alpha = agreement["alpha"]
    assert alpha["alpha"] == pytest.approx(_alpha_interval_two_raters(values_a, values_b))
    assert alpha["alpha"] == pytest.approx(
        stats.krippendorff_alpha([values_a, values_b], level="interval").alpha)
    assert (alpha["level"], alpha["n_judges"], alpha["n_units"]) == ("interval", 2, 10)
    # kappa by hand: p_o = 0.7; p_e = 0.6 * 0.5 + 0.4 * 0.5 = 0.5; (0.7 - 0.5) / 0.5
    kappa = agreement["kappa"]
    assert kappa["kappa"] == pytest.approx(0.4) and kappa["n"] == 10
    assert kappa["weights"] is None
    # the output's value is the judges' mean; it passes when both judges pass
    assert found["mean"]["mean"] == pytest.approx(np.mean(values_a + values_b))
    assert (found["pass_rate"]["k"], found["pass_rate"]["n"]) == (4, 10)
    assert found["n_scored"] == 10


def test_three_judges_give_alpha_without_kappa(
        factory: Factory, owner: Any, project: Project, browser: Session) -> None:
    planned = factory.planned_run(owner, project, cases=4, targets=1)
    out = outputs(planned)
    judges = ("judge-a", "judge-b", "judge-c")
    version = make_scorer(project.id, "llm_judge", judges=judges)
    pin(planned.run_id, version)
    ratings = [[1.0, 0.5, 0.0, 0.75], [1.0, 0.5, 0.25, None], [0.75, 0.5, 0.0, 0.75]]
    for judge, row in zip(judges, ratings, strict=True):
        for case, value in enumerate(row):
            score(planned.run_id, out[case, 0, 0, 0], version, value, source=judge,
                  kind="llm_judge")
    found = item(get(browser, base(planned, project) + "/statistics"),
                 planned.target_ids[0], version)
    want = stats.krippendorff_alpha(ratings, level="interval")
    assert found["agreement"]["alpha"]["alpha"] == pytest.approx(want.alpha)
    assert found["agreement"]["alpha"]["n_values"] == 11
    assert found["agreement"]["kappa"] is None
    assert found["n_failed"] == 1  # judge-b failed on case 3; the others scored it


def test_judges_against_people_who_scored_the_same_outputs(
        factory: Factory, owner: Any, project: Project, browser: Session) -> None:
    planned = factory.planned_run(owner, project, cases=6, targets=1)
    out = outputs(planned)
    judge = make_scorer(project.id, "llm_judge", judges=("judge-a", "judge-b"))
    manual = make_scorer(project.id, "manual")  # not pinned: reviewers scored by hand
    check = make_scorer(project.id)  # deterministic: no judge, no agreement
    pin(planned.run_id, judge, check)
    judge_a = [1.0, 0.75, 0.5, 0.25, 0.0, 1.0]
    judge_b = [1.0, 0.5, 0.5, 0.25, 0.25, 0.75]
    human_1 = [1.0, 0.75, 0.25, 0.0, None, None]  # reviewer 1 rated cases 0..3
    human_2 = [0.75, None, 0.25, 0.5, None, None]  # reviewer 2 rated 0, 2, 3
    for case in range(6):
        for source, values in (("judge-a", judge_a), ("judge-b", judge_b)):
            score(planned.run_id, out[case, 0, 0, 0], judge, values[case], source=source,
                  kind="llm_judge")
        score(planned.run_id, out[case, 0, 0, 0], check, float(case % 2))
        for source, values in (("user:1", human_1), ("user:2", human_2)):
            if values[case] is not None:
                score(planned.run_id, out[case, 0, 0, 0], manual, values[case],
                      source=source, kind="manual")

    body = get(browser, base(planned, project) + "/statistics")
    assert [(s["scorer_version_id"], s["pinned"]) for s in body["scorers"]] == \
        [(judge, True), (check, True), (manual, False)]
    deterministic = item(body, planned.target_ids[0], check)
    assert deterministic["judge_human"] == [] and deterministic["agreement"] is None
    assert deterministic["mean"]["mean"] == pytest.approx(0.5)
    found = item(body, planned.target_ids[0], judge)
    human = {out[0, 0, 0, 0]: 0.875, out[1, 0, 0, 0]: 0.75, out[2, 0, 0, 0]: 0.25,
             out[3, 0, 0, 0]: 0.25}
    entries = {entry["judge"]: entry for entry in found["judge_human"]}
    assert set(entries) == {"judge-a", "judge-b", None}
    first = entries["judge-a"]
    assert (first["human_scorer_version_id"], first["reviewers"]) == (manual, 2)
    assert (first["n"], first["judge_only"], first["human_only"]) == (4, 2, 0)
    # |1 - 0.875| + |0.75 - 0.75| + |0.5 - 0.25| + |0.25 - 0.25|, over 4
    assert first["mean_abs_difference"] == pytest.approx(0.375 / 4)
    assert first["exact_agreement"] == pytest.approx(0.5)
    judged = {out[case, 0, 0, 0]: judge_a[case] for case in range(6)}
    want = stats.judge_human_agreement(judged, human, level="interval")
    assert first["alpha"]["alpha"] == pytest.approx(want.alpha.alpha)
    assert first["kappa"]["kappa"] == pytest.approx(want.kappa.kappa)
    assert first["kappa"]["weights"] == "quadratic"
    pooled = {out[c, 0, 0, 0]: (judge_a[c] + judge_b[c]) / 2 for c in range(6)}
    assert entries[None]["alpha"]["alpha"] == pytest.approx(
        stats.judge_human_agreement(pooled, human, level="interval").alpha.alpha)

    reviewers = item(body, planned.target_ids[0], manual)  # the manual scorer's own row
    assert reviewers["judge_human"] == []
    assert [r["source"] for r in reviewers["agreement"]["raters"]] == ["user:1", "user:2"]
    assert reviewers["agreement"]["alpha"]["n_units"] == 3  # outputs both reviewers rated
    assert reviewers["mean"]["mean"] == pytest.approx(np.mean(list(human.values())))

    only = get(browser, base(planned, project) + "/statistics", scorer_version_id=judge)
    assert [i["scorer_version_id"] for i in only["items"]] == [judge]
    assert len(only["items"][0]["judge_human"]) == 3  # people's scores still count


def test_no_scores_yet_is_an_empty_state_not_an_error(
        factory: Factory, owner: Any, project: Project, browser: Session) -> None:
    planned = factory.planned_run(owner, project, cases=3, targets=2, repeats=2)
    version = make_scorer(project.id)
    pin(planned.run_id, version)
    url = base(planned, project)
    found = item(get(browser, url + "/statistics"), planned.target_ids[0], version)
    assert (found["n_outputs"], found["n_scored"], found["n_failed"]) == (0, 0, 0)
    assert found["mean"] == {"mean": None, "low": None, "high": None, "n_cases": 0,
                             "n_values": 0, "confidence": 0.95}
    assert found["pass_rate"]["estimate"] is None and found["pass_rate"]["n"] == 0
    assert found["flakiness"] is None and found["agreement"] is None
    facets = get(browser, url + "/statistics/facets")
    assert [t["n_outputs"] for t in facets["targets"]] == [0, 0]
    assert facets["targets"][0]["by_tag"] == []
    compared = get(browser, url + "/compare-targets")["comparison"]
    assert (compared["n"], compared["mean_difference"], compared["verdict"]) == \
        (0, None, "not distinguishable")
    assert compared["p_value"] is None and compared["test"] is None


def test_a_run_without_any_scorer_lists_nothing(
        factory: Factory, owner: Any, project: Project, browser: Session) -> None:
    planned = factory.planned_run(owner, project, cases=2, targets=2)
    assert get(browser, base(planned, project) + "/statistics") == \
        {"run_id": planned.run_id, "scorers": [], "items": []}


# --- facets ----------------------------------------------------------------------------------


def test_facets_group_by_tag_length_and_difficulty(
        factory: Factory, owner: Any, project: Project, browser: Session) -> None:
    planned = factory.planned_run(owner, project, cases=4, targets=2)
    out = outputs(planned)
    version = make_scorer(project.id)
    pin(planned.run_id, version)
    facts = [(["billing", "refund"], "easy", "Why?"), (["billing"], "hard", "x" * 60),
             ([], None, "How?"), (["refund"], "medium", "y" * 250)]
    for case, (tags, difficulty, question) in enumerate(facts):
        set_case(planned.case_ids[case], tags=tags, difficulty=difficulty,
                 input={"question": question})
    values = [1.0, 0.0, 0.5, 1.0]
    for case, value in enumerate(values):
        score(planned.run_id, out[case, 0, 0, 0], version, value, passed=value == 1.0)
    score(planned.run_id, out[0, 1, 0, 0], version, 0.25)  # the other target: one output

    url = base(planned, project) + "/statistics/facets"
    body = get(browser, url, target_id=planned.target_ids[0])
    assert body["scorer"]["scorer_version_id"] == version and body["length_of"] == "input"
    assert [t["target_id"] for t in body["targets"]] == [planned.target_ids[0]]
    found = body["targets"][0]
    assert found["n_outputs"] == 4
    by_tag = {g["key"]: g for g in found["by_tag"]}
    assert [g["key"] for g in found["by_tag"]] == ["billing", "refund", "(untagged)"]
    assert by_tag["billing"]["mean"]["mean"] == pytest.approx(0.5)
    assert (by_tag["refund"]["pass_rate"]["k"], by_tag["refund"]["pass_rate"]["n"]) == (2, 2)
    assert [(g["key"], g["n_outputs"]) for g in found["by_length"]] == \
        [("XS", 2), ("S", 1), ("M", 1)]
    assert [g["key"] for g in found["by_difficulty"]] == ["easy", "medium", "hard", "unset"]
    records = [stats.FacetRecord(case=planned.case_ids[c], value=values[c],
                                 passed=values[c] == 1.0, tags=tuple(facts[c][0]),
                                 difficulty=facts[c][1], input_chars=len(facts[c][2]))
               for c in range(4)]
    want = stats.facets(records)
    for name in ("by_tag", "by_length", "by_difficulty"):
        for got, group in zip(found[name], getattr(want, name), strict=True):
            assert (got["key"], got["n_cases"]) == (group.key, group.n_cases)
            same_mean(got["mean"], group.mean)
            assert (got["pass_rate"]["low"], got["pass_rate"]["high"]) == pytest.approx(
                (group.pass_rate.low, group.pass_rate.high))

    both = get(browser, url, length_of="output")
    assert [t["n_outputs"] for t in both["targets"]] == [4, 1]
    assert [g["key"] for g in both["targets"][0]["by_length"]] == ["XS"]  # "An answer"


# --- paired comparisons ----------------------------------------------------------------------


def test_compare_targets_verdict_follows_the_data(
        factory: Factory, owner: Any, project: Project, browser: Session) -> None:
    planned = factory.planned_run(owner, project, cases=12, targets=3)
    out = outputs(planned)
    version = make_scorer(project.id)
    pin(planned.run_id, version)
    for case in range(12):
        score(planned.run_id, out[case, 0, 0, 0], version, 0.0, passed=False)
        score(planned.run_id, out[case, 1, 0, 0], version, 1.0, passed=True)
        score(planned.run_id, out[case, 2, 0, 0], version, 0.0 if case < 11 else 1.0,
              passed=case == 11)
    url = base(planned, project) + "/compare-targets"
    first, second, third = planned.target_ids

    body = get(browser, url)  # the run's first two targets, its first scorer
    assert (body["target_a"]["target_id"], body["target_b"]["target_id"]) == (first, second)
    assert body["scorer"]["scorer_version_id"] == version
    result = body["comparison"]
    assert (result["verdict"], result["test"], result["binary"]) == \
        ("B better", "mcnemar_exact", True)
    assert (result["n"], result["b_higher"], result["a_higher"]) == (12, 12, 0)
    assert result["p_value"] == pytest.approx(2 * 0.5 ** 12)  # exact two-sided sign test
    assert result["mean_difference"] == 1.0 and result["pass_rate_difference"] == 1.0

    swapped = get(browser, url, target_a=second, target_b=first)["comparison"]
    assert swapped["verdict"] == "A better" and swapped["mean_difference"] == -1.0
    close = get(browser, url, target_a=first, target_b=third)["comparison"]
    assert close["verdict"] == "not distinguishable"
    assert close["p_value"] == 1.0  # one discordant case
    assert get(browser, url, target_b=first)["target_a"]["target_id"] == second


def test_compare_targets_on_case_means_with_dropped_cases(
        factory: Factory, owner: Any, project: Project, browser: Session) -> None:
    planned = factory.planned_run(owner, project, cases=8, targets=2, repeats=2)
    out = outputs(planned)
    version = make_scorer(project.id)
    pin(planned.run_id, version)
    rng = np.random.default_rng(3)
    a = {c: [float(v) for v in rng.uniform(0.2, 0.6, 2)] for c in range(8)}
    b = {c: [float(v) for v in rng.uniform(0.4, 0.9, 2)] for c in range(1, 8)}  # not case 0
    for side, values in ((0, a), (1, b)):
        for case, repeats in values.items():
            for repeat, value in enumerate(repeats):
                score(planned.run_id, out[case, side, repeat, 0], version, value)
    result = get(browser, base(planned, project) + "/compare-targets",
                 scorer_version_id=version)["comparison"]
    want = stats.compare_paired(stats.case_means(a), stats.case_means(b))
    assert (result["n"], result["dropped_a"], result["dropped_b"]) == (7, 1, 0)
    assert (result["test"], result["binary"]) == ("wilcoxon_signed_rank", False)
    for name in ("mean_a", "mean_b", "mean_difference", "low", "high", "effect_size",
                 "p_value"):
        assert result[name] == pytest.approx(getattr(want, name)), name
    assert result["verdict"] == want.verdict


def test_compare_runs_matches_targets_and_cases(
        factory: Factory, owner: Any, project: Project, browser: Session) -> None:
    planned = factory.planned_run(owner, project, cases=6, targets=2)
    out = outputs(planned)
    first_version = make_scorer(project.id)
    pin(planned.run_id, first_version)
    later = rerun(planned, ["Target 0", "Renamed", "Extra"], model_from=[0, 1, 0])
    later_out = outputs(later)
    second_version = new_version(project.id, first_version)  # the scorer was edited since
    pin(later.run_id, second_version)
    base_values = {0: [0.1, 0.2, 0.3, 0.2, 0.1, 0.9], 1: [0.5, 0.5, 0.6, 0.4, 0.5, 0.5]}
    head_values = {0: [0.9, 0.8, 0.9, 0.7, 0.8, 0.9], 1: [0.5, 0.4, 0.6, 0.5, 0.5, 0.6],
                   2: [1.0] * 6}
    for target, values in base_values.items():
        for case in range(5):  # cases 0..4
            score(planned.run_id, out[case, target, 0, 0], first_version, values[case])
    for target, values in head_values.items():
        for case in range(1, 6):  # cases 1..5
            score(later.run_id, later_out[case, target, 0, 0], second_version, values[case])

    body = get(browser, f"/api/projects/{project.id}/runs/{later.run_id}/compare/"
                        f"{planned.run_id}")
    assert (body["run_id"], body["base_run_id"]) == (later.run_id, planned.run_id)
    assert body["scorer"]["scorer_version_id"] == second_version
    assert (body["base_scorer"]["scorer_version_id"], body["base_scorer"]["version"]) == \
        (first_version, 1)
    assert [(p["target_a"]["label"], p["target_b"]["label"]) for p in body["pairs"]] == \
        [("Target 0", "Target 0"), ("Target 1", "Renamed")]
    assert [t["label"] for t in body["unmatched_b"]] == ["Extra"] and body["unmatched_a"] == []
    for pair, side in zip(body["pairs"], (0, 1), strict=True):
        a = {c: base_values[side][c] for c in range(5)}
        b = {c: head_values[side][c] for c in range(1, 6)}
        want = stats.compare_paired(a, b)
        result = pair["comparison"]
        assert (result["n"], result["dropped_a"], result["dropped_b"]) == (4, 1, 1)
        assert result["mean_difference"] == pytest.approx(want.mean_difference)
        assert (result["low"], result["high"]) == pytest.approx((want.low, want.high))
        assert result["verdict"] == want.verdict
    # four cases, all better in B: the interval excludes 0, but the exact signed-rank
    # test's smallest p at n=4 is 0.125, so no side is called better
    first = body["pairs"][0]["comparison"]
    assert first["low"] > 0 and first["p_value"] == pytest.approx(0.125)
    assert first["verdict"] == "not distinguishable"
    assert body["pairs"][1]["comparison"]["verdict"] == "not distinguishable"

    back = get(browser, f"/api/projects/{project.id}/runs/{planned.run_id}/compare/"
                        f"{later.run_id}", scorer_version_id=first_version)
    assert back["base_scorer"]["scorer_version_id"] == second_version
    assert back["pairs"][0]["comparison"]["high"] < 0
    assert back["pairs"][0]["comparison"]["verdict"] == "not distinguishable"
    assert [t["label"] for t in back["unmatched_a"]] == ["Extra"]


# --- bad input -------------------------------------------------------------------------------


def _error(reply: Any, status: int, field: str | None = None) -> str:
    assert reply.status_code == status, reply.json
    body = reply.json
    assert body is not None and body["status"] == status
    if field is None:
        return str(body["message"])
    messages = body["errors"]["query"][field]
    return " ".join(messages)


def test_unknown_runs_and_scorers_are_404(
        factory: Factory, owner: Any, project: Project, browser: Session) -> None:
    planned = factory.planned_run(owner, project, cases=2, targets=2)
    pin(planned.run_id, make_scorer(project.id))
    other = factory.project(factory.user(), "Other")
    foreign_version = make_scorer(other.id)
    missing = f"/api/projects/{project.id}/runs/{planned.run_id + 1000}"
    for path in ("/statistics", "/statistics/facets", "/compare-targets",
                 f"/compare/{planned.run_id}"):
        assert _error(browser.get(missing + path), 404) == "Run not found"
    url = base(planned, project)
    assert _error(browser.get(url + f"/compare/{planned.run_id + 1000}"), 404) == \
        "Run not found"
    for path in ("/statistics", "/statistics/facets", "/compare-targets",
                 f"/compare/{planned.run_id}"):
        for version in (foreign_version, foreign_version + 1000):
            reply = browser.get(url + path, query_string={"scorer_version_id": version})
            assert _error(reply, 404) == "Scorer version not found"


def test_scorers_outside_the_run_are_422_naming_the_choices(
        factory: Factory, owner: Any, project: Project, browser: Session) -> None:
    planned = factory.planned_run(owner, project, cases=2, targets=2)
    pinned = make_scorer(project.id, name="Mentions the answer")
    pairwise = make_scorer(project.id, "pairwise_judge", name="Which is better")
    pin(planned.run_id, pinned, pairwise)
    elsewhere = make_scorer(project.id, name="Unused")
    url = base(planned, project)
    assert [s["scorer_version_id"] for s in get(browser, url + "/statistics")["scorers"]] == \
        [pinned]
    for path in ("/statistics", "/statistics/facets", "/compare-targets"):
        message = _error(browser.get(url + path, query_string={
            "scorer_version_id": elsewhere}), 422, "scorer_version_id")
        assert "'Unused' v1 is not pinned by this run" in message
        assert f"'Mentions the answer' v1 (scorer_version_id {pinned})" in message
        message = _error(browser.get(url + path, query_string={
            "scorer_version_id": pairwise}), 422, "scorer_version_id")
        assert "pairwise judge" in message


def test_targets_must_be_two_different_targets_of_the_run(
        factory: Factory, owner: Any, project: Project, browser: Session) -> None:
    planned = factory.planned_run(owner, project, cases=2, targets=2)
    other = factory.planned_run(owner, project, cases=2, targets=1)
    for run in (planned, other):
        pin(run.run_id, make_scorer(project.id))
    url = base(planned, project)
    foreign_target, unknown = other.target_ids[0], other.target_ids[0] + 1000
    for target in (foreign_target, unknown):
        assert _error(browser.get(url + "/compare-targets", query_string={
            "target_a": target}), 422, "target_a") == "Not a target of this run"
        assert _error(browser.get(url + "/compare-targets", query_string={
            "target_b": target}), 422, "target_b") == "Not a target of this run"
        assert _error(browser.get(url + "/statistics/facets", query_string={
            "target_id": target}), 422, "target_id") == "Not a target of this run"
    same = planned.target_ids[0]
    assert "two different targets" in _error(browser.get(url + "/compare-targets", query_string={
        "target_a": same, "target_b": same}), 422, "target_b")
    single = _error(browser.get(base(other, project) + "/compare-targets"), 422, "target_b")
    assert "compare the run with another run" in single


def test_runs_must_share_the_dataset_and_the_scorer(
        factory: Factory, owner: Any, project: Project, browser: Session) -> None:
    planned = factory.planned_run(owner, project, cases=2, targets=2)
    elsewhere = factory.planned_run(owner, project, cases=2, targets=2)  # its own dataset
    version = make_scorer(project.id, name="Shared")
    pin(planned.run_id, version)
    pin(elsewhere.run_id, version)
    reply = browser.get(base(planned, project) + f"/compare/{elsewhere.run_id}")
    assert reply.status_code == 422 and reply.json is not None
    assert "only runs of one dataset" in reply.json["errors"]["path"]["base_run_id"][0]

    unscored = rerun(planned, ["Target 0"], model_from=[0])
    other_version = make_scorer(project.id, name="Other")
    pin(unscored.run_id, other_version)
    message = _error(browser.get(base(unscored, project) + f"/compare/{planned.run_id}"),
                     422, "scorer_version_id")
    assert "neither pins nor holds scores of 'Other'" in message
    assert f"scorer_version_id {version}" in message

    foreign_owner = factory.user()
    foreign = factory.planned_run(foreign_owner, factory.project(foreign_owner, "Theirs"))
    assert _error(browser.get(base(planned, project) + f"/compare/{foreign.run_id}"),
                  404) == "Run not found"


def test_a_run_without_scorers_says_what_to_do(
        factory: Factory, owner: Any, project: Project, browser: Session) -> None:
    planned = factory.planned_run(owner, project, cases=2, targets=2)
    url = base(planned, project)
    for path in ("/statistics/facets", "/compare-targets", f"/compare/{planned.run_id}"):
        message = _error(browser.get(url + path), 422, "scorer_version_id")
        assert "score this one's outputs with a manual scorer" in message
    assert _error(browser.get(url + "/statistics/facets", query_string={
        "length_of": "sideways"}), 422, "length_of")
