"""The fake provider answers every kind of request Assay sends: each prompt below is
rendered by the real builder and its reply read by the real parser; scores follow the
output judged; replies are deterministic by seed."""

from __future__ import annotations

import asyncio
import statistics
from collections.abc import Mapping
from typing import Any

import httpx
import pytest

from assay.core.generation import parsing, prompts
from assay.providers.fake import FakeConfig, FakeProviderThread, Script
from assay.providers.fake_shapes import content_text, make_reply, system_text
from assay.scorers.base import Context, JudgeReply, Subject
from assay.scorers.judge import RubricJudge
from assay.scorers.metajudge import META_REPLY, critique_messages, critique_rubric
from assay.scorers.pairwise import PairwiseJudge
from assay.scorers.question_quality import QuestionQuality
from assay.scorers.rag import RagMetrics
from assay.scorers.verdict import VerdictJudge, verdict_format

NONCE = "0123456789abcdef0123456789abcdef"
RUBRIC = {"criteria": [
    {"name": "accuracy", "description": "Matches the reference answer", "weight": 0.6,
     "scale": "0-5"},
    {"name": "clarity", "description": "Easy to read and well formed", "weight": 0.4,
     "scale": "1-10"}]}
REFERENCE = "Refunds are paid within 14 days to the original payment method."
GOOD = ("Refunds are paid within 14 days, always to the original payment method you used "
        "at checkout.")
BAD = "fake-mini says: I think"
DOC = ("Acme Cloud keeps your backups for 30 days. Restores are free for the first three "
       "requests each month. Support answers within four business hours on weekdays. "
       "Accounts can be closed at any time from the billing page.")


def reply_to(messages: list[dict[str, Any]], model: str = "fake-judge",
             params: Mapping[str, Any] | None = None, seed: int = 7) -> str:
    last_user = content_text(messages[-1]["content"])
    body = {"model": model, "messages": messages, **(params or {})}
    return make_reply(model, last_user, (), messages, system_text(messages), body, seed)


def rubric_value(output: str, judge: str = "fake-judge") -> float:
    scorer = RubricJudge({"rubric": RUBRIC, "judges": [judge]})
    subject = Subject(output, {"question": "How are refunds paid?"}, reference=REFERENCE)
    data, _ = scorer.reply_format.read(reply_to(scorer.messages(subject, NONCE), judge,
                                                scorer.reply_format.params))
    return float(data["criteria"]["accuracy"]["score"])


def test_rubric_judge_reply_is_valid_and_follows_the_output() -> None:
    assert rubric_value(GOOD) > rubric_value(BAD)
    values = {rubric_value(f"Refunds {extra}") for extra in
              ("are paid", "are paid within 14 days", "go to the original payment method",
               "take a while", "are paid within 14 days to the original payment method")}
    assert len(values) >= 3  # not flat


def test_rubric_judge_without_response_format_is_recognised_from_the_prompt() -> None:
    scorer = RubricJudge({"rubric": RUBRIC, "judges": ["fake-judge"]})
    subject = Subject(GOOD, {"question": "How are refunds paid?"}, reference=REFERENCE)
    text = reply_to(scorer.messages(subject, NONCE))  # as Anthropic gets it: no schema
    data, fenced = scorer.reply_format.read(text)
    assert not fenced and 0 <= data["criteria"]["accuracy"]["score"] <= 5
    assert 1 <= data["criteria"]["clarity"]["score"] <= 10


def test_rubric_judge_reply_carries_a_confidence_that_follows_the_material() -> None:
    scorer = RubricJudge({"rubric": RUBRIC, "judges": ["fake-judge"]})

    def confidence(subject: Subject) -> float:
        data, _ = scorer.reply_format.read(reply_to(scorer.messages(subject, NONCE)))
        return float(data["confidence"])

    question = {"question": "How are refunds paid?"}
    checked = confidence(Subject(GOOD, question, reference=REFERENCE))
    unchecked = confidence(Subject(GOOD, question))
    assert 0 < unchecked < checked < 1  # a reference to check against makes it surer
    # the other rubric judges' formats do not ask for one, and do not get one
    rag = RagMetrics({"judges": ["fake-judge"]})
    data, _ = rag.reply_format.read(reply_to(rag.messages(
        Subject(GOOD, question, context=DOC), NONCE)))
    assert "confidence" not in data


def test_rag_metrics_reply_is_valid_and_groundedness_follows_the_grounding() -> None:
    scorer = RagMetrics({"judges": ["fake-judge"]})

    def metrics(output: str) -> dict[str, Any]:
        subject = Subject(output, {"question": "How long are backups kept?"}, context=DOC)
        data, _ = scorer.reply_format.read(reply_to(scorer.messages(subject, NONCE)))
        return {k: v["score"] for k, v in data["criteria"].items()}

    good = metrics("Acme Cloud keeps your backups for 30 days.")
    bad = metrics("Forever")
    assert set(good) == {"groundedness", "relevance", "coherence", "fluency"}
    assert all(1 <= v <= 5 for v in (*good.values(), *bad.values()))
    assert good["groundedness"] > bad["groundedness"]


def test_question_quality_reply_is_valid_and_rates_questions_differently() -> None:
    scorer = QuestionQuality({"judges": ["fake-judge"],
                              "criteria": ["clarity", "difficulty", "relevance", "overall"]})

    def overall(question: str) -> float:
        subject = Subject(question, {}, reference="Paris")
        data, _ = scorer.reply_format.read(reply_to(scorer.messages(subject, NONCE)))
        return float(data["criteria"]["overall"]["score"])

    clear = overall("Which city became the capital of France after the Capetian kings "
                    "settled there, and why?")
    vague = overall("paris")
    assert clear > vague


def test_verdict_reply_is_valid_and_passes_on_topic_replies_only() -> None:
    scorer = VerdictJudge({"rubric": "Pass when the agent answers the refund question "
                                     "with the refund policy.", "judges": ["fake-judge"],
                           "agent_context": {"contract": ["State the refund period"]}})

    def verdict(answer: str) -> dict[str, Any]:
        convo = [{"role": "user", "content": "What is the refund period for my order?"},
                 {"role": "assistant", "content": answer}]
        subject = Subject(answer, {}, messages=convo)
        fmt = verdict_format(len(convo))
        data, _ = fmt.read(reply_to(scorer.messages(subject, NONCE), params=fmt.params))
        return data

    good = verdict("The refund period for your order is 14 days from delivery; state "
                   "the order number and the refund is paid to your card.")
    bad = verdict("Nice weather.")
    assert good["pass"] is True and good["severity"] == "low"
    assert bad["pass"] is False and bad["severity"] in ("high", "critical")
    assert all(e["idx"] == 1 for e in bad["evidence"])


def test_pairwise_reply_prefers_the_better_response_in_both_orders() -> None:
    scorer = PairwiseJudge({"judges": ["fake-judge"]})
    question = {"question": "How are refunds paid and how long do they take?"}
    a, b = Subject(GOOD + " Refunds take 14 days.", question), Subject(BAD, question)
    first = scorer.messages(a, b, NONCE)
    second = scorer.messages(b, a, NONCE)
    from assay.scorers.pairwise import PAIR_REPLY
    w1, _ = PAIR_REPLY.read(reply_to(first, params=PAIR_REPLY.params))
    w2, _ = PAIR_REPLY.read(reply_to(second))
    assert (w1["winner"], w2["winner"]) == ("1", "2")


def test_meta_judge_reply_names_missing_clauses_and_vague_words() -> None:
    contract = ["Never reveal another customer's data", "Confirm the refund amount"]
    messages = critique_messages("Pass if the agent is helpful and appropriate about the "
                                 "refund amount.", contract, NONCE)
    data, _ = META_REPLY.read(reply_to(messages))
    assert data["missing_clauses"] == ["Never reveal another customer's data"]
    assert "helpful" in data["vague_phrases"] and data["defines_evidence"] is False
    assert data["high_variance"] is True and "evidence" in data["critique"]


@pytest.mark.parametrize("count,batches", [(6, 1), (7, 3)])
def test_question_generation_gives_the_items_asked_for(count: int, batches: int) -> None:
    spec = {"topic": "renewable energy storage", "difficulty": "hard",
            "type_tags": ["reasoning"]}
    sizes = [count // batches + (1 if i < count % batches else 0) for i in range(batches)]
    parts = [parsing.parse_questions(reply_to(prompts.questions(spec, n, i, batches),
                                              "fake-smart"), n)
             for i, n in enumerate(sizes)]
    combined = parsing.combine("questions", parts, count)
    assert combined.received == count and not combined.warnings
    assert all(item["answer"] for item in combined.items)


def test_case_generation_fills_every_variable() -> None:
    spec = {"variables": ["customer_name", "message"], "domain_hints": "retail support",
            "diversity": 8, "include_edge_cases": True}
    text = reply_to(prompts.cases(spec, 10, 0, 1), "fake-fast")
    parsed = parsing.parse_cases(text, spec["variables"], 10)
    assert parsed.received == 10 and not parsed.warnings
    assert sum(item["edge_case"] for item in parsed.items) == 2


def test_conversations_are_grounded_in_the_document() -> None:
    spec = {"turns": 2}
    parts = [parsing.parse_conversations(
        reply_to(prompts.conversations(spec, "faq.pdf", DOC, 3, i, 2), "fake-smart"), 2, 3)
        for i in range(2)]
    combined = parsing.combine("conversations", parts, 6)
    assert combined.received == 6 and not combined.warnings
    for item in combined.items:
        assert len(item["turns"]) == 2
        assert all(turn["ground_truth"] in DOC for turn in item["turns"])


def test_models_answer_differently_and_replies_are_deterministic() -> None:
    messages = [{"role": "system", "content": DOC},
                {"role": "user", "content": "How long does Acme Cloud keep backups?"}]
    fast, smart, mini = (reply_to(messages, m) for m in ("fake-fast", "fake-smart",
                                                          "fake-mini"))
    assert fast == "fake-fast says: How long does Acme Cloud keep backups?"
    assert smart.startswith("fake-smart says: How long") and "30 days" in smart
    assert len(mini.split()) < len(fast.split())
    scorer = RubricJudge({"rubric": RUBRIC, "judges": ["fake-judge"]})
    subject = Subject(GOOD, {"question": "q"}, reference=REFERENCE)
    msgs = scorer.messages(subject, NONCE)
    assert reply_to(msgs, seed=1) == reply_to(msgs, seed=1)
    judges = ("fake-judge", "fake-smart", "fake-fast", "judge-4", "judge-5")
    judged = [rubric_value("Refunds are paid within 14 days.", j) for j in judges]
    assert statistics.pstdev(judged) > 0  # judges do not agree perfectly


def test_judges_over_http_score_through_the_real_scorers_and_scripts_still_win() -> None:
    """The real scorer, its JudgeCall over HTTP to the fake (OpenAI and Anthropic shapes);
    a script still overrides the content-aware reply."""
    with FakeProviderThread(FakeConfig(latency_ms=0, seed=3)) as fake, \
            httpx.Client(base_url=fake.url, timeout=5) as client:
        def call_for(path: str) -> Any:
            async def call(judge: str, messages: list[dict[str, Any]],
                           params: Mapping[str, Any]) -> JudgeReply:
                if path == "/v1/messages":
                    body = {"model": judge, "max_tokens": 512, "system": messages[0]["content"],
                            "messages": messages[1:]}
                    text = client.post(path, json=body, headers={"x-api-key": "k"}).json()[
                        "content"][0]["text"]
                else:
                    body = {"model": judge, "messages": messages, **params}
                    text = client.post(path, json=body, headers={
                        "Authorization": "Bearer k"}).json()["choices"][0]["message"]["content"]
                return JudgeReply(text, judge)
            return call

        scorer = RagMetrics({"judges": ["fake-judge", "fake-smart"]})
        subject = Subject("Backups are kept for 30 days.", {"question": "Backup retention?"},
                          context=DOC)
        for path in ("/v1/chat/completions", "/v1/messages"):
            results = asyncio.run(scorer.score(subject, Context(judge=call_for(path))))
            assert [r.error for r in results] == [None, None]
            assert all(0 <= (r.value or 0) <= 1 for r in results)
        critique = asyncio.run(critique_rubric("Pass when the refund is quoted exactly.",
                                               ["Quote the refund"], call_for(
                                                   "/v1/chat/completions"), "fake-judge"))
        assert critique.error is None and critique.references_contract is True
        client.post("/_fake/config", json={"scripts": [Script(
            reply="not json", pattern="Answer format").to_dict()]})
        results = asyncio.run(scorer.score(subject, Context(judge=call_for(
            "/v1/chat/completions"))))
        assert all(r.error and "not JSON" in r.error for r in results)
