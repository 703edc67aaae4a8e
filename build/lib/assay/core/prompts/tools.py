"""Function-tool definitions kept with a prompt version: `{name, description?, parameters?}`
where `parameters` is a JSON Schema for the call's arguments (the shape OpenAI and Anthropic
both take). Checked on save so a version never holds a tool a provider would refuse."""

from __future__ import annotations

import json
import re
from typing import Any

import jsonschema_rs

TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
MAX_TOOLS = 32
MAX_DESCRIPTION = 1_024
MAX_TOOLS_CHARS = 40_000  # all definitions serialised, within the 1 MB request limit
KEYS = {"name", "description", "parameters"}


def _tool_errors(tool: Any, seen: set[str]) -> list[str]:
    if not isinstance(tool, dict):
        return ["Must be an object with name, description and parameters."]
    problems: list[str] = []
    extra = sorted(set(tool) - KEYS)
    if extra:
        problems.append(f"Unknown keys: {', '.join(extra)}.")
    name = tool.get("name")
    if not isinstance(name, str) or not TOOL_NAME.match(name):
        problems.append("name must be 1-64 letters, digits, _ or -.")
    elif name in seen:
        problems.append(f"name {name!r} is used by another tool.")
    else:
        seen.add(name)
    description = tool.get("description")
    if description is not None and (not isinstance(description, str)
                                    or len(description) > MAX_DESCRIPTION):
        problems.append(f"description must be text of at most {MAX_DESCRIPTION} characters.")
    parameters = tool.get("parameters")
    if parameters is not None:
        if not isinstance(parameters, dict) or parameters.get("type") != "object":
            problems.append('parameters must be a JSON Schema with "type": "object".')
        else:
            try:
                jsonschema_rs.validator_for(parameters, offline=True)
            except jsonschema_rs.ValidationError as exc:
                problems.append(f"parameters is not a valid JSON Schema: {exc.message}")
            except (jsonschema_rs.ReferencingError, ValueError, TypeError) as exc:
                problems.append(f"parameters is not a valid JSON Schema: {exc}")
    return problems


def tool_errors(tools: Any) -> dict[str, list[str]]:
    """Field -> reasons for a list of tool definitions; empty when valid."""
    if not isinstance(tools, list):
        return {"tools": ["Must be a list of tool definitions."]}
    if len(tools) > MAX_TOOLS:
        return {"tools": [f"At most {MAX_TOOLS} tools."]}
    if len(json.dumps(tools)) > MAX_TOOLS_CHARS:
        return {"tools": [f"The definitions are longer than {MAX_TOOLS_CHARS} characters."]}
    seen: set[str] = set()
    errors: dict[str, list[str]] = {}
    for index, tool in enumerate(tools):
        problems = _tool_errors(tool, seen)
        if problems:
            errors[f"tools[{index}]"] = problems
    return errors


def clean(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The definitions as stored: known keys only, in a fixed order."""
    return [{k: tool[k] for k in ("name", "description", "parameters") if k in tool}
            for tool in tools]
