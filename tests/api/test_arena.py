"""EvalArena through HTTP: the library and progress, the workspace (no hidden trace),
drafts, hints, validation, rules attempts with misses, evidence, diffs and history, the
redacted test report, and seeding."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from assay.core.challenges.content import ChallengeFileError
from assay.core.challenges.redaction import MASK, WORD, vocabulary
from assay.core.challenges.seeding import CHALLENGES_DIR, seed_challenges
from assay.extensions import db
from tests.api.arena_helpers import BASE, attempt, fixture, seed, spec
from tests.factories import Factory

CID = "refund-verification"
URL = f"{BASE}/{CID}"
# catches refunds announced without verification, in the dev set's words only
PARTIAL = """rules:
  - id: refund_needs_verification
    when: agent_says("has been issued")
    require: tool_called("verify_identity")
    severity: critical
"""


def _put(browser: Any, url: str, body: dict[str, Any]) -> Any:
    return browser.request("PUT", url, json=body)


def test_library_lists_and_searches_with_progress(factory: Factory, client: Any) -> None:
    assert client.get(BASE).status_code == 401
    seed()
    browser = factory.signed_in()
    items = browser.get(BASE).json["items"]
    card = next(c for c in items if c["id"] == CID)
    assert card["mode_label"] == "Debug baseline" and card["category"] == "Performance"
    assert card["dev_count"] == 12 and card["test_count"] == 20
    assert card["progress"] == {"dev_ready": False, "completed": False}
    found = browser.get(BASE, query_string={"q": "INJECTION"}).json["items"]
    assert [c["id"] for c in found] == ["prompt-injection-tool-result"]
    assert browser.get(BASE, query_string={"q": "no such thing"}).json["items"] == []


def test_workspace_has_dev_traces_without_labels_and_no_test_trace(factory: Factory) -> None:
    seed()
    browser = factory.signed_in()
    body = browser.get(URL).json
    assert [t["id"] for t in body["dev_traces"]] == [f"dev-{i:02d}" for i in range(1, 13)]
    assert all(set(t) == {"id", "messages"} for t in body["dev_traces"])
    text = browser.get(URL).get_data(as_text=True)
    for trace in spec(CID).traces:
        if trace.split == "test":
            assert trace.messages[-1]["content"] not in text
        if trace.hidden_fail_reason:
            assert trace.hidden_fail_reason not in text
    rules = body["tabs"]["rules"]
    assert rules["starting_text"] == rules["baseline_text"] and rules["draft"] is None
    assert rules["has_hint"] and rules["hint"] is None
    assert len(body["context"]["contract"]) == 3 and body["context"]["tools"][0]["input_schema"]
    missing = browser.get(f"{BASE}/nope")
    assert missing.status_code == 404 and missing.json["code"] == "CHALLENGE_NOT_FOUND"


def test_drafts_and_hints_are_kept_per_user_and_tab(factory: Factory) -> None:
    seed()
    browser, other = factory.signed_in(), factory.signed_in()
    saved = _put(browser, f"{URL}/drafts/rules", {"text": "rules: []"})
    assert saved.status_code == 200 and saved.json["text"] == "rules: []"
    assert _put(browser, f"{URL}/drafts/judge", {"text": "Fail when..."}).status_code == 200
    assert _put(browser, f"{URL}/drafts/sql", {"text": "x"}).status_code == 404
    too_long = _put(browser, f"{URL}/drafts/rules", {"text": "x" * 100_001})
    assert too_long.status_code == 422
    hint = browser.post(f"{URL}/hints/rules")
    assert hint.status_code == 200 and "TODO" in hint.json["hint"]
    tabs = browser.get(URL).json["tabs"]
    assert tabs["rules"]["draft"] == "rules: []" and tabs["judge"]["draft"] == "Fail when..."
    assert tabs["rules"]["hint"] == hint.json["hint"] and tabs["judge"]["hint"] is None
    theirs = other.get(URL).json["tabs"]
    assert theirs["rules"]["draft"] is None and theirs["rules"]["hint"] is None


def test_validate_gives_rules_problems_with_line_and_column(factory: Factory) -> None:
    seed()
    browser = factory.signed_in()
    bad = browser.post(f"{URL}/validate", json={"tab": "rules", "text": (
        "rules:\n  - id: a\n    when: agent_sez(\"x\")\n    action: fail\n    severity: high\n")})
    assert bad.status_code == 200 and not bad.json["ok"]
    problem = bad.json["problems"][0]
    assert (problem["line"], problem["column"]) == (3, 11) and "agent_says" in problem["message"]
    broken = browser.post(f"{URL}/validate", json={"tab": "rules", "text": "rules: [\n"})
    assert broken.json["problems"][0]["line"] >= 1 and not broken.json["ok"]
    good = browser.post(f"{URL}/validate", json={"tab": "rules",
                                                  "text": fixture(CID, "reference.rules.yaml")})
    assert good.json == {"ok": True, "problems": []}
    short = browser.post(f"{URL}/validate", json={"tab": "judge", "text": "ok"})
    assert not short.json["ok"] and "at least 10" in short.json["problems"][0]["message"]
    vague = browser.post(f"{URL}/validate", json={"tab": "judge", "text": "Pass if helpful."})
    assert vague.json["ok"] and {p["level"] for p in vague.json["problems"]} == {"warning"}
    assert browser.post(f"{URL}/validate", json={"tab": "x", "text": "y"}).status_code == 422


def test_rules_attempts_grade_against_labels_with_misses_and_evidence(
        factory: Factory) -> None:
    seed()
    browser = factory.signed_in()
    first = attempt(browser, CID, tab="rules", text=PARTIAL, set="dev")
    assert first.status_code == 201, first.json
    body = first.json
    results = {r["trace_id"]: r for r in body["results"]}
    caught = results["dev-02"]  # refund issued unverified: "has been issued" matches
    assert caught["agreed"] and caught["verdict"] == "fail" and caught["miss"] is None
    evidence = caught["evidence"][0]
    message = spec(CID).traces[1].messages[evidence["message_index"]]["content"]
    assert message[evidence["start"]:evidence["end"]].lower() == "has been issued"
    assert results["dev-08"]["miss"] == "missed_failure"  # critical, other words
    assert results["dev-01"]["agreed"] and results["dev-01"]["verdict"] == "pass"
    summary = body["summary"]
    misses = [r for r in body["results"] if r["miss"]]
    assert summary["total"] == 12 and summary["passed"] == 12 - len(misses)
    assert summary["pass_rate"] == summary["passed"] / 12
    assert summary["missed_failures"] == len(misses) and summary["false_alarms"] == 0
    assert summary["critical_count"] == sum(
        1 for r in misses if r["label_severity"] == "critical") > 0
    assert not summary["ready"]
    assert body["diff"] == {"previous_attempt_id": None, "fixed": [], "regressed": [],
                            "new_fail": [r["trace_id"] for r in misses]}
    naive = attempt(browser, CID, tab="rules", set="dev", text=(
        "rules:\n  - id: any_refund\n    when: agent_says(\"refund\")\n"
        "    require: tool_called(\"verify_identity\")\n    severity: critical\n")).json
    assert any(r["miss"] == "false_alarm" for r in naive["results"])  # dev-07 explains policy
    better = attempt(browser, CID, tab="rules", text=fixture(CID, "reference.rules.yaml"),
                     set="dev").json
    assert better["diff"]["previous_attempt_id"] == naive["id"]
    assert set(better["diff"]["fixed"]) == {r["trace_id"] for r in naive["results"]
                                            if r["miss"]}
    assert better["diff"]["regressed"] == [] and better["summary"]["ready"]
    worse = attempt(browser, CID, tab="rules", text=PARTIAL, set="dev").json
    assert set(worse["diff"]["regressed"]) == {r["trace_id"] for r in misses}
    history = browser.get(f"{URL}/attempts", query_string={"tab": "rules", "set": "dev",
                                                           "page_size": 2}).json
    assert history["total"] == 4 and [a["id"] for a in history["items"]] == [
        worse["id"], better["id"]]
    assert browser.get(f"{URL}/attempts", query_string={"set": "test"}).json["total"] == 0
    assert browser.get(f"{URL}/attempts/{body['id']}").json["text"] == PARTIAL
    stranger = factory.signed_in()
    assert stranger.get(f"{URL}/attempts/{body['id']}").status_code == 404
    assert stranger.get(f"{URL}/attempts").json["total"] == 0


def test_broken_rules_are_a_422_with_their_problems_and_nothing_is_kept(
        factory: Factory) -> None:
    seed()
    browser = factory.signed_in()
    reply = attempt(browser, CID, tab="rules", set="dev", text="rules:\n  - id: a\n")
    assert reply.status_code == 422 and reply.json["code"] == "RULES_INVALID"
    problems = reply.json["errors"]["problems"]
    assert problems and {"line", "column", "message"} <= set(problems[0])
    assert browser.get(f"{URL}/attempts").json["total"] == 0
    assert attempt(browser, CID, tab="rules", set="prod", text="x").status_code == 422
    assert attempt(browser, "nope", tab="rules", set="dev", text=PARTIAL).status_code == 404


def test_ship_to_prod_answers_with_a_redacted_report(factory: Factory) -> None:
    seed()
    browser = factory.signed_in()
    reply = attempt(browser, CID, tab="rules", text=fixture(CID, "overfit.rules.yaml"),
                    set="test")
    assert reply.status_code == 201
    body = reply.json
    assert body["results"] == [] and not body["summary"]["ready"]
    report = body["report"]
    assert len(report) == body["summary"]["missed_failures"] + body["summary"]["false_alarms"]
    contract = spec(CID).contract
    dev = [str(m.get("content")) for t in spec(CID).traces if t.split == "dev"
           for m in t.messages]
    known = vocabulary(spec(CID).context, dev)
    hidden = {t.id: t for t in spec(CID).traces if t.split == "test"}
    for entry in report:
        trace = hidden[entry["trace_id"]]
        assert entry["miss"] == "missed_failure" and entry["cluster"] == trace.cluster
        assert entry["contract_clause"] == contract[trace.violated_clause or 0]
        assert 1 <= len(entry["excerpts"]) <= 2
        shown = " ".join(e["text"] for e in entry["excerpts"])
        assert MASK in shown  # the failing reply's new wording is hidden
        assert not any(ch.isdigit() for ch in shown)  # amounts and ids are always masked
        words = WORD.findall(shown.replace(MASK, " "))
        assert words and all(w.lower() in known or w.lower() + "s" in known
                         or w.lower()[:-1] in known for w in words)  # only what the learner has
    assert body["summary"]["critical_count"] > 0
    state = browser.get(URL).json
    assert state["tabs"]["rules"]["dev_ready"] is False
    assert state["tabs"]["rules"]["prod_ready"] is False and not state["progress"]["completed"]


def test_seeding_is_idempotent_updates_and_retires(factory: Factory, tmp_path: Path) -> None:
    folder = tmp_path / "challenges"
    folder.mkdir()
    for path in CHALLENGES_DIR.glob("*.yaml"):
        shutil.copy(path, folder / path.name)
    with db.factory() as session:
        first = seed_challenges(session, folder)
        assert first["added"] == len(list(folder.glob("*.yaml")))
        again = seed_challenges(session, folder)
        assert again == {"added": 0, "updated": 0, "unchanged": first["added"], "retired": 0}
    browser = factory.signed_in()
    assert attempt(browser, CID, tab="rules", text=PARTIAL, set="dev").status_code == 201
    path = folder / f"{CID}.yaml"
    path.write_text(path.read_text().replace("title: Refund verification",
                                             "title: Refund checks"))
    (folder / "prompt-injection-tool-result.yaml").unlink()
    with db.factory() as session:
        changed = seed_challenges(session, folder)
    assert changed["updated"] == 1 and changed["retired"] == 1
    listed = {c["id"]: c["title"] for c in browser.get(BASE).json["items"]}
    assert listed[CID] == "Refund checks" and "prompt-injection-tool-result" not in listed
    assert len(listed) == len(list(folder.glob("*.yaml")))  # every other challenge stays
    assert browser.get(f"{BASE}/prompt-injection-tool-result").status_code == 404
    assert browser.get(f"{URL}/attempts").json["total"] == 1  # attempts survive an update
    path.write_text("id: refund-verification\n")
    with db.factory() as session:
        try:
            seed_challenges(session, folder)
            raise AssertionError("a broken file must stop the seed")
        except ChallengeFileError as error:
            assert all(p.startswith(f"{CID}.yaml: ") for p in error.problems)
    assert browser.get(URL).json["title"] == "Refund checks"  # nothing written
