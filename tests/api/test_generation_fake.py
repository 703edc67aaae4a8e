"""Generation over the shipped fake provider with no scripts: its content-aware replies give
the number of items asked for (questions in batches, conversations from a document)."""

from __future__ import annotations

from typing import Any

from tests.api.test_generation import Setup, make_document, scripts, setup, start

__all__ = ["scripts", "setup"]  # the fixtures, imported for pytest

DOC = ("Returns are accepted within 30 days of delivery. Refunds go back to the original "
       "payment method within 14 days. Opened software cannot be returned unless it is "
       "faulty. Express shipping costs 9 euros and arrives in two business days. Gift "
       "cards never expire and can be used on any order.")


def test_questions_over_the_fake_give_every_item_asked_for(setup: Setup) -> None:
    job = start(setup, "questions", {"model_id": setup.smart, "count": 30,
                                     "topic": "home espresso", "difficulty": "medium"})
    assert job["status"] == "succeeded", job
    assert (job["batches"], job["requested"], job["received"]) == (2, 30, 30)
    assert job["warnings"] == []
    assert len({item["question"] for item in job["items"]}) == 30
    assert all("home espresso" in item["question"] for item in job["items"])


def test_conversations_over_the_fake_are_grounded_in_the_document(setup: Setup) -> None:
    document_id = make_document(setup.project.id, DOC, "returns.txt")
    job = start(setup, "conversations", {"model_id": setup.fast, "document_id": document_id,
                                         "count": 6, "turns": 2})
    assert job["status"] == "succeeded", job
    assert (job["requested"], job["received"]) == (6, 6) and job["warnings"] == []
    for item in job["items"]:
        assert [t["turn_number"] for t in item["turns"]] == [1, 2]
        assert all(t["ground_truth"] in DOC for t in item["turns"])


def test_a_reply_with_no_usable_item_fails_with_the_reason(setup: Setup,
                                                           scripts: Any) -> None:
    scripts(("about: tides", '[{"answer": "no question here"}, {"answer": "nor here"}]'))
    job = start(setup, "questions", {"model_id": setup.fast, "count": 6, "topic": "tides"})
    assert (job["status"], job["received"]) == ("failed", 0)
    assert job["error"] == "0 of 6 questions: 2 item(s) without a question dropped"
    refused = setup.browser.post(f"{setup.base}/{job['id']}/accept",
                                 json={"dataset_name": "Tides"})
    assert refused.status_code == 409


def test_a_partial_job_can_still_be_accepted(setup: Setup, scripts: Any) -> None:
    scripts(("about: tides", '[{"question": "Why are there two tides a day?"}, '
                             '{"question": "Why are there two tides a day?"}, "nonsense ]"]'))
    job = start(setup, "questions", {"model_id": setup.fast, "count": 4, "topic": "tides"})
    assert (job["status"], job["received"]) == ("partial", 2)
    assert job["error"].startswith("2 of 4 questions: 1 duplicate question(s) dropped")
    accepted = setup.browser.post(f"{setup.base}/{job['id']}/accept",
                                  json={"dataset_name": "Tides"})
    assert accepted.status_code == 201 and accepted.json["cases"] == 2
