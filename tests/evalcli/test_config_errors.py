"""A bad config is exit 2 with file, line and field path, before any call: one test per
kind of mistake, through the `assay eval` command."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from assay.cli import main

GOOD = """\
prompts:
  - name: ask
    template: "Answer: {{question}}"
providers:
  - name: fake
    kind: fake
    base_url: http://127.0.0.1:9
models:
  - name: fast
    provider: fake
    model: fake-fast
    params: {temperature: 0}
tests:
  - vars: {question: one}
scorers:
  - name: says
    kind: contains
    params: {value: one}
"""


def _eval(tmp_path: Path, text: str, *extra: str) -> tuple[int, str]:
    config = tmp_path / "assay.yaml"
    config.write_text(text)
    result = CliRunner().invoke(main, ["eval", str(config), "--runs-dir",
                                       str(tmp_path / "runs"), *extra],
                                env={"ASSAY_FAKE_PROVIDER_URL": ""})
    return result.exit_code, result.output


CASES = [
    ("not yaml", GOOD.replace("  - name: fast", "  - name: [fast"),
     "provider: fake\n    model", "", "not valid YAML"),
    ("unknown top field", GOOD + "extras: 1\n", "extras", "extras", "unknown field"),
    ("missing section", GOOD.replace("tests:\n  - vars: {question: one}\n", ""), None, "tests",
     "is required"),
    ("unknown provider kind", GOOD.replace("kind: fake", "kind: bard"), "kind: bard",
     "providers[0].kind", "unknown provider kind 'bard'"),
    ("key variable not set", GOOD.replace("    kind: fake\n", "    kind: openai\n"
                                          "    api_key_env: NOPE_API_KEY\n"), "api_key_env",
     "providers[0].api_key_env", "the environment variable NOPE_API_KEY is not set"),
    ("bad key variable name", GOOD.replace("    kind: fake\n", "    kind: fake\n"
                                           "    api_key_env: ASSAY_SECRET\n"), "api_key_env",
     "providers[0].api_key_env", "must name an environment variable ending in _API_KEY"),
    ("bad provider setting", GOOD.replace("    kind: fake\n", "    kind: fake\n"
                                          "    max_concurrency: 0\n"), "max_concurrency",
     "providers[0].max_concurrency", "Must be an integer from 1"),
    ("unknown provider of a model", GOOD.replace("provider: fake", "provider: nope"),
     "provider: nope",
     "models[0].provider", "no provider named 'nope'"),
    ("bad model param", GOOD.replace("{temperature: 0}", "{temperature: 9}"), "temperature: 9",
     "models[0].params.temperature", "Must be between 0 and 2"),
    ("negative price", GOOD.replace("    model: fake-fast\n", "    model: fake-fast\n"
                                    "    input_price_per_mtok: -1\n"), "input_price",
     "models[0].input_price_per_mtok", "must be a number from 0"),
    ("unknown scorer kind", GOOD.replace("kind: contains", "kind: vibes"), "kind: vibes",
     "scorers[0].kind", "unknown scorer kind 'vibes'"),
    ("bad scorer params", GOOD.replace("params: {value: one}", "params: {valu: one}"),
     "params: {valu",
     "scorers[0].params.value", "Missing required field"),
    ("judge not a model", GOOD + "  - name: rubric\n    kind: llm_judge\n    params:\n"
     "      judges: [gpt-9]\n      rubric: {criteria: [{name: a, description: A},"
     " {name: b, description: B}]}\n", "judges: [gpt-9]", "scorers[1].params.judges[0]",
     "no model named"),
    ("code in a language the sandbox cannot run",
     GOOD + "  - name: tests\n    kind: code_execution\n    params:\n"
     "      language: javascript\n      must_compile: true\n",
     "language: javascript", "scorers[1].params.language",
     "'javascript' cannot run in Assay's code sandbox; supported languages: python"),
    ("must_compile not a boolean",
     GOOD + "  - name: tests\n    kind: code_execution\n    params:\n"
     "      must_compile: sometimes\n",
     "must_compile: sometimes", "scorers[1].params.must_compile", "Must be true or false"),
    ("variable missing in a case", GOOD.replace("{question: one}", "{q: one}"), "template:",
     "prompts[0].template", "uses {{question}} but test case 1 has no variable 'question'"),
    ("tests file missing", GOOD.replace("tests:\n  - vars: {question: one}\n",
                                        "tests: cases.csv\n"), "tests:", "tests",
     "cannot read"),
    ("a variable that is not text", GOOD.replace("{question: one}", "{question: [1, 2]}"),
     "- vars:", "tests[0].vars.question", "must be text (or a number)"),
    ("settings out of range", GOOD + "settings:\n  concurrency: 0\n", "concurrency: 0",
     "settings.concurrency", "must be an integer from 1 to 1000"),
]


@pytest.mark.parametrize(("text", "marker", "path", "message"),
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_config_mistake_is_exit_2_with_file_line_and_field(
        tmp_path: Path, text: str, marker: str | None, path: str, message: str) -> None:
    # the line of the first line holding `marker` (a multi-line marker: where it starts)
    line = 1 if marker is None else text[:text.index(marker)].count("\n") + 1
    code, output = _eval(tmp_path, text)
    assert code == 2, output
    where = f"assay.yaml:{line}: {path or '(top)'}: {message}"
    assert where in output, output
    assert not (tmp_path / "runs").exists()  # nothing was run, nothing written


def test_every_problem_is_reported_at_once(tmp_path: Path) -> None:
    text = GOOD.replace("kind: contains", "kind: vibes").replace("provider: fake",
                                                                  "provider: nope")
    code, output = _eval(tmp_path, text)
    assert code == 2 and "2 problem(s)" in output
    assert "models[0].provider" in output and "scorers[0].kind" in output


def test_cases_from_csv_and_jsonl_and_a_dataset_export(tmp_path: Path) -> None:
    from assay.core.evalcli.config import load

    (tmp_path / "cases.csv").write_text("question,expected\nfrom csv,yes\n")
    (tmp_path / "cases.jsonl").write_text('{"question": "flat"}\n'
                                          '{"vars": {"question": "vars"}, "id": "v"}\n')
    (tmp_path / "export.jsonl").write_text('{"input": {"question": "exported"}, '
                                           '"expected": "x", "tags": ["t"], "metadata": {}}\n')
    config = tmp_path / "assay.yaml"
    config.write_text(GOOD.replace("tests:\n  - vars: {question: one}\n",
                                   "tests:\n  - file: cases.csv\n  - cases.jsonl\n"
                                   "  - export.jsonl\n  - vars: {question: inline}\n"))
    cfg = load(config, env={})
    assert [c["vars"]["question"] for c in cfg.cases] == [
        "from csv", "flat", "vars", "exported", "inline"]
    assert [c["id"] for c in cfg.cases] == ["1", "2", "v", "4", "5"]
    assert cfg.cases[0]["expected"] == {"output": "yes"} and cfg.cases[3]["tags"] == ["t"]


def test_openrouter_and_ollama_conventions(tmp_path: Path) -> None:
    from assay.core.evalcli.config import OPENROUTER_HEADERS, load

    config = tmp_path / "assay.yaml"
    config.write_text(GOOD.replace(
        "providers:\n", "providers:\n  - name: or\n    kind: openrouter\n"
        "    api_key_env: OPENROUTER_API_KEY\n    headers: {X-Title: Mine}\n"
        "  - name: local\n    kind: ollama\n").replace(
        "models:\n", "models:\n  - {name: llama, provider: local, model: llama3.2}\n"
        "  - {name: mini, provider: or, model: openai/gpt-4o-mini}\n"))
    cfg = load(config, env={"OPENROUTER_API_KEY": "sk-or-test"})
    openrouter = cfg.providers["or"]
    assert openrouter.base_url == "https://openrouter.ai/api"
    assert openrouter.config["headers"] == {**OPENROUTER_HEADERS, "X-Title": "Mine"}
    assert cfg.providers["local"].base_url == "http://localhost:11434"
    llama = next(m for m in cfg.models if m.name == "llama")
    assert (llama.input_price_per_mtok, llama.output_price_per_mtok) == (0, 0)
