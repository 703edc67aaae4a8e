"""What the review screens read, through HTTP on the fake provider: judge failures counted
by judge and reason (and the composite's outputs), the CSV naming judges by model name, the
best version stored, the delta with its interval on the live state from iteration 2, and a
hand-edited approval's own changelog."""

from __future__ import annotations

import csv
import io

from sqlalchemy import select

from assay.core.prompts.models import PromptVersion
from assay.extensions import db
from assay.providers.fake import FakeProviderThread
from assay.settings import Settings
from tests.engine.experiment_setup import (  # noqa: F401
    E1,
    build,
    experiment,
    recorded,
    scripts,
)
from tests.engine.test_experiment_loop import Calls, drive, url
from tests.engine.test_providers_engine import configure, fake  # noqa: F401
from tests.factories import Factory


def test_judge_failures_are_counted_by_judge_and_reason_and_the_csv_names_judges(
        factory: Factory, settings: Settings, fake: FakeProviderThread,  # noqa: F811
        recorded: Calls) -> None:  # noqa: F811
    b = build(factory, settings, fake, judges_by_id=True)
    found = scripts()
    # the judge answers prose (not the JSON asked for) on two of the ten outputs
    found.insert(-1, {"model": "fake-judge", "pattern": "question number [37] about",
                      "reply": "This answer looks fine to me."})
    configure(fake, scripts=found)
    me = factory.login(b.owner)
    drive(recorded)
    body = me.get(url(b, "/iterations/1")).json
    judging = body["aggregate"]["judging"]
    assert (judging["outputs"], judging["scored"], judging["failed"],
            judging["failed_outputs"]) == (10, 8, 2, 2), judging
    assert [(f["judge"], f["reason"], f["count"]) for f in judging["failures"]] == [
        ("Judge", "reply was not the JSON asked for", 2)]
    assert "reply rejected" in judging["failures"][0]["example"]
    assert list(judging["targets"].values()) == [{"outputs": 10, "scored": 8}]
    composite = next(iter(body["aggregate"]["models"].values()))["all"]["composite"]
    assert composite["n"] == 8  # the composite rests on the eight judged outputs' cases

    reply = me.get(url(b, "/report/export?format=csv"))
    assert reply.status_code == 200
    rows = list(csv.DictReader(io.StringIO(reply.get_data(as_text=True))))
    assert rows and {r["judge"] for r in rows} == {"Judge"}, {r["judge"] for r in rows}


def test_best_version_delta_on_the_live_state_and_a_hand_edit_changelog(
        factory: Factory, settings: Settings, fake: FakeProviderThread,  # noqa: F811
        recorded: Calls) -> None:  # noqa: F811
    b = build(factory, settings, fake)
    me = factory.login(b.owner)
    drive(recorded)
    first = experiment(b.experiment_id)
    assert first.best_prompt_version_id == first.seed_prompt_version_id
    live = me.get(url(b, "/progress")).json["iteration"]
    assert live["number"] == 1 and live["delta"] is None  # nothing to compare with yet

    edited = me.post(url(b, "/iterations/1/edit"),
                     json={"diff": E1, "comment": "Say sorry in rule 4 instead"})
    assert edited.status_code == 200, edited.json
    approved = me.post(url(b, "/iterations/1/approve"), json={})
    assert approved.status_code == 200, approved.json
    with db.factory() as session:
        version = session.get(PromptVersion, approved.json["prompt_version_id"])
        assert version is not None
        note = version.note or ""
    assert note.startswith("Iteration 1, edited by hand: Say sorry in rule 4 instead"), note
    assert "the refiner proposed: Makes the answer warmer" in note

    drive(recorded)
    live = me.get(url(b, "/progress")).json["iteration"]
    assert live["number"] == 2 and live["phase"] == "awaiting_review", live
    delta = live["delta"]
    assert delta is not None, live
    for split in ("all", "holdout"):
        assert delta[split]["mean_difference"] is not None, delta
        assert delta[split]["low"] is not None and delta[split]["high"] is not None, delta
    assert delta["holdout"]["n"] == 3  # ten cases, 30% held out
    detail = me.get(url(b, "/iterations/2")).json
    assert detail["aggregate"]["delta"][delta["model"]]["holdout"]["n"] == 3
    with db.factory() as session:
        stored = session.scalar(select(PromptVersion.id).where(
            PromptVersion.id == experiment(b.experiment_id).best_prompt_version_id))
    assert stored is not None


def test_counterexamples_take_expected_as_text_and_a_refused_one_names_its_field(
        factory: Factory, settings: Settings, fake: FakeProviderThread,  # noqa: F811
        recorded: Calls) -> None:  # noqa: F811
    b = build(factory, settings, fake)
    me = factory.login(b.owner)
    drive(recorded)
    added = me.post(url(b, "/iterations/1/counterexamples"), json={"cases": [
        {"input": {"question": "Can I reset it twice?"}, "expected": "Yes, any time."},
        {"input": {"question": "And the lights?"}, "expected": {"answer": "Blue."}}]})
    assert added.status_code == 201, added.json
    with db.factory() as session:
        from assay.core.datasets.models import Case

        kept = session.scalars(select(Case.expected).where(
            Case.id.in_(experiment(b.experiment_id).refinement_case_ids))
            .order_by(Case.id.desc()).limit(2)).all()
    assert kept == [{"answer": "Blue."}, {"answer": "Yes, any time."}]
    refused = me.post(url(b, "/iterations/1/counterexamples"), json={"cases": [
        {"input": {"question": "Fine?"}}, {"input": {"question": "Odd?"}, "expected": 5}]})
    assert refused.status_code == 422
    assert refused.json["message"].endswith(
        "case 2, expected: must be text, an object or null"), refused.json["message"]
    assert refused.json["errors"]["json"]["cases"] == {
        "1": {"expected": ["must be text, an object or null"]}}
