"""Challenge traces agree with their own agent context: every tool call names a tool of the
manifest with arguments its input_schema accepts, every tool result answers a tool of the
manifest and, when that tool has an output_schema, is JSON it accepts. A learner reads the
manifest as ground truth, so a trace that breaks it would teach the wrong thing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest

from assay.core.challenges.content import ChallengeSpec, read_file
from assay.core.challenges.seeding import CHALLENGES_DIR

FILES = sorted(CHALLENGES_DIR.glob("*.yaml"))


def _problems(value: Any, schema: dict[str, Any]) -> list[str]:
    return [error.message for error in jsonschema_rs.validator_for(schema).iter_errors(value)]


def manifest_problems(spec: ChallengeSpec) -> list[str]:
    tools = {tool["name"]: tool for tool in spec.context["tools"]}
    problems = []
    for trace in spec.traces:
        for index, message in enumerate(trace.messages):
            where = f"{trace.split} {trace.id} message {index}"
            for call in message.get("tool_calls") or []:
                tool = tools.get(call["name"])
                if tool is None:
                    problems.append(f"{where}: calls unknown tool {call['name']!r}")
                    continue
                problems += [f"{where}: {call['name']} arguments: {p}"
                             for p in _problems(call.get("arguments") or {},
                                                tool["input_schema"])]
            if message["role"] != "tool":
                continue
            name = message["metadata"]["tool_name"]
            if name not in tools:
                problems.append(f"{where}: result of unknown tool {name!r}")
            elif tools[name].get("output_schema"):
                try:
                    result = json.loads(message["content"])
                except ValueError:
                    problems.append(f"{where}: {name} result is not JSON")
                    continue
                problems += [f"{where}: {name} result: {p}"
                             for p in _problems(result, tools[name]["output_schema"])]
    return problems


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_tool_calls_and_results_match_the_manifest(path: Path) -> None:
    assert manifest_problems(read_file(path)) == []


def test_each_kind_of_mismatch_is_reported(tmp_path: Path) -> None:
    text = (CHALLENGES_DIR / "escalation-policy.yaml").read_text(encoding="utf-8")
    broken = (text.replace("amount: 45, reason: missing", "amount: 4500, reason: missing", 1)
              .replace("[{name: lookup_order, arguments: {order_id: FW-40211}}]",
                       "[{name: find_order, arguments: {order_id: FW-40211}}]", 1)
              .replace('\'{"refund_id": "RF-8811", "status": "issued"}\'',
                       "'refund issued'", 1))
    (tmp_path / "escalation-policy.yaml").write_text(broken, encoding="utf-8")
    problems = manifest_problems(read_file(tmp_path / "escalation-policy.yaml"))
    assert len(problems) == 3, problems
    assert "dev dev-01 message 1: calls unknown tool 'find_order'" in problems
    assert any(p.startswith("dev dev-07 message 1: issue_refund arguments: 4500")
               for p in problems), problems
    assert "dev dev-07 message 2: issue_refund result is not JSON" in problems
