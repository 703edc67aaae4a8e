"""Challenge files (`seeds/challenges/<id>.yaml`, format in seeds/challenges/README.md):
read and checked into `ChallengeSpec`s. Every mistake is reported with the file and the
field path (`dev_set[3].messages[1].role`), all of a file's mistakes at once."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from assay.core.errors import DomainError

DIFFICULTIES = ("Easy", "Medium", "Hard")
CATEGORIES = ("Performance", "Safety")
START_MODES = {"baseline": "Debug baseline", "scratch": "From scratch"}
LABELS = ("pass", "fail")
SEVERITIES = ("low", "high", "critical")
ROLES = ("user", "assistant", "tool")
SPLITS = ("dev", "test")
MIN_DEV, MIN_TEST = 12, 20
DEFAULT_THRESHOLD = 0.85
ID = re.compile(r"^[a-z0-9][a-z0-9-]{0,79}$")
TEXTS = ("baseline_rules_text", "default_rules_text", "hint_rules_text",
         "baseline_judge_text", "default_judge_text", "hint_judge_text")
TOP_KEYS = ("id", "title", "description", "difficulty", "category", "start_mode",
            "pass_threshold", "context", *TEXTS, "dev_set", "test_set")
TRACE_KEYS = ("id", "messages", "label", "violated_clause", "severity", "cluster",
              "fail_index", "hidden_fail_reason")
MESSAGE_KEYS = ("role", "content", "tool_calls", "metadata")


_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml: 10x faster on big files


class ChallengeFileError(DomainError):
    """A challenge file that cannot be loaded: `problems` are "file: path: message"."""

    status, code = 422, "CHALLENGE_FILE_INVALID"

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("\n".join(problems))


@dataclass(frozen=True)
class TraceSpec:
    id: str
    split: str
    messages: tuple[dict[str, Any], ...]
    label: str  # pass | fail: what a correct eval concludes
    violated_clause: int | None = None
    severity: str | None = None
    cluster: str | None = None  # short failure label for the redacted report
    fail_index: int | None = None  # the message that breaks the contract
    hidden_fail_reason: str | None = None


@dataclass(frozen=True)
class ChallengeSpec:
    id: str
    title: str
    description: str
    difficulty: str
    category: str
    start_mode: str
    pass_threshold: float
    context: dict[str, Any]
    texts: dict[str, str]
    traces: tuple[TraceSpec, ...]

    @property
    def contract(self) -> list[str]:
        return list(self.context["contract"])


class _Check:
    def __init__(self, where: str) -> None:
        self.where = where
        self.problems: list[str] = []

    def add(self, path: str, message: str) -> None:
        self.problems.append(f"{self.where}: {path or '(top level)'}: {message}")

    def keys(self, value: Mapping[str, Any], allowed: Sequence[str], path: str) -> None:
        for key in value:
            if key not in allowed:
                self.add(_join(path, str(key)), f"unknown field; allowed: {', '.join(allowed)}")

    def text(self, value: Any, path: str, required: bool = True, limit: int = 50_000) -> str:
        if value is None and not required:
            return ""
        if not isinstance(value, str) or (required and not value.strip()):
            self.add(path, "required text" if value is None else "must be non-empty text")
            return ""
        if len(value) > limit:
            self.add(path, f"longer than {limit} characters")
        return value

    def choice(self, value: Any, options: Sequence[str], path: str) -> str:
        if value not in options:
            self.add(path, f"must be one of {', '.join(options)}, not {value!r}")
            return options[0]
        return str(value)


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _context(check: _Check, raw: Any) -> dict[str, Any]:
    if not isinstance(raw, Mapping):
        check.add("context", "required: a mapping with system_prompt, tools, contract")
        return {"system_prompt": "", "tools": [], "contract": []}
    check.keys(raw, ("system_prompt", "tools", "contract"), "context")
    prompt = check.text(raw.get("system_prompt"), "context.system_prompt")
    tools = raw.get("tools") or []
    if not isinstance(tools, list):
        check.add("context.tools", "must be a list of tool definitions")
        tools = []
    for i, tool in enumerate(tools):
        path = f"context.tools[{i}]"
        if not isinstance(tool, Mapping):
            check.add(path, "must be a mapping with name, description, input_schema")
            continue
        check.keys(tool, ("name", "description", "input_schema", "output_schema"), path)
        check.text(tool.get("name"), f"{path}.name", limit=100)
        check.text(tool.get("description"), f"{path}.description", required=False)
        for key in ("input_schema", "output_schema"):
            schema = tool.get(key)
            if (schema is None and key == "output_schema") or isinstance(schema, Mapping):
                continue
            check.add(f"{path}.{key}", "must be a JSON Schema (a mapping)")
    contract = raw.get("contract")
    if not isinstance(contract, list) or not contract:
        check.add("context.contract", "required: a non-empty list of clauses")
        contract = []
    for i, clause in enumerate(contract):
        check.text(clause, f"context.contract[{i}]", limit=1000)
    return {"system_prompt": prompt, "tools": [dict(t) for t in tools if isinstance(t, Mapping)],
            "contract": [str(c).strip() for c in contract]}


def _messages(check: _Check, raw: Any, path: str) -> tuple[dict[str, Any], ...]:
    if not isinstance(raw, list) or not raw:
        check.add(path, "required: a non-empty list of messages")
        return ()
    out = []
    for i, message in enumerate(raw):
        where = f"{path}[{i}]"
        if not isinstance(message, Mapping):
            check.add(where, "must be a mapping with role and content")
            continue
        check.keys(message, MESSAGE_KEYS, where)
        check.choice(message.get("role"), ROLES, f"{where}.role")
        if not isinstance(message.get("content"), str):
            check.add(f"{where}.content", "required text (may be empty for a tool call)")
        calls = message.get("tool_calls")
        if calls is not None:
            if message.get("role") != "assistant" or not isinstance(calls, list):
                check.add(f"{where}.tool_calls", "only an assistant message has tool_calls, "
                                                 "a list of {name, arguments}")
            else:
                for j, call in enumerate(calls):
                    if not (isinstance(call, Mapping) and isinstance(call.get("name"), str)):
                        check.add(f"{where}.tool_calls[{j}]", "must be {name, arguments}")
        meta = message.get("metadata")
        if meta is not None and not isinstance(meta, Mapping):
            check.add(f"{where}.metadata", "must be a mapping")
        if message.get("role") == "tool" and not (
                isinstance(meta, Mapping) and isinstance(meta.get("tool_name"), str)):
            check.add(f"{where}.metadata.tool_name", "a tool message names its tool")
        out.append({k: v for k, v in message.items() if k in MESSAGE_KEYS})
    return tuple(out)


def _trace(check: _Check, raw: Any, path: str, split: str, clauses: int) -> TraceSpec | None:
    if not isinstance(raw, Mapping):
        check.add(path, "must be a mapping with id, messages, label")
        return None
    check.keys(raw, TRACE_KEYS, path)
    trace_id = check.text(raw.get("id"), f"{path}.id", limit=80)
    messages = _messages(check, raw.get("messages"), f"{path}.messages")
    label = check.choice(raw.get("label"), LABELS, f"{path}.label")
    clause, severity, fail_index = raw.get("violated_clause"), raw.get("severity"), \
        raw.get("fail_index")
    if label == "fail":
        if not isinstance(clause, int) or isinstance(clause, bool) or \
                not 0 <= clause < max(clauses, 1):
            check.add(f"{path}.violated_clause",
                      f"a failing trace names its clause: an index 0..{clauses - 1} "
                      "into context.contract")
            clause = None
        severity = check.choice(severity, SEVERITIES, f"{path}.severity")
        if fail_index is not None and not (isinstance(fail_index, int)
                                           and 0 <= fail_index < len(messages)):
            check.add(f"{path}.fail_index", f"must be a message index 0..{len(messages) - 1}")
            fail_index = None
    else:
        for key in ("violated_clause", "severity", "fail_index"):
            if raw.get(key) is not None:
                check.add(f"{path}.{key}", "only a failing trace (label: fail) has it")
        clause = severity = fail_index = None
    cluster = raw.get("cluster")
    if cluster is not None:
        cluster = check.text(cluster, f"{path}.cluster", limit=80)
    reason = raw.get("hidden_fail_reason")
    if reason is not None:
        reason = check.text(reason, f"{path}.hidden_fail_reason", limit=2000)
    return TraceSpec(trace_id, split, messages, label, clause, severity, cluster or None,
                     fail_index, reason or None)


def check_challenge(data: Any, where: str, file_id: str | None = None) -> ChallengeSpec:
    """The challenge in `data` (a parsed YAML document), or ChallengeFileError."""
    check = _Check(where)
    if not isinstance(data, Mapping):
        raise ChallengeFileError([f"{where}: (top level): must be a mapping of challenge "
                                  "fields"])
    check.keys(data, TOP_KEYS, "")
    cid = check.text(data.get("id"), "id", limit=80)
    if cid and not ID.match(cid):
        check.add("id", "must be lower-case letters, digits and dashes")
    if file_id is not None and cid and cid != file_id:
        check.add("id", f"must equal the file name without .yaml ({file_id!r})")
    title = check.text(data.get("title"), "title", limit=200)
    description = check.text(data.get("description"), "description", limit=5000)
    difficulty = check.choice(data.get("difficulty"), DIFFICULTIES, "difficulty")
    category = check.choice(data.get("category"), CATEGORIES, "category")
    mode = check.choice(data.get("start_mode"), tuple(START_MODES), "start_mode")
    threshold = data.get("pass_threshold", DEFAULT_THRESHOLD)
    if isinstance(threshold, bool) or not isinstance(threshold, int | float) or \
            not 0 < threshold <= 1:
        check.add("pass_threshold", "must be a number in (0, 1]")
        threshold = DEFAULT_THRESHOLD
    context = _context(check, data.get("context"))
    texts = {key: check.text(data.get(key), key, required=False) for key in TEXTS}
    if mode == "baseline":
        for key in ("baseline_rules_text", "baseline_judge_text"):
            if not texts[key].strip():
                check.add(key, "required when start_mode is baseline")
    traces: list[TraceSpec] = []
    for split, least in (("dev", MIN_DEV), ("test", MIN_TEST)):
        key = f"{split}_set"
        raw = data.get(key)
        if not isinstance(raw, list) or len(raw) < least:
            check.add(key, f"needs at least {least} traces"
                      + (f", has {len(raw)}" if isinstance(raw, list) else ""))
            raw = raw if isinstance(raw, list) else []
        for i, item in enumerate(raw):
            trace = _trace(check, item, f"{key}[{i}]", split, len(context["contract"]))
            if trace is not None:
                traces.append(trace)
    _distinct(check, traces)
    if check.problems:
        raise ChallengeFileError(check.problems)
    return ChallengeSpec(cid, title, description, difficulty, category, mode,
                         float(threshold), context, texts, tuple(traces))


def _distinct(check: _Check, traces: Sequence[TraceSpec]) -> None:
    ids: dict[str, str] = {}
    bodies: dict[str, str] = {}
    for trace in traces:
        if trace.id in ids:
            check.add(f"{trace.split}_set", f"trace id {trace.id!r} is used twice")
        ids[trace.id] = trace.split
        body = repr(trace.messages)
        if body in bodies:  # a test trace equal to a dev one is no hidden test
            check.add(f"{trace.split}_set", f"trace {trace.id!r} repeats the messages of "
                                            f"{bodies[body]!r}")
        bodies[body] = trace.id


def read_file(path: Path) -> ChallengeSpec:
    where = str(path.name)
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=_LOADER)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark
        at = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "?"
        raise ChallengeFileError([f"{where}: (YAML at {at}): {error.problem}"]) from None
    except (yaml.YAMLError, UnicodeDecodeError, OSError) as error:
        raise ChallengeFileError([f"{where}: (file): {error}"]) from None
    return check_challenge(data, where, path.stem)


def read_folder(folder: Path) -> list[ChallengeSpec]:
    """Every `*.yaml` of `folder`, in file-name order; all problems of all files at once."""
    specs, problems = [], []
    for path in sorted(folder.glob("*.yaml")):
        try:
            specs.append(read_file(path))
        except ChallengeFileError as error:
            problems.extend(error.problems)
    if problems:
        raise ChallengeFileError(problems)
    return specs
