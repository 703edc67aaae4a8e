"""An iteration's facets through the API, on each split of the experiment's cases: the
refinement set (what the refiner sees), the held-out set (what it never sees) and all
cases; every group's mean with its interval; a bad split is a clear 422."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import update

from assay.core.datasets.models import Case
from assay.core.datasets.service import create_dataset, latest_version, version_cases
from assay.core.experiments.models import Experiment, Iteration
from assay.core.projects.models import Project, Role
from assay.extensions import db
from tests.api.experiment_rows import experiment_in_state
from tests.factories import Factory, Session

# case index -> (tags, difficulty, composite of model A, composite of model B or None)
CASES = [(["billing"], "easy", 0.9, 0.5), (["shipping"], "hard", 0.4, 0.6),
         (["billing"], "easy", 0.8, None), (["shipping"], "hard", 0.3, 0.7),
         (["billing"], "hard", 0.7, 0.6), (["billing"], "easy", 0.2, 0.1),
         (["shipping"], "easy", 0.6, 0.5), (["shipping"], None, 1.0, 0.9)]
REFINEMENT, HOLDOUT = range(0, 5), range(5, 8)
A, B = "model-a (temperature=0.2)", "model-b"


@pytest.fixture
def setup(factory: Factory) -> tuple[Session, str, list[int]]:
    owner = factory.user()
    project = factory.project(owner, "Facets")
    made = experiment_in_state(project.id, factory.settings.fake_provider_url)
    with db.factory() as session:
        experiment = session.get(Experiment, made["experiment_id"])
        assert experiment is not None
        # experiment_in_state makes four untagged cases: facets need more, tagged, one long
        dataset = create_dataset(session, None, session.get(Project, project.id),
                                 "Faceted", "questions",
                                 [{"input": {"question": ("Why? " * 60) if i == 7
                                             else f"Q{i}?"}, "tags": tags}
                                  for i, (tags, _, _, _) in enumerate(CASES)])
        version = latest_version(session, dataset.id)
        ids = [c.id for c in version_cases(session, version.id)]
        for case_id, (_, difficulty, _, _) in zip(ids, CASES, strict=True):
            session.execute(update(Case).where(Case.id == case_id).values(
                difficulty=difficulty))
        experiment.dataset_version_id = version.id
        experiment.refinement_case_ids = [ids[i] for i in REFINEMENT]
        experiment.holdout_case_ids = [ids[i] for i in HOLDOUT]
        cases = {A: {str(ids[i]): a for i, (_, _, a, _) in enumerate(CASES)},
                 B: {str(ids[i]): b for i, (_, _, _, b) in enumerate(CASES) if b is not None}}
        session.execute(update(Iteration).where(
            Iteration.experiment_id == experiment.id, Iteration.number == 1).values(
            dataset_version_id=version.id, aggregate={"models": {}, "cases": cases}))
        session.commit()
    url = f"/api/projects/{project.id}/experiments/{made['experiment_id']}/iterations/1/facets"
    return factory.login(owner), url, ids


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


def _group(groups: list[dict[str, Any]], key: str) -> dict[str, Any]:
    return next(g for g in groups if g["key"] == key)


@pytest.mark.parametrize("split, chosen", [("refinement", REFINEMENT), ("holdout", HOLDOUT),
                                           ("all", range(8))])
def test_each_split_groups_only_its_cases(setup: tuple[Session, str, list[int]], split: str,
                                          chosen: range) -> None:
    browser, url, _ = setup
    reply = browser.get(url, query_string={"split": split})
    assert reply.status_code == 200, reply.json
    body = reply.json
    assert body["split"] == split and body["number"] == 1 and body["length_of"] == "input"
    assert body["split_cases"] == (None if split == "all" else len(chosen))
    models = {m["label"]: m for m in body["models"]}
    assert set(models) == {A, B}
    a = models[A]
    assert a["n_cases"] == len(chosen)
    for tag in ("billing", "shipping"):
        values = [CASES[i][2] for i in chosen if CASES[i][0] == [tag]]
        if not values:
            assert all(g["key"] != tag for g in a["by_tag"])
            continue
        group = _group(a["by_tag"], tag)
        assert group["n_cases"] == len(values)
        assert group["mean"]["mean"] == pytest.approx(_mean(values))
        if len(values) >= 2:  # every number carries its interval
            assert group["mean"]["low"] <= group["mean"]["mean"] <= group["mean"]["high"]
        assert group["mean"]["confidence"] == 0.95
        assert group["pass_rate"]["n"] == 0  # composites carry no verdict
    hard = [CASES[i][2] for i in chosen if CASES[i][1] == "hard"]
    if hard:
        assert _group(a["by_difficulty"], "hard")["mean"]["mean"] == pytest.approx(_mean(hard))
    # model B lacks case 2: it is left out, never a zero
    assert models[B]["n_cases"] == len([i for i in chosen if CASES[i][3] is not None])
    lengths = {g["key"]: g["n_cases"] for g in a["by_length"]}
    assert lengths == ({"XS": len(chosen) - 1, "M": 1} if 7 in chosen
                       else {"XS": len(chosen)})


def test_the_split_defaults_to_all_cases(setup: tuple[Session, str, list[int]]) -> None:
    browser, url, _ = setup
    body = browser.get(url).json
    assert body["split"] == "all" and {m["n_cases"] for m in body["models"]} == {8, 7}


@pytest.mark.parametrize("bad", ["held-out", "HOLDOUT", "", "refinement,holdout"])
def test_a_bad_split_is_a_clear_422(setup: tuple[Session, str, list[int]], bad: str) -> None:
    browser, url, _ = setup
    reply = browser.get(url, query_string={"split": bad})
    assert reply.status_code == 422
    assert reply.json["code"] == "VALIDATION_ERROR"
    message = " ".join(reply.json["errors"]["query"]["split"])
    assert "refinement" in message and "holdout" in message and "all" in message


def test_before_aggregation_there_are_no_facets(setup: tuple[Session, str, list[int]]) -> None:
    browser, url, _ = setup
    with db.factory() as session:
        session.execute(update(Iteration).where(Iteration.number == 1,
                                                Iteration.experiment_id == _experiment_of(
                                                    url)).values(aggregate=None))
        session.commit()
    body = browser.get(url, query_string={"split": "holdout"}).json
    assert body["models"] == [] and body["split_cases"] == 3


def test_a_viewer_reads_and_a_stranger_cannot(setup: tuple[Session, str, list[int]],
                                              factory: Factory) -> None:
    browser, url, _ = setup
    project_id = int(url.split("/")[3])
    with db.factory() as session:
        project = session.get(Project, project_id)
    assert project is not None
    viewer = factory.login(factory.member(project, Role.viewer))
    assert viewer.get(url, query_string={"split": "refinement"}).status_code == 200
    assert factory.signed_in().get(url).status_code in (403, 404)
    missing = url.replace("/iterations/1/", "/iterations/9/")
    assert browser.get(missing).status_code == 404


def _experiment_of(url: str) -> int:
    return int(url.split("/")[5])
