"""Token counts (bundled encodings, offline), micro-dollar cost arithmetic (property-based),
and the cost estimate of a planned run (service and endpoint)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.factories import Factory

from assay.core.projects.models import Role
from assay.providers import tokens
from assay.providers.pricing import MTOK, Price, cost_micros, dollars

# --- tokens -------------------------------------------------------------------------------

OFFLINE = textwrap.dedent("""
    import json, socket

    def refuse(*args, **kwargs):
        raise OSError("network disabled by the test")

    socket.create_connection = refuse
    socket.socket.connect = refuse
    socket.getaddrinfo = refuse

    import tiktoken
    try:  # the stock way downloads its ranks: with no network it must fail...
        tiktoken.get_encoding("cl100k_base").encode("hello world")
        stock = "worked"
    except Exception as exc:
        stock = type(exc).__name__

    from assay.providers import tokens  # ...and the bundled one must not
    print(json.dumps({
        "stock": stock,
        "cl100k": tokens.get_encoding("cl100k_base").encode("hello world"),
        "o200k": tokens.get_encoding("o200k_base").encode("hello world"),
        "count": tokens.count_text("hello world"),
        "gpt4o": tokens.count_text("hello world", "gpt-4o"),
        "chat": tokens.count_messages([{"role": "user", "content": "hello world"}], "gpt-4"),
    }))
""")


def test_token_counts_need_no_network(tmp_path: Path) -> None:
    cache = tmp_path / "empty-tiktoken-cache"
    cache.mkdir()
    env = {**os.environ, "HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9",
           "https_proxy": "http://127.0.0.1:9", "http_proxy": "http://127.0.0.1:9",
           "TIKTOKEN_CACHE_DIR": str(cache), "DATA_GYM_CACHE_DIR": str(cache)}
    done = subprocess.run([sys.executable, "-c", OFFLINE], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["stock"] != "worked", "the sandbox let tiktoken download: the test proves nothing"
    assert out["cl100k"] == [15339, 1917] and out["count"] == 2
    assert out["o200k"] == [24912, 2375] and out["gpt4o"] == 2
    assert out["chat"] == 3 + 1 + 2 + 3  # framing + "user" + "hello world" + reply priming
    assert list(cache.iterdir()) == [], "nothing may be cached (or downloaded) at run time"


@pytest.mark.parametrize(("model", "encoding"), [
    ("gpt-4o-mini", "o200k_base"), ("gpt-4.1", "o200k_base"), ("openai/gpt-4o", "o200k_base"),
    ("gpt-4", "cl100k_base"), ("gpt-3.5-turbo-0125", "cl100k_base"),
    ("claude-3-5-sonnet", "cl100k_base"), ("fake-fast", "cl100k_base"),
    ("text-davinci-003", "cl100k_base"),  # p50k is not bundled: the default stands in
])
def test_encoding_per_model(model: str, encoding: str) -> None:
    assert tokens.encoding_name(model) == encoding


def test_counts_match_known_values() -> None:
    assert tokens.count_text("") == 0
    assert tokens.count_text("<|endoftext|>") > 1  # special spellings count as plain text
    chat = [{"role": "system", "content": "You are a helpful assistant."},
            {"role": "user", "content": "hello world", "name": "ann"}]
    # OpenAI's cookbook: 3 per message, +1 per name, +3 to prime the reply
    assert tokens.count_messages(chat, "gpt-4") == (3 + 1 + 6) + (3 + 1 + 2 + 1 + 1) + 3
    parts = [{"role": "user", "content": [{"type": "text", "text": "hello world"}]}]
    assert tokens.count_messages(parts) == 3 + 1 + 2 + 3


def test_unbundled_encoding_is_refused() -> None:
    with pytest.raises(KeyError):
        tokens.get_encoding("p50k_base")


# --- cost ---------------------------------------------------------------------------------

counts = st.integers(min_value=0, max_value=10**9)
prices = st.integers(min_value=0, max_value=10**9)  # up to $1,000 per million tokens


@given(counts, counts, prices, prices, st.integers(min_value=0, max_value=10**6))
def test_cost_is_monotone_in_tokens(tin: int, tout: int, pin: int, pout: int,
                                    more: int) -> None:
    base = cost_micros(tin, tout, pin, pout)
    assert base is not None and base >= 0
    assert cost_micros(tin + more, tout, pin, pout) >= base  # type: ignore[operator]
    assert cost_micros(tin, tout + more, pin, pout) >= base  # type: ignore[operator]


@given(counts, counts, counts, counts, prices, prices)
def test_cost_is_additive_within_rounding(a_in: int, a_out: int, b_in: int, b_out: int,
                                          pin: int, pout: int) -> None:
    whole = cost_micros(a_in + b_in, a_out + b_out, pin, pout)
    a, b = cost_micros(a_in, a_out, pin, pout), cost_micros(b_in, b_out, pin, pout)
    assert whole is not None and a is not None and b is not None
    assert whole <= a + b <= whole + 1  # each part rounds up at most one micro-dollar


@given(counts, counts, prices, prices)
def test_cost_rounds_up_and_never_understates(tin: int, tout: int, pin: int,
                                              pout: int) -> None:
    cost = cost_micros(tin, tout, pin, pout)
    assert cost is not None
    exact_numerator = tin * pin + tout * pout
    assert cost * MTOK >= exact_numerator > (cost - 1) * MTOK or exact_numerator == cost == 0


@given(st.integers(min_value=0, max_value=1000), st.integers(min_value=0, max_value=1000),
       prices, prices)
def test_cost_is_exact_for_whole_millions(m_in: int, m_out: int, pin: int, pout: int) -> None:
    assert cost_micros(m_in * MTOK, m_out * MTOK, pin, pout) == m_in * pin + m_out * pout


@given(counts, counts, st.one_of(st.none(), prices), st.one_of(st.none(), prices))
def test_unpriced_is_unknown_never_free(tin: int, tout: int, pin: int | None,
                                        pout: int | None) -> None:
    cost = Price(pin, pout).cost(tin, tout)
    if pin is None or pout is None:
        assert cost is None and not Price(pin, pout).priced
    else:
        assert cost is not None and cost >= 0


def test_cost_examples_and_refusals() -> None:
    assert cost_micros(1, 0, 1, 1) == 1  # a millionth of a micro-dollar still costs one
    assert cost_micros(0, 0, 5, 5) == 0
    assert cost_micros(1000, 500, 150_000, 600_000) == 450  # gpt-4o-mini-like: $0.00045
    assert cost_micros(None, None, 1, 1) == 0
    with pytest.raises(ValueError):
        cost_micros(-1, 0, 1, 1)
    assert dollars(1_234_567) == "$1.234567" and dollars(None) == "unpriced"


# --- the estimate -------------------------------------------------------------------------


def _project_with_models(factory: Factory) -> tuple[Any, Any, int, list[int]]:
    from assay.core.datasets.service import create_dataset
    from assay.core.llm.models import Credential, ModelConfig
    from assay.extensions import db

    owner = factory.user()
    project = factory.project(owner)
    with db.factory() as session:
        credential = Credential(project_id=project.id, kind="fake", label="f",
                                base_url="http://127.0.0.1:9")
        session.add(credential)
        session.flush()
        priced = ModelConfig(project_id=project.id, credential_id=credential.id, name="Priced",
                             model="gpt-4o", input_price_per_mtok_micros=2_500_000,
                             output_price_per_mtok_micros=10_000_000,
                             params={"max_tokens": 100})
        free = ModelConfig(project_id=project.id, credential_id=credential.id, name="Unpriced",
                           model="fake-fast", params={})
        session.add_all([priced, free])
        cases = [{"input": {"question": "hello world"}},
                 {"input": {"messages": [{"role": "system", "content": "Be brief."},
                                         {"role": "user", "content": "hello world"}]}}]
        dataset = create_dataset(session, None, project, "d", "questions", cases)
        session.commit()
        return owner, project, dataset.id, [priced.id, free.id]


def test_estimate_is_a_range_and_flags_unpriced(factory: Factory) -> None:
    _owner, project, dataset_id, model_ids = _project_with_models(factory)
    viewer = factory.login(factory.member(project, Role.viewer))
    reply = viewer.post(f"/api/projects/{project.id}/runs/estimate",
                        json={"dataset_id": dataset_id, "repeats": 3,
                              "targets": [{"model_id": i} for i in model_ids]})
    assert reply.status_code == 200, reply.json
    body = reply.json
    prompt = (3 + 1 + 2 + 3) + (3 + 1 + 3 + 3 + 1 + 2 + 3)  # the two cases with o200k_base
    priced, unpriced = body["per_target"]
    assert priced["calls"] == 6 and priced["input_tokens"] == prompt * 3
    assert priced["output_tokens_high"] == 600 and priced["output_tokens_low"] == 150
    assert priced["high_micros"] == cost_micros(prompt * 3, 600, 2_500_000, 10_000_000)
    assert priced["low_micros"] == cost_micros(prompt * 3, 150, 2_500_000, 10_000_000)
    assert priced["low_micros"] < priced["high_micros"] and priced["priced"]
    assert unpriced["priced"] is False and unpriced["low_micros"] is None
    assert unpriced["output_tokens_high"] == 6 * 1024  # no max_tokens: the default
    assert body["unpriced_models"] == [model_ids[1]] and body["complete"] is False
    assert (body["low_micros"], body["high_micros"]) == (priced["low_micros"],
                                                         priced["high_micros"])
    assert body["calls"] == 12 and body["cases"] == 2 and body["repeats"] == 3


def test_estimate_refuses_foreign_models_and_writes_nothing(factory: Factory) -> None:
    owner, project, dataset_id, model_ids = _project_with_models(factory)
    browser = factory.login(owner)
    reply = browser.post(f"/api/projects/{project.id}/runs/estimate",
                         json={"dataset_id": dataset_id,
                               "targets": [{"model_id": model_ids[0]}, {"model_id": 99999}]})
    assert reply.status_code == 422 and reply.json["code"] == "VALIDATION_ERROR"
    from sqlalchemy import func, select

    from assay.core.runs.models import Run
    from assay.extensions import db

    with db.factory() as session:
        assert session.scalar(select(func.count()).select_from(Run)) == 0
