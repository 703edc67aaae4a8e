"""A new run pins each scorer at its latest version (scorer_ids) or at a chosen one
(scorer_version_ids); the estimate and the run see the same versions, and a bad choice is
a 422 naming the entry, with nothing written."""

from __future__ import annotations

from typing import Any

from assay.core.scoring.models import ScorerVersion
from assay.extensions import db
from tests.api.test_runs_create import World, _judge_scorer, _rows, world  # noqa: F401


def _versions(world: World) -> tuple[int, int, int]:  # noqa: F811
    """(scorer id, version 1 id, version 2 id) of a reference check with two versions."""
    base = f"/api/projects/{world.project.id}/scorers"
    made = world.browser.post(base, json={"name": "Says", "kind": "icontains",
                                          "params": {"value": "question"}})
    assert made.status_code == 201, made.json
    again = world.browser.post(f"{base}/{made.json['id']}/versions",
                               json={"params": {"value": "answer"}})
    assert again.status_code == 201, again.json
    with db.factory() as session:
        ids = sorted(v.id for v in session.query(ScorerVersion).filter_by(
            scorer_id=made.json["id"]))
    return made.json["id"], ids[0], ids[1]


def test_a_run_pins_a_chosen_version_or_the_latest(world: World) -> None:  # noqa: F811
    scorer_id, v1, v2 = _versions(world)
    body: dict[str, Any] = {"dataset_id": world.questions,
                            "targets": [{"model_id": world.model_id}]}
    chosen = world.browser.post(world.url, json={**body, "scorer_version_ids": [v1]})
    assert chosen.status_code == 202, chosen.json
    assert [(s["scorer_version_id"], s["version"]) for s in chosen.json["scorers"]] == [(v1, 1)]
    latest = world.browser.post(world.url, json={**body, "scorer_ids": [scorer_id]})
    assert [(s["scorer_version_id"], s["version"]) for s in latest.json["scorers"]] == [(v2, 2)]


def test_an_estimate_prices_the_judge_of_a_chosen_version(world: World) -> None:  # noqa: F811
    scorer_id, _ = _judge_scorer(world, priced=True)
    with db.factory() as session:
        version = session.query(ScorerVersion).filter_by(scorer_id=scorer_id).one().id
    body = {"dataset_id": world.questions, "targets": [{"model_id": world.model_id}]}
    by_id = world.browser.post(world.url + "/estimate",
                               json={**body, "scorer_ids": [scorer_id]}).json
    by_version = world.browser.post(world.url + "/estimate",
                                    json={**body, "scorer_version_ids": [version]}).json
    assert by_version["judge_calls"] == by_id["judge_calls"] == 3
    assert by_version["judge_high_micros"] == by_id["judge_high_micros"] > 0


def test_a_bad_version_choice_is_a_422_and_writes_nothing(world: World) -> None:  # noqa: F811
    scorer_id, v1, _ = _versions(world)
    body: dict[str, Any] = {"dataset_id": world.questions,
                            "targets": [{"model_id": world.model_id}]}
    for extra, field in (({"scorer_version_ids": [999_999]}, "scorer_version_ids"),
                         ({"scorer_version_ids": [v1], "scorer_ids": [scorer_id]},
                          "scorer_ids"),
                         ({"scorer_version_ids": ["1"]}, "scorer_version_ids")):
        for tail in ("", "/estimate"):
            reply = world.browser.post(world.url + tail, json={**body, **extra})
            assert reply.status_code == 422, (extra, reply.json)
            assert field in reply.json["errors"]["json"], reply.json
    archived = world.browser.post(
        f"/api/projects/{world.project.id}/scorers/{scorer_id}/archive")
    assert archived.status_code == 200, archived.json
    reply = world.browser.post(world.url, json={**body, "scorer_version_ids": [v1]})
    assert reply.status_code == 422
    assert "archived" in reply.json["errors"]["json"]["scorer_version_ids"]["0"][0]
    assert _rows() == (0, 0, 0)
