"""What the user sets in the scorer form is what scores (issue 31 item 6): for every field of
every kind's params, two scorers that differ only in that field are created through the
HTTP API and attached to one run that a real RQ worker runs on the fake provider (scripted
replies: plain text, fenced JSON, Python code); each field is proved by the scores the
engine stored differing between the two (value, verdict, severity, criteria, the judge that
gave it), or, for a judge's free text, by the text reaching the judge's requests. Pairwise
judges are proved on the comparisons of a run's two targets, manual scorers by what the
reviewer's score form then accepts or refuses; a one-choice field by its 422.

A field of a kind's params schema without a row here fails the coverage test."""

from __future__ import annotations

import json
import subprocess
import time
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from assay.core.llm.models import Credential, ModelConfig
from assay.core.projects.models import Project
from assay.core.scoring.kinds import known_kinds
from assay.core.scoring.models import Comparison, Score, ScorerVersion
from assay.extensions import db
from assay.providers.fake import FakeProviderThread
from assay.settings import Settings
from tests.api.test_rag_runs import HANDBOOK, QUESTIONS, upload
from tests.engine.test_providers_engine import configure, fake
from tests.engine.test_run_fields import Lab, Walk, make_lab
from tests.factories import Factory

__all__ = ["fake"]  # the fixture, imported for these tests

PLAIN = "  Hello World, refunds are paid in 30 days. Write to alice@example.com today.  "
FENCED = '```json\n{"a": 1}\n```'
CODE = "```python\ndef add(a, b):\n    return a + b\n```"
UNICODE = "Ünïcödé naïveté façade Zürich Kraków"  # 17 tokens in cl100k_base, 12 in o200k
REPLIES = {"case plain": PLAIN, "case json": FENCED, "case code": CODE,
           "case unicode": UNICODE}
SLOW = "(__import__('time').sleep(1.5), add(1, 2))[1]"
BIG = "len(bytearray(200 * 1024 * 1024))"
RULES_A = 'rules:\n  - id: say_hello\n    when: agent_says("Hello")\n    require: tool_called("x")\n    severity: high\n'  # noqa: E501
RULES_B = 'rules:\n  - id: say_mars\n    when: agent_says("Mars")\n    require: tool_called("x")\n    severity: high\n'  # noqa: E501
CRITERIA = [{"name": "Accuracy", "description": "The answer is factually right.",
             "weight": 0.5, "scale": "1-5"},
            {"name": "Clarity", "description": "The answer is easy to follow.",
             "weight": 0.5, "scale": "1-5"}]
CRITERIA_B = [{**CRITERIA[0], "name": "Brevity"}, CRITERIA[1]]
JUDGE = {"judges": ["Judge"]}


@dataclass(frozen=True)
class Row:
    """Two params of one kind that differ in the field; `sent`: the field is proved by
    this text reaching B's judge requests (and not A's), not by the scores."""

    kind: str
    a: dict[str, Any]
    b: dict[str, Any]
    sent: str | None = None
    rag: bool = False  # scored on a run that answers from documents (its grounding)


def _judged(kind: str, base: dict[str, Any], **b: Any) -> Row:
    return Row(kind, {**JUDGE, **base}, {**JUDGE, **base, **b})


ROWS: dict[str, Row] = {
    "contains.value": Row("contains", {"value": "Hello"}, {"value": "Mars"}),
    "contains_all.values": Row("contains_all", {"values": ["Hello", "World"]},
                               {"values": ["Hello", "Mars"]}),
    "contains_all.case_sensitive": Row("contains_all", {"values": ["hello"]},
                                       {"values": ["hello"], "case_sensitive": False}),
    "contains_any.values": Row("contains_any", {"values": ["Mars", "World"]},
                               {"values": ["Mars", "Venus"]}),
    "contains_any.case_sensitive": Row("contains_any", {"values": ["hello"]},
                                       {"values": ["hello"], "case_sensitive": False}),
    "cost.max_micros": Row("cost", {"max_micros": 0}, {"max_micros": 10**9}),
    "equals.value": Row("equals", {"value": PLAIN.strip()}, {"value": "Mars"}),
    "equals.case_sensitive": Row("equals", {"value": PLAIN.strip().upper()},
                                 {"value": PLAIN.strip().upper(), "case_sensitive": False}),
    "equals.strip": Row("equals", {"value": PLAIN.strip()},
                        {"value": PLAIN.strip(), "strip": False}),
    "icontains.value": Row("icontains", {"value": "hello"}, {"value": "mars"}),
    "is_json.allow_fenced": Row("is_json", {}, {"allow_fenced": True}),
    "json_schema.schema": Row("json_schema", {"schema": {"type": "object", "required": ["a"]},
                                              "allow_fenced": True},
                              {"schema": {"type": "object", "required": ["b"]},
                               "allow_fenced": True}),
    "json_schema.allow_fenced": Row("json_schema", {"schema": {"type": "object"}},
                                    {"schema": {"type": "object"}, "allow_fenced": True}),
    "key_points.points": Row("key_points", {"points": ["refunds are paid in 30 days"]},
                             {"points": ["the moon is made of green cheese"]}),
    "key_points.threshold": Row("key_points",
                                {"points": ["refunds get paid within 30 days"], "threshold": 50},
                                {"points": ["refunds get paid within 30 days"],
                                 "threshold": 100}),
    "key_points.min_share": Row("key_points",
                                {"points": ["refunds are paid in 30 days", "zebra crossing"]},
                                {"points": ["refunds are paid in 30 days", "zebra crossing"],
                                 "min_share": 0.5}),
    "latency.max_ms": Row("latency", {"max_ms": 1}, {"max_ms": 600_000}),
    "length.unit": Row("length", {"max": 20}, {"max": 20, "unit": "words"}),
    "length.min": Row("length", {"min": 1}, {"min": 10_000}),
    "length.max": Row("length", {"max": 10_000}, {"max": 1}),
    "length.encoding": Row("length", {"unit": "tokens", "encoding": "cl100k_base", "max": 14},
                           {"unit": "tokens", "encoding": "o200k_base", "max": 14}),
    "must_include.terms": Row("must_include", {"terms": ["hello"]}, {"terms": ["mars"]}),
    "must_include.case_sensitive": Row("must_include", {"terms": ["hello"]},
                                       {"terms": ["hello"], "case_sensitive": True}),
    "must_include.whole_words": Row("must_include", {"terms": ["Hell"]},
                                    {"terms": ["Hell"], "whole_words": True}),
    "must_not_include.terms": Row("must_not_include", {"terms": ["hello"]},
                                  {"terms": ["mars"]}),
    "must_not_include.case_sensitive": Row("must_not_include", {"terms": ["hello"]},
                                           {"terms": ["hello"], "case_sensitive": True}),
    "must_not_include.whole_words": Row("must_not_include", {"terms": ["Hell"]},
                                        {"terms": ["Hell"], "whole_words": True}),
    "regex.pattern": Row("regex", {"pattern": "Hel+o"}, {"pattern": "Ma+rs"}),
    "regex.flags": Row("regex", {"pattern": "hello"}, {"pattern": "hello", "flags": "i"}),
    "rules.yaml": Row("rules", {"yaml": RULES_A}, {"yaml": RULES_B}),
    "safety.checks": Row("safety", {"checks": ["pii"]}, {"checks": ["jailbreak"]}),
    "safety.action": Row("safety", {"checks": ["pii"]}, {"checks": ["pii"], "action": "block"}),
    "similarity.value": Row("similarity", {"value": PLAIN.strip()}, {"value": "zzz qqq"}),
    "similarity.method": Row("similarity", {"value": " ".join(reversed(PLAIN.split()))},
                             {"value": " ".join(reversed(PLAIN.split())),
                              "method": "token_set_ratio"}),
    "similarity.threshold": Row("similarity", {"value": "Hello World", "threshold": 0.01},
                                {"value": "Hello World", "threshold": 0.99}),
    "similarity.normalize": Row("similarity", {"value": PLAIN.strip().upper()},
                                {"value": PLAIN.strip().upper(), "normalize": False}),
    "starts_with.value": Row("starts_with", {"value": "Hello"}, {"value": "Mars"}),
    "starts_with.case_sensitive": Row("starts_with", {"value": "hello"},
                                      {"value": "hello", "case_sensitive": False}),
    "starts_with.strip": Row("starts_with", {"value": "Hello"},
                             {"value": "Hello", "strip": False}),
    "code_execution.tests": Row("code_execution",
                                {"tests": [{"call": "add(1, 2)", "expected": 3}]},
                                {"tests": [{"call": "add(1, 2)", "expected": 4}]}),
    "code_execution.must_compile": Row("code_execution", {}, {"must_compile": True}),
    "code_execution.entrypoint": Row("code_execution",
                                     {"entrypoint": "add",
                                      "tests": [{"call": "add(1, 2)", "expected": 3}]},
                                     {"entrypoint": "subtract",
                                      "tests": [{"call": "add(1, 2)", "expected": 3}]}),
    "code_execution.timeout_s": Row("code_execution",
                                    {"tests": [{"call": SLOW, "expected": 3}], "timeout_s": 10},
                                    {"tests": [{"call": SLOW, "expected": 3}],
                                     "timeout_s": 0.5}),
    "code_execution.memory_mb": Row("code_execution",
                                    {"tests": [{"call": BIG, "expected": 200 * 1024 * 1024}],
                                     "memory_mb": 1024},
                                    {"tests": [{"call": BIG, "expected": 200 * 1024 * 1024}],
                                     "memory_mb": 64}),
    "llm_judge.rubric": _judged("llm_judge", {"rubric": {"criteria": CRITERIA}},
                                rubric={"criteria": CRITERIA_B}),
    "llm_judge.judges": _judged("llm_judge", {"rubric": {"criteria": CRITERIA}},
                                judges=["Judge2"]),
    "llm_judge.pass_threshold": _judged("llm_judge", {"rubric": {"criteria": CRITERIA},
                                                      "pass_threshold": 0.0},
                                        pass_threshold=1.0),
    "llm_judge.instructions": Row("llm_judge", {**JUDGE, "rubric": {"criteria": CRITERIA}},
                                  {**JUDGE, "rubric": {"criteria": CRITERIA},
                                   "instructions": "INSTRUCTIONS-MARK-1"},
                                  sent="INSTRUCTIONS-MARK-1"),
    "rag_metrics.judges": Row("rag_metrics", JUDGE, {"judges": ["Judge2"]}, rag=True),
    "rag_metrics.pass_threshold": Row("rag_metrics", {**JUDGE, "pass_threshold": 0.0},
                                      {**JUDGE, "pass_threshold": 1.0}, rag=True),
    "rag_metrics.instructions": Row("rag_metrics", JUDGE,
                                    {**JUDGE, "instructions": "INSTRUCTIONS-MARK-2"},
                                    sent="INSTRUCTIONS-MARK-2", rag=True),
    "verdict_judge.rubric": Row("verdict_judge", {**JUDGE, "rubric": "Pass when it is polite."},
                                {**JUDGE, "rubric": "RUBRIC-MARK-3: pass when it is polite."},
                                sent="RUBRIC-MARK-3"),
    "verdict_judge.judges": _judged("verdict_judge", {"rubric": "Pass when it is polite."},
                                    judges=["Judge2"]),
    **{f"verdict_judge.agent_context.{name}": Row(
        "verdict_judge", {**JUDGE, "rubric": "Pass when it is polite."},
        {**JUDGE, "rubric": "Pass when it is polite.", "agent_context": {name: value}},
        sent=marker) for name, value, marker in (
            ("system_prompt", "CONTEXT-MARK-4 You are the shop's agent.", "CONTEXT-MARK-4"),
            ("tools", [{"name": "toolmark_lookup", "description": "Finds an order"}],
             "toolmark_lookup"),
            ("contract", ["CONTRACT-MARK-9 never promise a date"], "CONTRACT-MARK-9"))},
    "question_quality.judges": _judged("question_quality", {"criteria": ["clarity"]},
                                       judges=["Judge2"]),
    "question_quality.criteria": _judged("question_quality", {"criteria": ["clarity"]},
                                         criteria=["relevance", "difficulty"]),
    "question_quality.instruction": Row("question_quality", {**JUDGE, "criteria": ["clarity"]},
                                        {**JUDGE, "criteria": ["clarity"],
                                         "instruction": "INSTRUCTION-MARK-5"},
                                        sent="INSTRUCTION-MARK-5"),
}
# fields a 422 refuses at any other value
ONE_CHOICE = {"code_execution.language": ("ruby", "python is the only language")}
# kinds the engine does not run on each output as it lands
# manual: no engine call; what the reviewer may give (its own test below)
ELSEWHERE = dict.fromkeys(("manual.criteria", "manual.scale"),
                          "test_manual_scale_and_criteria_decide_what_a_reviewer_may_give")
# pairwise: judged when a run's targets are compared, not per output; proved on the
# comparisons of one run's two targets (the judge that answered, or the text it was sent)
PAIR_RUBRIC = {"criteria": [
    {"name": "Warmth", "description": "RUBRIC-MARK-8 the answer is kind.", "weight": 0.5,
     "scale": "1-5"},
    {"name": "Brevity", "description": "The answer is short and direct.", "weight": 0.5,
     "scale": "1-5"}]}
PAIRWISE: dict[str, tuple[dict[str, Any], str | None]] = {
    "pairwise_judge.judges": ({"judges": ["Judge2"]}, None),
    "pairwise_judge.goal": ({**JUDGE, "goal": "GOAL-MARK-6 answer like a friend"},
                            "GOAL-MARK-6"),
    "pairwise_judge.instructions": ({**JUDGE, "instructions": "INSTRUCTIONS-MARK-7"},
                                    "INSTRUCTIONS-MARK-7"),
    "pairwise_judge.rubric": ({**JUDGE, "rubric": PAIR_RUBRIC}, "RUBRIC-MARK-8"),
}


def _fingerprint(scores: list[Score]) -> list[tuple[Any, ...]]:
    """What a scorer said of each output, in the outputs' order."""
    return [(s.value, s.passed, s.severity, tuple(sorted(s.criteria)), s.source,
             s.error is None) for s in sorted(scores, key=lambda s: s.output_id)]


def _text(request: dict[str, Any]) -> str:
    return json.dumps(request.get("messages") or [])


@pytest.fixture
def lab(factory: Factory, settings: Settings, fake: FakeProviderThread,
        worker: subprocess.Popen[bytes]) -> Lab:
    configure(fake, latency_ms=20, scripts=[
        {"model": "fake-fast", "pattern": q, "reply": r} for q, r in REPLIES.items()])
    lab = make_lab(factory, settings, fake, cases=0)
    with db.factory() as session:
        project = session.get(Project, lab.project_id)
        assert project is not None
        project.settings = {**(project.settings or {}), "code_execution": True}
        credential = session.scalar(select(Credential.id).where(
            Credential.project_id == lab.project_id))
        assert credential is not None
        for name, model in (("Judge", "fake-judge"), ("Judge2", "fake-smart")):
            session.add(ModelConfig(project_id=lab.project_id, credential_id=credential,
                                    name=name, model=model, input_price_per_mtok_micros=1,
                                    output_price_per_mtok_micros=1,
                                    params={"max_tokens": 2000}))
        session.commit()
    made = lab.post("/datasets", {"name": "Replies", "kind": "questions", "cases": [
        {"input": {"question": q}} for q in REPLIES]})
    lab.s.dataset_id = made["id"]
    return lab


def _documents(lab: Lab) -> dict[str, Any]:
    """A handbook and questions on it: the run settings of a run that answers from it."""
    doc = upload(lab.browser, lab.project_id, "handbook.md", HANDBOOK.encode(),
                 chunk_size="20", chunk_overlap="0")
    assert doc.status_code == 201, doc.json
    asked = lab.post("/datasets", {"name": "Handbook", "kind": "questions",
                                   "cases": [{"input": {"question": q}} for q in QUESTIONS]})
    return {"dataset_id": asked["id"], "rag": {"document_ids": [doc.json["id"]]}}


def _runs(lab: Lab) -> dict[str, tuple[Walk, int, int]]:
    """Every row's two scorers, twenty to a run: row -> (its run, A's and B's versions)."""
    made: dict[str, tuple[int, int]] = {}
    for path, row in ROWS.items():
        ids = [lab.post("/scorers", {"name": f"{path} {side}", "kind": row.kind,
                                     "params": params})["id"]
               for side, params in (("A", row.a), ("B", row.b))]
        made[path] = (ids[0], ids[1])
    out: dict[str, tuple[Walk, int, int]] = {}
    plain = [p for p in made if not ROWS[p].rag]
    chunks = [plain[i:i + 10] for i in range(0, len(plain), 10)]
    chunks.append([p for p in made if ROWS[p].rag])
    documents = _documents(lab)
    for chunk in chunks:
        extra = documents if ROWS[chunk[0]].rag else {}
        w = lab.run(cache=False, scorer_ids=[i for p in chunk for i in made[p]], **extra)
        with db.factory() as session:
            version = dict(session.execute(select(ScorerVersion.scorer_id, ScorerVersion.id)
                                           .where(ScorerVersion.scorer_id.in_(
                                               [i for p in chunk for i in made[p]]))).all())
        for p in chunk:
            out[p] = (w, version[made[p][0]], version[made[p][1]])
    return out


def test_each_scorer_field_changes_the_scores(lab: Lab) -> None:
    failures: dict[str, str] = {}
    for path, (w, a, b) in _runs(lab).items():
        row = ROWS[path]
        mine_a = [s for s in w.scores if s.scorer_version_id == a]
        mine_b = [s for s in w.scores if s.scorer_version_id == b]
        if len(mine_a) != len(w.outputs) or len(mine_b) != len(w.outputs):
            failures[path] = f"not scored: {len(mine_a)}, {len(mine_b)} of {len(w.outputs)}"
        elif row.sent is not None:
            if not any(row.sent in _text(r) for r in w.requests):
                failures[path] = f"{row.sent!r} reached no judge"
        elif _fingerprint(mine_a) == _fingerprint(mine_b):
            failures[path] = f"same scores: {_fingerprint(mine_a)}"
    assert not failures, json.dumps(failures, indent=1, default=str)


def test_each_pairwise_field_changes_the_comparisons(lab: Lab) -> None:
    with db.factory() as session:
        models = dict(session.execute(select(ModelConfig.name, ModelConfig.id).where(
            ModelConfig.project_id == lab.project_id)).all())
    w = lab.run(cache=False, targets=[{"model_id": lab.s.model_ids[0]},
                                      {"model_id": models["Judge2"]}])
    a, b = (t.id for t in w.targets)
    base = lab.post("/scorers", {"name": "Pairs A", "kind": "pairwise_judge",
                                 "params": JUDGE})["id"]
    made = {path: lab.post("/scorers", {"name": path, "kind": "pairwise_judge",
                                        "params": params})["id"]
            for path, (params, _) in PAIRWISE.items()}
    httpx.post(f"{lab.fake_url}/_fake/reset").raise_for_status()
    for scorer in [base, *made.values()]:
        lab.post(f"/runs/{w.run.id}/comparisons",
                 {"scorer_id": scorer, "target_a_id": a, "target_b_id": b}, 202)
    with db.factory() as session:
        version = dict(session.execute(select(ScorerVersion.scorer_id, ScorerVersion.id)
                                       .where(ScorerVersion.scorer_id.in_(
                                           [base, *made.values()]))).all())
    deadline = time.monotonic() + 90
    while True:
        with db.factory() as session:
            rows = list(session.scalars(select(Comparison).where(
                Comparison.run_id == w.run.id)))
            session.expunge_all()
        if len(rows) >= len(REPLIES) * (1 + len(made)) or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    sent = [_text(r) for r in httpx.get(f"{lab.fake_url}/_fake/requests").json()["requests"]]
    judged = {v: {c.judge_model for c in rows if c.scorer_version_id == v}
              for v in version.values()}
    assert judged[version[base]] == {"Judge"}, judged
    for path, (_, marker) in PAIRWISE.items():
        mine = [c for c in rows if c.scorer_version_id == version[made[path]]]
        assert len(mine) == len(REPLIES), (path, len(mine))
        if marker is None:
            assert {c.judge_model for c in mine} == {"Judge2"}, path
        else:
            assert any(marker in t for t in sent), path


def test_a_value_outside_a_one_choice_field_is_refused(lab: Lab) -> None:
    for path, (value, why) in ONE_CHOICE.items():
        kind, name = path.split(".")
        reply = lab.browser.post(lab.url("/scorers"), json={
            "name": "Other", "kind": kind, "params": {name: value}})
        assert reply.status_code == 422, (why, reply.json)
        assert name in json.dumps(reply.json)


def test_every_scorer_field_has_a_row() -> None:
    declared: set[str] = set()
    for k in known_kinds(True):
        for name, spec in (k.params_schema.get("properties") or {}).items():
            # the agent's context is three fields the user fills one by one
            inner = spec.get("properties") if name == "agent_context" else None
            declared |= {f"{k.kind}.{name}.{n}" for n in inner} if inner else {
                f"{k.kind}.{name}"}
    assert declared == set(ROWS) | set(PAIRWISE) | set(ONE_CHOICE) | set(ELSEWHERE)


# --- manual: the engine scores nothing; its fields shape what a reviewer may give ----------


def test_manual_scale_and_criteria_decide_what_a_reviewer_may_give(lab: Lab) -> None:
    """A manual scorer is pinned by the run like any other; its scale and criteria are what
    the score form takes: the same body is accepted by one and refused by the other."""
    made = {name: lab.post("/scorers", {"name": name, "kind": "manual", "params": params})["id"]
            for name, params in (
                ("Stars", {}), ("Pass fail", {"scale": "pass_fail"}),
                ("Tone and facts", {"scale": "criteria", "criteria": ["Tone", "Facts"]}),
                ("Tone and speed", {"scale": "criteria", "criteria": ["Tone", "Speed"]}))}
    w = lab.run(cache=False, scorer_ids=list(made.values()))
    assert not w.scores  # nothing is scored automatically
    with db.factory() as session:
        version = dict(session.execute(select(ScorerVersion.scorer_id, ScorerVersion.id)
                                       .where(ScorerVersion.scorer_id.in_(made.values())))
                       .all())
    output = w.outputs[0].id

    def give(name: str, body: dict[str, Any]) -> Any:
        return lab.browser.request("PUT", lab.url(
            f"/runs/{w.run.id}/outputs/{output}/scores/{version[made[name]]}"), json=body)

    verdict = {"passed": True}
    assert give("Stars", verdict).status_code == 422  # 1-5: a rating is required
    assert give("Pass fail", verdict).status_code == 200
    assert give("Stars", {"rating": 4}).status_code == 200
    rated = {"criteria": {"Tone": 4, "Facts": 5}}
    refused = give("Tone and speed", rated)
    assert refused.status_code == 422 and "Speed" in str(refused.json), refused.json
    given = give("Tone and facts", rated)
    assert given.status_code == 200, given.json
    assert set(given.json["criteria"]) == {"Tone", "Facts"}
