"""Coverage buckets: input length thresholds and the language heuristic."""

from __future__ import annotations

import pytest

from assay.core.datasets.cases import input_text
from assay.core.datasets.coverage import language, length_bucket


@pytest.mark.parametrize(("length", "bucket"), [
    (0, "XS"), (49, "XS"), (50, "S"), (199, "S"), (200, "M"), (999, "M"), (1000, "L"),
    (4999, "L"), (5000, "XL"), (50_000, "XL")])
def test_length_buckets(length: int, bucket: str) -> None:
    assert length_bucket("a" * length) == bucket


@pytest.mark.parametrize(("text", "code"), [
    ("What is the capital of France and how big is it?", "en"),
    ("Quelle est la capitale de la France et pour quoi?", "fr"),
    ("Was ist der Unterschied und wie ist das nicht?", "de"),
    ("¿Qué es una ciudad y cómo es para los niños?", "es"),
    ("Что такое машинное обучение?", "ru"),
    ("機械学習とは何ですか", "ja"),
    ("什么是机器学习", "zh"),
    ("머신 러닝이란 무엇입니까", "ko"),
    ("ما هو التعلم الآلي", "ar"),
    ("Xyzzy plugh", "latin"),
    ("12345 ?!", "unknown"),
    ("", "unknown"),
])
def test_language_heuristic(text: str, code: str) -> None:
    assert language(text) == code


def test_input_text_per_kind() -> None:
    assert input_text("questions", {"question": "Why?"}, None) == "Why?"
    assert input_text("cases", {"a": "x", "b": "y"}, None) == "x\ny"
    conversation = {"messages": [{"role": "user", "content": "Hi"},
                                 {"role": "assistant", "content": "Hello"},
                                 {"role": "user", "content": "Bye"}]}
    assert input_text("conversations", conversation, None) == "Hi\nBye"
    trace = {"messages": [{"role": "system", "content": "S"},
                          {"role": "user", "content": "Go"},
                          {"role": "tool", "content": "r", "tool_call_id": "1"}]}
    assert input_text("traces", {}, trace) == "Go"
