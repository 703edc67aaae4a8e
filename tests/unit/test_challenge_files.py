"""Challenge files: every seeded file loads, and each kind of mistake is an error naming
the file and the field path (all of a file's mistakes at once)."""

from __future__ import annotations

import copy
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from assay.core.challenges.content import ChallengeFileError, read_file, read_folder
from assay.core.challenges.seeding import CHALLENGES_DIR

FILES = sorted(CHALLENGES_DIR.glob("*.yaml"))
BASE = "refund-verification"


@cache
def _base() -> dict[str, Any]:
    return dict(yaml.load((CHALLENGES_DIR / f"{BASE}.yaml").read_text(), Loader=yaml.CSafeLoader))


def _good() -> dict[str, Any]:
    return copy.deepcopy(_base())


def _problems(tmp_path: Path, data: Any, name: str = BASE) -> list[str]:
    path = tmp_path / f"{name}.yaml"
    path.write_text(data if isinstance(data, str) else yaml.dump(data, Dumper=yaml.CSafeDumper))
    with pytest.raises(ChallengeFileError) as caught:
        read_file(path)
    assert caught.value.status == 422
    return caught.value.problems


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_every_seeded_file_loads(path: Path) -> None:
    spec = read_file(path)
    assert spec.id == path.stem
    dev = [t for t in spec.traces if t.split == "dev"]
    test = [t for t in spec.traces if t.split == "test"]
    assert len(dev) >= 12 and len(test) >= 20
    assert {t.label for t in test} == {"pass", "fail"}


def _set(data: dict[str, Any], path: list[Any], value: Any) -> dict[str, Any]:
    data = copy.deepcopy(data)
    node: Any = data
    for key in path[:-1]:
        node = node[key]
    if value is _DELETE:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return data


_DELETE = object()
CASES = [
    ("unknown top field", ["titel"], "x", "refund-verification.yaml: titel: unknown field"),
    ("missing title", ["title"], _DELETE, "refund-verification.yaml: title: required text"),
    ("bad difficulty", ["difficulty"], "Brutal",
     "difficulty: must be one of Easy, Medium, Hard, not 'Brutal'"),
    ("bad category", ["category"], "Fun", "category: must be one of Performance, Safety"),
    ("bad threshold", ["pass_threshold"], 1.5, "pass_threshold: must be a number in (0, 1]"),
    ("baseline text missing", ["baseline_rules_text"], _DELETE,
     "baseline_rules_text: required when start_mode is baseline"),
    ("empty contract", ["context", "contract"], [], "context.contract: required"),
    ("tool without schema", ["context", "tools", 0, "input_schema"], "object",
     "context.tools[0].input_schema: must be a JSON Schema"),
    ("bad role", ["dev_set", 3, "messages", 0, "role"], "agent",
     "dev_set[3].messages[0].role: must be one of user, assistant, tool, not 'agent'"),
    ("content not text", ["dev_set", 0, "messages", 0, "content"], 12,
     "dev_set[0].messages[0].content: required text"),
    ("tool message unnamed", ["dev_set", 0, "messages", 2, "metadata"], {},
     "dev_set[0].messages[2].metadata.tool_name: a tool message names its tool"),
    ("bad label", ["test_set", 4, "label"], "maybe", "test_set[4].label: must be one of pass"),
    ("fail without clause", ["dev_set", 1, "violated_clause"], _DELETE,
     "dev_set[1].violated_clause: a failing trace names its clause"),
    ("clause out of range", ["test_set", 0, "violated_clause"], 9,
     "test_set[0].violated_clause: a failing trace names its clause: an index 0..2"),
    ("fail without severity", ["dev_set", 1, "severity"], "fatal",
     "dev_set[1].severity: must be one of low, high, critical"),
    ("severity on a pass", ["dev_set", 0, "severity"], "high",
     "dev_set[0].severity: only a failing trace (label: fail) has it"),
    ("fail index out of range", ["dev_set", 1, "fail_index"], 99,
     "dev_set[1].fail_index: must be a message index"),
    ("duplicate trace id", ["test_set", 0, "id"], "dev-01",
     "test_set: trace id 'dev-01' is used twice"),
    ("too few test traces", ["test_set"], [], "test_set: needs at least 20 traces, has 0"),
    ("unknown trace field", ["dev_set", 2, "lable"], "pass", "dev_set[2].lable: unknown field"),
]


@pytest.mark.parametrize(("path", "value", "expected"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_each_mistake_names_file_and_field(tmp_path: Path, path: list[Any], value: Any,
                                           expected: str) -> None:
    problems = _problems(tmp_path, _set(_good(), path, value))
    assert any(expected in p for p in problems), problems
    assert all(p.startswith(f"{BASE}.yaml: ") for p in problems)


def test_a_test_trace_copied_from_dev_is_refused(tmp_path: Path) -> None:
    data = _good()
    data["test_set"][5]["messages"] = copy.deepcopy(data["dev_set"][0]["messages"])
    problems = _problems(tmp_path, data)
    assert any("repeats the messages of 'dev-01'" in p for p in problems), problems


def test_id_must_match_the_file_name(tmp_path: Path) -> None:
    problems = _problems(tmp_path, _good(), name="other-name")
    assert any("id: must equal the file name without .yaml ('other-name')" in p
               for p in problems), problems


def test_yaml_syntax_errors_give_the_position(tmp_path: Path) -> None:
    problems = _problems(tmp_path, "id: x\ntitle: [unclosed\n")
    assert problems[0].startswith(f"{BASE}.yaml: (YAML at line ") and "column" in problems[0]


def test_a_document_that_is_no_mapping(tmp_path: Path) -> None:
    assert _problems(tmp_path, "- a\n- b\n") == [
        f"{BASE}.yaml: (top level): must be a mapping of challenge fields"]


def test_every_mistake_of_a_file_is_reported_at_once(tmp_path: Path) -> None:
    data = _set(_set(_good(), ["difficulty"], "x"), ["dev_set", 0, "label"], "y")
    problems = _problems(tmp_path, data)
    assert len(problems) == 2, problems


def test_a_folder_reports_every_broken_file(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("id: a\n")
    (tmp_path / "b.yaml").write_text(": :\n")
    with pytest.raises(ChallengeFileError) as caught:
        read_folder(tmp_path)
    assert any(p.startswith("a.yaml: ") for p in caught.value.problems)
    assert any(p.startswith("b.yaml: ") for p in caught.value.problems)
