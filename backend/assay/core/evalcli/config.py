"""The `assay eval` config file: YAML read with line numbers, checked whole before any call.

Every mistake is reported at once as `file:line: field.path: message` (ConfigError, exit
code 2). Scorer params are checked by the server's own scorer registry, model params by
the provider family's rules, provider settings by core/llm/kinds.py: one set of rules.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from assay.core.errors import DomainError, Invalid
from assay.core.evalcli import cases as cases_
from assay.core.llm import kinds as kinds_
from assay.core.llm.params import validate_params
from assay.core.prompts.placeholders import parse_variables
from assay.scorers.base import ParamsError
from assay.scorers.registry import build, kind_names

TOP = ("description", "prompts", "providers", "models", "tests", "scorers", "settings")
# kinds a terminal run cannot use: they need a human, a second output, or a question set
SERVER_ONLY_SCORERS = frozenset({"manual", "pairwise_judge", "question_quality"})
OPENROUTER_HEADERS = {"HTTP-Referer": "https://github.com/assay-eval/assay", "X-Title": "Assay"}
MAX_CONCURRENCY = 1000
# the server's rule for secret_env (credentials.py): only *_API_KEY variables reach a provider
ENV_NAME = re.compile(r"(?!ASSAY_)[A-Z_][A-Z0-9_]{0,90}_API_KEY")


@dataclass(frozen=True)
class Problem:
    path: str
    message: str
    line: int | None


class ConfigError(DomainError):
    status = 422
    code = "CONFIG_ERROR"

    def __init__(self, file: str, problems: list[Problem]) -> None:
        self.file, self.problems = file, problems
        super().__init__("\n".join(self.lines()))

    def lines(self) -> list[str]:
        return [f"{self.file}:{p.line or 1}: {p.path or '(top)'}: {p.message}"
                for p in self.problems]


@dataclass
class Provider:
    name: str
    kind: str
    base_url: str | None
    api_key_env: str | None
    config: dict[str, Any]


@dataclass
class Model:
    name: str
    provider: str
    model: str
    params: dict[str, Any]
    input_price_per_mtok: float | None  # dollars; None: unpriced (OpenRouter: looked up)
    output_price_per_mtok: float | None


@dataclass
class ScorerSpec:
    name: str
    kind: str
    params: dict[str, Any]
    weight: float
    threshold: float | None


@dataclass
class EvalConfig:
    file: str
    description: str | None
    prompts: list[dict[str, Any]]
    providers: dict[str, Provider]
    models: list[Model]
    cases: list[dict[str, Any]]
    scorers: list[ScorerSpec]
    concurrency: int = 20
    repeats: int = 1
    timeout_s: int | None = None
    max_retries: int | None = None
    max_cost_micros: int | None = None
    fail_under: float | None = None
    raw: dict[str, Any] = field(default_factory=dict)


# libyaml's safe loader where PyYAML was built with it: the same documents, errors and
# marks, parsed in C (the pure-Python one took ~10 ms of each `assay eval` on a short config)
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Lines:
    """Field path -> line, from the YAML node tree."""

    def __init__(self, text: str) -> None:
        self.lines: dict[str, int] = {}
        try:
            node = yaml.compose(text, Loader=_LOADER)
        except yaml.YAMLError:
            return
        if node is not None:
            self._walk(node, "")

    def _walk(self, node: yaml.Node, path: str) -> None:
        self.lines[path] = node.start_mark.line + 1
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                child = f"{path}.{key.value}" if path else str(key.value)
                self.lines[child] = key.start_mark.line + 1
                self._walk(value, child)
                self.lines[child] = key.start_mark.line + 1
        elif isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                self._walk(item, f"{path}[{i}]")

    def at(self, path: str) -> int | None:
        while path:
            if path in self.lines:
                return self.lines[path]
            cut = max(path.rfind("."), path.rfind("["))
            path = path[:cut] if cut > 0 else ""
        return None


class _Check:
    def __init__(self, lines: _Lines) -> None:
        self.lines = lines
        self.problems: list[Problem] = []

    def add(self, path: str, message: str) -> None:
        self.problems.append(Problem(path, message, self.lines.at(path)))

    def keys(self, value: dict[str, Any], path: str, allowed: tuple[str, ...]) -> None:
        for key in value:
            if key not in allowed:
                self.add(f"{path}.{key}" if path else str(key),
                         f"unknown field (allowed: {', '.join(allowed)})")

    def mapping(self, value: Any, path: str) -> dict[str, Any] | None:
        if not isinstance(value, dict):
            self.add(path, f"must be a mapping, got {type(value).__name__}")
            return None
        return value

    def items(self, doc: dict[str, Any], name: str, required: bool = True) -> list[Any]:
        value = doc.get(name)
        if value is None:
            if required:
                self.add(name, "is required")
            return []
        if not isinstance(value, list) or (required and not value):
            self.add(name, "must be a non-empty list")
            return []
        return value

    def text(self, item: dict[str, Any], key: str, path: str, required: bool = True) -> str | None:
        value = item.get(key)
        if value is None:
            if required:
                self.add(f"{path}.{key}", "is required")
            return None
        if not isinstance(value, str) or (required and not value.strip()):
            self.add(f"{path}.{key}", "must be a non-empty string")
            return None
        return value

    def number(self, item: dict[str, Any], key: str, path: str, low: float, high: float | None,
               integer: bool = False) -> Any:
        value = item.get(key)
        if value is None:
            return None
        kinds_ok = (int,) if integer else (int, float)
        if isinstance(value, bool) or not isinstance(value, kinds_ok) or value < low or (
                high is not None and value > high):
            top = "" if high is None else f" to {high}"
            self.add(f"{path}.{key}", f"must be {'an integer' if integer else 'a number'} "
                                      f"from {low}{top}")
            return None
        return value

    def unique(self, item: dict[str, Any], path: str, seen: set[str]) -> str | None:
        name = self.text(item, "name", path)
        if name is not None:
            if name in seen:
                self.add(f"{path}.name", f"{name!r} is used twice")
            seen.add(name)
        return name


def load(path: Path, env: dict[str, str] | None = None, need_keys: bool = True) -> EvalConfig:
    """The checked config, or ConfigError with every problem (file, line, field path)."""
    env = dict(os.environ if env is None else env)
    file = str(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise ConfigError(file, [Problem("", f"cannot read the file: {exc.strerror}", None)]
                          ) from exc
    try:
        doc = yaml.load(text, Loader=_LOADER)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise ConfigError(file, [Problem("", f"not valid YAML: {getattr(exc, 'problem', exc)}",
                                         mark.line + 1 if mark else None)]) from exc
    check = _Check(_Lines(text))
    if not isinstance(doc, dict):
        check.add("", "the file must be a YAML mapping with prompts, models, tests, ...")
        raise ConfigError(file, check.problems)
    check.keys(doc, "", TOP)
    prompts = _prompts(check, doc)
    providers = _providers(check, doc, env, need_keys)
    models = _models(check, doc, providers)
    settings = check.mapping(doc.get("settings") or {}, "settings") or {}
    check.keys(settings, "settings", ("concurrency", "repeats", "timeout_s", "max_retries",
                                      "max_cost", "fail_under"))
    cases = cases_.load_tests(check, doc.get("tests"), path.parent)
    _check_variables(check, prompts, cases)
    scorers = _scorers(check, doc, {m.name for m in models})
    numbers = {"concurrency": check.number(settings, "concurrency", "settings", 1,
                                           MAX_CONCURRENCY, True),
               "repeats": check.number(settings, "repeats", "settings", 1, 100, True),
               "timeout_s": check.number(settings, "timeout_s", "settings", 1, 3600, True),
               "max_retries": check.number(settings, "max_retries", "settings", 0, 10, True),
               "max_cost": check.number(settings, "max_cost", "settings", 0, None),
               "fail_under": check.number(settings, "fail_under", "settings", 0, 1)}
    if check.problems:
        raise ConfigError(file, check.problems)
    max_cost = numbers["max_cost"]
    return EvalConfig(
        file=file, description=doc.get("description"), prompts=prompts, providers=providers,
        models=models, cases=cases, scorers=scorers,
        concurrency=numbers["concurrency"] or 20, repeats=numbers["repeats"] or 1,
        timeout_s=numbers["timeout_s"], max_retries=numbers["max_retries"],
        max_cost_micros=None if max_cost is None else round(max_cost * 1_000_000),
        fail_under=numbers["fail_under"], raw=doc)


def _prompts(check: _Check, doc: dict[str, Any]) -> list[dict[str, Any]]:
    out, seen = [], set()  # type: list[dict[str, Any]], set[str]
    for i, item in enumerate(check.items(doc, "prompts")):
        path = f"prompts[{i}]"
        if isinstance(item, str):  # a bare template
            item = {"name": f"prompt-{i + 1}", "template": item}
        if check.mapping(item, path) is None:
            continue
        check.keys(item, path, ("name", "template", "system"))
        name = item.get("name") or f"prompt-{i + 1}"
        if name in seen:
            check.add(f"{path}.name", f"{name!r} is used twice")
        seen.add(name)
        template = check.text(item, "template", path)
        system = check.text(item, "system", path, required=False)
        if template is not None:
            out.append({"name": name, "template": template, "system": system,
                        "variables": parse_variables(template, system)})
    return out


def _providers(check: _Check, doc: dict[str, Any], env: dict[str, str],
               need_keys: bool) -> dict[str, Provider]:
    out: dict[str, Provider] = {}
    for i, item in enumerate(check.items(doc, "providers")):
        path = f"providers[{i}]"
        if check.mapping(item, path) is None:
            continue
        check.keys(item, path, ("name", "kind", "base_url", "api_key_env", "headers",
                                *kinds_.COMMON_CONFIG[1:], "api_version", "deployment",
                                "organization", "anthropic_version"))
        name = check.unique(item, path, set(out))
        kind_name = check.text(item, "kind", path)
        if name is None or kind_name is None:
            continue
        if kind_name not in kinds_.KINDS:
            check.add(f"{path}.kind", f"unknown provider kind {kind_name!r} (one of: "
                                      f"{', '.join(kinds_.KINDS)})")
            continue
        kind = kinds_.KINDS[kind_name]
        config = {k: item[k] for k in item if k not in ("name", "kind", "base_url",
                                                        "api_key_env")}
        if kind_name == kinds_.OPENROUTER:  # OpenRouter's app attribution, unless given
            config["headers"] = {**OPENROUTER_HEADERS, **(config.get("headers") or {})}
        for key, messages in kinds_.check_config(kind, config).items():
            check.add(f"{path}.{key}", " ".join(messages))
        base_url = check.text(item, "base_url", path, required=False)
        if kind_name == kinds_.FAKE:
            base_url = env.get("ASSAY_FAKE_PROVIDER_URL") or base_url
        base_url = base_url or kinds_.default_base_url(kind, "", config)
        if base_url is None:
            check.add(f"{path}.base_url", f"is required for {kind.label}")
        key_env = check.text(item, "api_key_env", path, required=False)
        if key_env is not None and not ENV_NAME.fullmatch(key_env):
            check.add(f"{path}.api_key_env", "must name an environment variable ending in "
                                             "_API_KEY, not starting with ASSAY_")
        elif kind.needs_key and key_env is None:
            check.add(f"{path}.api_key_env", f"{kind.label} needs a key: name the environment "
                                             "variable that holds it")
        elif need_keys and key_env is not None and not env.get(key_env):
            check.add(f"{path}.api_key_env", f"the environment variable {key_env} is not set")
        out[name] = Provider(name, kind_name, base_url and kinds_.normalise_base_url(base_url),
                             key_env, kinds_.clean_config(kind, config))
    return out


def _models(check: _Check, doc: dict[str, Any], providers: dict[str, Provider]) -> list[Model]:
    out: list[Model] = []
    seen: set[str] = set()
    for i, item in enumerate(check.items(doc, "models")):
        path = f"models[{i}]"
        if check.mapping(item, path) is None:
            continue
        check.keys(item, path, ("name", "provider", "model", "params", "input_price_per_mtok",
                                "output_price_per_mtok"))
        model_id = check.text(item, "model", path)
        name = str(item.get("name") or model_id)
        if name in seen:
            check.add(f"{path}.name", f"{name!r} is used twice")
        seen.add(name)
        provider = check.text(item, "provider", path)
        if provider is not None and provider not in providers:
            check.add(f"{path}.provider", f"no provider named {provider!r} in providers")
            provider = None
        params = check.mapping(item.get("params") or {}, f"{path}.params") or {}
        prices = [check.number(item, key, path, 0, 10_000) for key in (
            "input_price_per_mtok", "output_price_per_mtok")]
        if provider is None or model_id is None or name is None:
            continue
        kind = providers[provider].kind
        if kind == kinds_.OLLAMA:  # local: free unless priced on purpose
            prices = [0 if p is None else p for p in prices]
        try:
            params = validate_params(kinds_.KINDS[kind].params_family, params)
        except Invalid as exc:
            for key, messages in exc.errors.get("json", {}).get("params", {}).items():
                check.add(f"{path}.params.{key}", " ".join(messages))
        out.append(Model(str(name), provider, model_id, params, prices[0], prices[1]))
    return out


def _scorers(check: _Check, doc: dict[str, Any], model_names: set[str]) -> list[ScorerSpec]:
    out: list[ScorerSpec] = []
    seen: set[str] = set()
    for i, item in enumerate(check.items(doc, "scorers", required=False)):
        path = f"scorers[{i}]"
        if check.mapping(item, path) is None:
            continue
        check.keys(item, path, ("name", "kind", "params", "weight", "threshold"))
        kind = check.text(item, "kind", path)
        name = str(item.get("name") or kind)
        if name in seen:
            check.add(f"{path}.name", f"{name!r} is used twice")
        seen.add(name)
        params = check.mapping(item.get("params") or {}, f"{path}.params")
        weight = check.number(item, "weight", path, 0, 1000)
        threshold = check.number(item, "threshold", path, 0, 1)
        if kind is None or params is None or name is None:
            continue
        if kind not in kind_names() or kind in SERVER_ONLY_SCORERS:
            usable = sorted(set(kind_names()) - SERVER_ONLY_SCORERS)
            check.add(f"{path}.kind", f"unknown scorer kind {kind!r} (one of: "
                                      f"{', '.join(usable)})")
            continue
        try:
            build(kind, params)
        except ParamsError as exc:
            for key, messages in exc.errors.items():
                check.add(f"{path}.params.{key}" if key else f"{path}.params",
                          " ".join(messages))
        for j, judge in enumerate(params.get("judges") or []):
            if isinstance(judge, str) and judge not in model_names:
                check.add(f"{path}.params.judges[{j}]",
                          f"no model named {judge!r} in models")
        out.append(ScorerSpec(str(name), kind, params, 1.0 if weight is None else weight,
                              threshold))
    return out


def _check_variables(check: _Check, prompts: list[dict[str, Any]],
                     cases: list[dict[str, Any]]) -> None:
    """Every variable a prompt uses is in every case (the first few misses are named)."""
    for p, prompt in enumerate(prompts):
        missing = [(c["index"], v) for c in cases for v in prompt["variables"]
                   if v not in c["vars"]]
        for index, variable in missing[:3]:
            check.add(f"prompts[{p}].template", f"uses {{{{{variable}}}}} but test case "
                                                f"{index + 1} has no variable {variable!r}")
