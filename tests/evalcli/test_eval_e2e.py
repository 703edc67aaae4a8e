"""`assay eval` end to end against the fake provider, in process (the engine and the run
folder's SQLite file, no Redis): each exit code, the cache on a second run, the
budget stop, output formats, run files valid against their schema, runs and compare."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

import pytest
from click.testing import CliRunner, Result

from assay.cli import main
from assay.core.evalcli import runfiles
from assay.providers.fake import FakeProviderThread
from assay.providers.fake_config import FakeConfig, Script


def config(url: str, *, scorers: str, cases: int = 4, provider_extra: str = "",
           price: float = 1.0, settings: str = "") -> str:
    tests = "".join(f"  - vars: {{question: question {i}}}\n" for i in range(1, cases + 1))
    return f"""\
description: e2e
prompts:
  - name: ask
    system: Be brief.
    template: "Answer: {{{{question}}}}"
providers:
  - name: fake
    kind: fake
    base_url: {url}
{provider_extra}models:
  - name: fast
    provider: fake
    model: fake-fast
    params: {{temperature: 0, max_tokens: 50}}
    input_price_per_mtok: {price}
    output_price_per_mtok: {price}
  - name: smart
    provider: fake
    model: fake-smart
    params: {{temperature: 0, max_tokens: 50}}
    input_price_per_mtok: {price}
    output_price_per_mtok: {price}
tests:
{tests}scorers:
{scorers}settings:
  max_retries: 0
{settings}"""


SAYS = "  - name: says\n    kind: icontains\n    params: {value: question}\n"


def run(tmp_path: Path, text: str, *args: str, name: str = "assay.yaml") -> Result:
    path = tmp_path / name
    path.write_text(text)
    return CliRunner().invoke(main, ["eval", str(path), "--runs-dir", str(tmp_path / "runs"),
                                     *args], env={"ASSAY_FAKE_PROVIDER_URL": ""})


def latest(tmp_path: Path) -> runfiles.RunData:
    folder = runfiles.resolve(tmp_path / "runs", "latest")
    assert runfiles.validate_run(folder) == []
    return runfiles.read_run(folder)


def test_exit_0_then_the_cache_serves_the_second_run(
        tmp_path: Path, fake_provider: FakeProviderThread) -> None:
    judge = ("  - name: rubric\n    kind: llm_judge\n    weight: 2\n    params:\n"
             "      judges: [smart]\n      rubric: {criteria: [{name: accuracy, description: "
             "'Is it right', weight: 0.6, scale: '1-10'}, {name: clarity, description: "
             "'Is it clear', weight: 0.4, scale: '1-10'}]}\n")
    first = run(tmp_path, config(fake_provider.url, scorers=SAYS + judge), "--output", "junit",
                "-o", str(tmp_path / "junit.xml"))
    assert first.exit_code == 0, first.output
    one = latest(tmp_path)
    assert one.metadata["status"] == "completed" and one.metadata["totals"]["cached"] == 0
    assert one.metadata["totals"]["cost_micros"] > 0
    assert {r["model"] for r in one.responses} == {"fast", "smart"} and len(one.responses) == 8
    rubric = [e for e in one.evaluations if e["scorer"] == "rubric"]
    assert len(rubric) == 8 and all(set(e["criteria"]) == {"accuracy", "clarity"}
                                    for e in rubric)
    assert all(e["reasoning"] for e in rubric)
    # the judge's scores as it gave them (1..10) and its confidence (0..1), per output
    assert all(1 <= v <= 10 for e in rubric for v in e["criteria"].values())
    assert any(v > 1 for e in rubric for v in e["criteria"].values())
    confidences = [e["confidence"] for e in rubric]
    assert all(isinstance(c, float) and 0 < c < 1 for c in confidences)
    for row in one.metadata["summary"]:  # the mean per model, and per scorer
        mine = [e["confidence"] for e in rubric if e["model"] == row["model"]]
        assert row["confidence"] == {"mean": round(sum(mine) / len(mine), 6), "n": 4}
        assert row["scorers"]["rubric"]["confidence"] == row["confidence"]
        assert row["scorers"]["says"]["confidence"] is None
    assert "the judges' mean confidence" in first.output  # a column of the results table
    assert one.metadata["totals"]["judge_cost_micros"] > 0
    composite = [e for e in one.evaluations if e["scorer"] == runfiles.COMPOSITE]
    expected = [(1 * s["value"] + 2 * r["value"]) / 3 for s, r in zip(
        sorted((e for e in one.evaluations if e["scorer"] == "says"), key=_key),
        sorted(rubric, key=_key), strict=True)]
    assert [round(e["value"], 5) for e in sorted(composite, key=_key)] == [
        round(v, 5) for v in expected]
    suites = ET.parse(tmp_path / "junit.xml").getroot()
    assert sorted(s.get("name") for s in suites) == ["fast", "smart"]
    assert all(s.get("tests") == "4" and s.get("failures") == "0" for s in suites)
    assert "fast" in first.output and "p95" in first.output  # the results table

    second = run(tmp_path, config(fake_provider.url, scorers=SAYS + judge), "-q")
    assert second.exit_code == 0, second.output
    two = latest(tmp_path)
    assert two.id != one.id
    assert two.metadata["totals"]["cached"] == 8 and two.metadata["totals"]["cost_micros"] == 0
    assert [r["text"] for r in two.responses] == [r["text"] for r in one.responses]
    assert "p95" not in second.output  # quiet

    third = run(tmp_path, config(fake_provider.url, scorers=SAYS), "-q", "--no-cache")
    assert third.exit_code == 0 and latest(tmp_path).metadata["totals"]["cached"] == 0
    index = runfiles.read_index(tmp_path / "runs")
    assert runfiles.problems("index", index) == [] and len(index["runs"]) == 3


JUDGE = ("  - name: rubric\n    kind: llm_judge\n    params:\n      judges: [smart]\n"
         "      rubric: {criteria: [{name: accuracy, description: 'Is it right', weight: 0.5,"
         " scale: '1-10'}, {name: clarity, description: 'Is it clear', weight: 0.5,"
         " scale: '1-10'}]}\n")


@pytest.mark.parametrize(("reply", "problem"), [
    ('{"criteria": {"accuracy": {"score": 7, "rationale": "ok"}, "clarity": {"score": 8, '
     '"rationale": "ok"}}, "summary": "Fine."}', "reply: 'confidence' missing"),
    ('{"criteria": {"accuracy": {"score": 7, "rationale": "ok"}, "clarity": {"score": 8, '
     '"rationale": "ok"}}, "summary": "Fine.", "confidence": 7}', "confidence: 7 outside 0-1"),
    ('{"criteria": {"accuracy": {"score": 11, "rationale": "ok"}, "clarity": {"score": 8, '
     '"rationale": "ok"}}, "summary": "Fine.", "confidence": 0.5}',
     "criteria.accuracy.score: 11 outside 1-10"),
    ("I'd give it 8/10, fairly confident.", "the reply is not JSON"),
])
def test_a_malformed_judge_answer_is_a_scorer_error_not_a_crash(
        tmp_path: Path, reply: str, problem: str) -> None:
    script = Script(model="fake-smart", pattern="## Answer format", reply=reply)
    with FakeProviderThread(FakeConfig(latency_ms=0, seed=7, scripts=[script])) as fake:
        result = run(tmp_path, config(fake.url, scorers=SAYS + JUDGE, cases=2), "-q")
    # the run finishes (the composite of each output is its other scorers'); no crash
    assert result.exit_code == 0, result.output
    data = latest(tmp_path)  # the run files are written and valid
    rubric = [e for e in data.evaluations if e["scorer"] == "rubric"]
    assert len(rubric) == 4
    for e in rubric:
        assert e["value"] is None and e["confidence"] is None and e["criteria"] == {}
        assert problem in e["error"] and "reply rejected" in e["error"]
    assert all(e["value"] == 1.0 for e in data.evaluations if e["scorer"] == "says")
    assert all(row["confidence"] is None for row in data.metadata["summary"])


def test_code_scorer_must_compile_before_its_tests(tmp_path: Path) -> None:
    code = ("  - name: tests\n    kind: code_execution\n    params:\n"
            "      language: python\n      must_compile: true\n      entrypoint: double\n"
            "      tests: [{call: 'double(2)', expected: 4}, {call: 'double(5)', expected: 10}]\n")
    scripts = [Script(model="fake-fast", pattern="question",
                      reply="```python\ndef double(x):\n    return x * 2\n```"),
               Script(model="fake-smart", pattern="question",
                      reply="```python\ndef double(x)\n    return x * 2\n```")]
    with FakeProviderThread(FakeConfig(latency_ms=0, seed=7, scripts=scripts)) as fake:
        result = run(tmp_path, config(fake.url, scorers=code, cases=2), "-q")
    assert result.exit_code == 1, result.output  # the smart model's code fails
    data = latest(tmp_path)
    rows = [e for e in data.evaluations if e["scorer"] == "tests"]
    assert sorted(e["model"] for e in rows) == ["fast", "fast", "smart", "smart"]
    for e in rows:
        if e["model"] == "fast":  # compiles, so on to its tests, which it passes
            assert (e["value"], e["passed"], e["reasoning"]) == (1.0, True,
                                                                 "all 2 tests passed")
        else:
            assert (e["value"], e["passed"], e["error"]) == (0.0, False, None)
            assert e["reasoning"].startswith("must_compile: the code does not compile: "
                                             "SyntaxError")
            assert e["reasoning"].endswith("(line 1); no test was run")


def _key(e: dict[str, Any]) -> tuple[Any, ...]:
    return (e["model"], e["case_index"], e["repeat"])


def test_exit_1_on_failed_assertions_and_under_fail_under(
        tmp_path: Path, fake_provider: FakeProviderThread) -> None:
    never = "  - name: never\n    kind: icontains\n    params: {value: zzzz}\n"
    failed = run(tmp_path, config(fake_provider.url, scorers=never, cases=2), "-q",
                 "--format", "json")
    assert failed.exit_code == 1, failed.output
    assert "4 of 4 outputs failed an assertion" in failed.output
    assert json.loads(failed.output[failed.output.index("{"):])["exit_code"] == 1

    one = "  - name: first\n    kind: icontains\n    params: {value: question 1}\n"
    text = config(fake_provider.url, scorers=one, cases=3)
    low = run(tmp_path, text, "-q", "--fail-under", "0.9")
    assert low.exit_code == 1 and "first 0.333 < 0.9" in low.output
    assert run(tmp_path, text, "-q", "--fail-under", "0.3").exit_code == 0
    csv_out = run(tmp_path, text, "-q", "--fail-under", "0.3", "--format", "csv")
    header, *rows = csv_out.output.strip().splitlines()
    assert header.startswith("case_id,model,prompt") and len(rows) == 6


def test_exit_3_when_the_budget_stops_the_run(
        tmp_path: Path, fake_provider: FakeProviderThread) -> None:
    # each call reserves ~$0.06 at $1,000 per million tokens: $0.10 holds two or three
    text = config(fake_provider.url, scorers=SAYS, cases=6, price=1000,
                  settings="  concurrency: 1\n")
    result = run(tmp_path, text, "-q", "--max-cost", "0.10", "--no-cache")
    assert result.exit_code == 3, result.output
    stopped = latest(tmp_path)
    assert stopped.metadata["status"] == "budget_exceeded"
    assert stopped.metadata["totals"]["skipped"] > 0
    assert stopped.metadata["totals"]["cost_micros"] <= 100_000  # never past the cap


def test_exit_4_when_provider_errors_leave_cells_failed(
        tmp_path: Path, fake_provider: FakeProviderThread) -> None:
    text = config(fake_provider.url, scorers=SAYS, cases=2,
                  provider_extra="    headers: {X-Fake-Fault: '500'}\n")
    result = run(tmp_path, text, "-q", "--no-cache")
    assert result.exit_code == 4, result.output
    failed = latest(tmp_path)
    assert failed.metadata["totals"]["failed"] == 4
    assert all(r["error"]["class"] for r in failed.responses)


def test_estimate_prints_the_range_and_runs_nothing(
        tmp_path: Path, fake_provider: FakeProviderThread) -> None:
    result = run(tmp_path, config(fake_provider.url, scorers=SAYS, cases=3), "--estimate")
    assert result.exit_code == 0, result.output
    assert "3 cases x 2 targets x 1 repeats = 6 calls" in result.output
    assert "estimated cost: $" in result.output
    assert not (tmp_path / "runs").exists()


def test_html_output_without_the_report_module_is_a_clear_usage_error(
        tmp_path: Path, fake_provider: FakeProviderThread) -> None:
    try:
        import assay.core.evalreport  # noqa: F401
        pytest.skip("assay report is installed")
    except ImportError:
        pass
    result = run(tmp_path, config(fake_provider.url, scorers=SAYS, cases=1), "-q",
                 "--output", "html")
    assert result.exit_code == 2 and "assay report" in result.output


def test_expected_answers_and_a_factual_check(
        tmp_path: Path, fake_provider: FakeProviderThread) -> None:
    similar = ("  - name: close\n    kind: similarity\n    params: {method: token_set_ratio}\n"
               "    threshold: 0.99\n")
    text = config(fake_provider.url, scorers=similar, cases=2).replace(
        "  - vars: {question: question 1}\n",
        "  - vars: {question: question 1}\n    expected: 42\n")
    result = run(tmp_path, text, "-q")
    data = latest(tmp_path)
    assert data.cases[0]["expected"] == {"output": "42"}
    close = [e for e in data.evaluations if e["scorer"] == "close"]
    assert close and all(e["value"] is not None or e["error"] for e in close)
    assert result.exit_code in (0, 1), result.output  # a verdict, not a crash


def test_init_writes_an_example_that_loads(tmp_path: Path) -> None:
    target = tmp_path / "assay.yaml"
    assert CliRunner().invoke(main, ["init", str(target)]).exit_code == 0
    again = CliRunner().invoke(main, ["init", str(target)])
    assert again.exit_code == 2 and "exists" in again.output
    from assay.core.evalcli.config import load

    cfg = load(target, need_keys=False)
    assert {p.kind for p in cfg.providers.values()} == {"openrouter", "ollama", "fake"}
    [rubric] = [s for s in cfg.scorers if s.kind == "llm_judge"]
    assert {c["scale"] for c in rubric.params["rubric"]["criteria"]} == {"1-10"}
    # the commented-out code scorer is valid too, once its lines are uncommented
    text = target.read_text()
    uncommented = text.replace("\n  # - name: tests", "\n  - name: tests").replace(
        "\n  #   ", "\n    ")
    assert uncommented.count("kind: code_execution") == 1
    target.write_text(uncommented)
    [code] = [s for s in load(target, need_keys=False).scorers if s.kind == "code_execution"]
    assert code.params["must_compile"] is True and code.params["language"] == "python"


def test_a_local_run_leaves_the_process_database_alone(
        app: Any, tmp_path: Path, fake_provider: FakeProviderThread) -> None:
    from assay.extensions import db
    from assay.runtime import current

    engine, runtime = db.engine, current()
    result = run(tmp_path, config(fake_provider.url, scorers=SAYS, cases=1), "-q")
    assert result.exit_code == 0, result.output
    assert db.engine is engine and current() is runtime
    assert "runs" not in str(db.engine.url)
