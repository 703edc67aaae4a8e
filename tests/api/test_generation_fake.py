"""Generation over the shipped fake provider with no scripts: its content-aware replies give
the number of items asked for (questions in batches, conversations from a document)."""

from __future__ import annotations

from tests.api.test_generation import Setup, make_document, setup, start

__all__ = ["setup"]  # the fixture, imported for pytest

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
