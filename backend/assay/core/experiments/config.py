"""The wizard's seven steps (edison FR-EC-001…007): defaults, and the checks of each step
with field errors by path ("rubric.criteria[0].weight"). A draft may hold an unfinished
step (auto-save keeps anything well typed); a step must pass its check to continue, and
every step to start.

Limits are the spec's: objective 20-2,000 characters; rubric 2-10 criteria, names of 1-50
letters/digits/spaces, descriptions 10-500, weights 0-1 summing to 1 ± 0.01, scales 0-1,
0-3, 0-5, 0-10, 0-100; prompt 50-20,000 characters, system text up to 5,000, up to 10
few-shots; 1-10 model configurations (temperature 0-2, max tokens 1-100,000, top_p 0-1,
penalties -2..2, up to 4 stop sequences); 1-5 pointwise judges, one optional pairwise
judge; max iterations 1-100, minimum delta 0-1, convergence window 1-10, budget $0-10,000,
alert at 50-100%, max tokens 0-10,000,000; at most 1-20 rejected suggestions in a row
(default 3) before the experiment stops (a reviewer who keeps rejecting is not converging:
the refiner's calls would only spend).
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Mapping
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from assay.core.datasets.models import Dataset, DatasetVersion
from assay.core.errors import Invalid
from assay.core.llm import kinds as kinds_
from assay.core.llm.models import ModelConfig
from assay.core.llm.params import check_params
from assay.core.prompts.service import few_shot_errors, parse_variables
from assay.core.prompts.tools import tool_errors
from assay.core.runs.planning import MAX_GRID_VALUES
from assay.scorers.judging import FieldErrors
from assay.scorers.rubric import parse_rubric

STEPS = ("objective", "rubric", "prompt", "data", "models", "judges", "stop")
GOAL_MIN, GOAL_MAX = 20, 2000
PROMPT_MIN, PROMPT_MAX, SYSTEM_MAX = 50, 20_000, 5000
MODELS_MAX, MAX_TOKENS_MAX, TARGETS_MAX = 10, 100_000, 50
JUDGES_MIN, JUDGES_MAX = 1, 5
HOLDOUT_MAX = 0.5
BUDGET_MAX_MICROS = 10_000 * 1_000_000
MAX_REJECTIONS, MAX_REJECTIONS_DEFAULT = 20, 3
TOKENS_MAX = 10_000_000
DATA_KINDS = ("cases", "questions")
# Without a suggestion there is no new prompt to run: the loop can only stop, so `false`
# is refused rather than stored and ignored.
NO_SUGGESTION_STOPS = ("must be true: the loop always stops when the refiner has no "
                       "suggestion (there is no new prompt version to run)")

DEFAULTS: dict[str, Any] = {
    "objective": {"goal": ""},
    "rubric": {"criteria": []},
    "prompt": {"template": "", "system": None, "few_shots": [], "tools": []},
    "data": {"dataset_version_id": None, "holdout_fraction": 0.3, "split_seed": None},
    "models": {"targets": []},
    "judges": {"pointwise": [], "pairwise": False, "pairwise_judge": None, "refiner": None,
               "safety": {"pii": True, "jailbreak": True, "action": "flag"}},
    "stop": {"max_iterations": 10, "min_delta": 0.02, "convergence_window": 3,
             "max_budget_micros": 100_000_000, "budget_alert_threshold": 0.8,
             "max_total_tokens": None, "stop_if_no_suggestion": True,
             "max_rejections": 3},
}


def defaults() -> dict[str, Any]:
    return copy.deepcopy(DEFAULTS)


def merged(config: Mapping[str, Any], patch: Mapping[str, Any]) -> dict[str, Any]:
    """`config` with each step of `patch` merged over it, key by key (auto-save sends only
    the step being edited, or only some of its fields)."""
    out = {step: dict(config.get(step) or DEFAULTS[step]) for step in STEPS}
    for step, values in patch.items():
        if step in STEPS and values is not None:
            out[step].update(values)
    return out


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) \
        and math.isfinite(value)


def _range(errors: FieldErrors, path: str, value: Any, low: float, high: float,
           integer: bool = False, optional: bool = False) -> None:
    if value is None and optional:
        return
    if not _number(value) or (integer and not isinstance(value, int)):
        errors.add(path, "must be an integer" if integer else "must be a number")
    elif not low <= value <= high:
        errors.add(path, f"must be between {low:g} and {high:g}")


def _objective(step: Mapping[str, Any], errors: FieldErrors, **_: Any) -> None:
    goal = step.get("goal")
    text = goal.strip() if isinstance(goal, str) else ""
    if len(text) < GOAL_MIN:
        errors.add("objective.goal", f"Objective must be at least {GOAL_MIN} characters")
    elif len(goal) > GOAL_MAX:  # type: ignore[arg-type]
        errors.add("objective.goal", f"Objective too long (at most {GOAL_MAX} characters)")


def _rubric(step: Mapping[str, Any], errors: FieldErrors, **_: Any) -> None:
    parse_rubric({"criteria": step.get("criteria")}, errors, "rubric")


def _prompt(step: Mapping[str, Any], errors: FieldErrors, **_: Any) -> None:
    template, system = step.get("template"), step.get("system")
    if not isinstance(template, str) or len(template.strip()) < PROMPT_MIN:
        errors.add("prompt.template", f"The prompt must be at least {PROMPT_MIN} characters")
    elif len(template) > PROMPT_MAX:
        errors.add("prompt.template", f"The prompt is at most {PROMPT_MAX} characters")
    if system is not None and (not isinstance(system, str) or len(system) > SYSTEM_MAX):
        errors.add("prompt.system", f"Text of at most {SYSTEM_MAX} characters, or null")
    for where, reasons in {**few_shot_errors(step.get("few_shots") or []),
                           **tool_errors(step.get("tools") or [])}.items():
        for reason in reasons:
            errors.add(f"prompt.{where}", reason)


def _models_in_project(session: Session, project_id: int, ids: list[Any]) -> dict[int, Any]:
    wanted = [i for i in ids if isinstance(i, int) and not isinstance(i, bool)]
    if not wanted:
        return {}
    return {m.id: m for m in session.scalars(select(ModelConfig).where(
        ModelConfig.id.in_(wanted), ModelConfig.project_id == project_id,
        ModelConfig.archived_at.is_(None)))}


def _data(step: Mapping[str, Any], errors: FieldErrors, session: Session, project_id: int,
          **_: Any) -> None:
    version_id = step.get("dataset_version_id")
    _range(errors, "data.holdout_fraction", step.get("holdout_fraction"), 0, HOLDOUT_MAX)
    seed = step.get("split_seed")
    if seed is not None:
        _range(errors, "data.split_seed", seed, 0, 2**31 - 1, integer=True)
    if not isinstance(version_id, int) or isinstance(version_id, bool):
        errors.add("data.dataset_version_id", "Pick, import or generate the test cases")
        return
    row = session.execute(select(DatasetVersion, Dataset).join(
        Dataset, Dataset.id == DatasetVersion.dataset_id).where(
        DatasetVersion.id == version_id, Dataset.project_id == project_id)).first()
    if row is None:
        errors.add("data.dataset_version_id", "No such dataset version in this project")
        return
    version, dataset = row
    if dataset.kind not in DATA_KINDS:
        errors.add("data.dataset_version_id",
                   f"A {dataset.kind} dataset cannot feed a prompt; use one of cases or "
                   "questions")
    minimum = 2 if (step.get("holdout_fraction") or 0) > 0 else 1
    if version.case_count < minimum:
        errors.add("data.dataset_version_id", f"The version has {version.case_count} cases; "
                                              f"at least {minimum} are needed")


def _target(errors: FieldErrors, path: str, target: Any, models: dict[int, Any]) -> int:
    """Checks one model entry; returns how many configurations its grid makes."""
    if not isinstance(target, Mapping):
        errors.add(path, "must be {model_id, params?, grid?}")
        return 0
    model = models.get(target.get("model_id"))  # type: ignore[arg-type]
    if model is None:
        errors.add(f"{path}.model_id", "No such model in this project")
        return 0
    family = kinds_.get_kind(model.credential.kind).params_family
    params = target.get("params") or {}
    combos = 1
    grid = target.get("grid") or {}
    if not isinstance(params, Mapping) or not isinstance(grid, Mapping):
        errors.add(path, "params and grid must be objects")
        return 0
    for name, reasons in check_params(family, dict(params)).items():
        for reason in reasons:
            errors.add(f"{path}.params.{name}", reason)
    if isinstance(params.get("max_tokens"), int) and params["max_tokens"] > MAX_TOKENS_MAX:
        errors.add(f"{path}.params.max_tokens", f"must be between 1 and {MAX_TOKENS_MAX}")
    for name, values in grid.items():
        if not isinstance(values, list) or not 1 <= len(values) <= MAX_GRID_VALUES:
            errors.add(f"{path}.grid.{name}", f"must be a list of 1 to {MAX_GRID_VALUES} values")
            continue
        combos *= len(values)
        for value in values:
            for reason in check_params(family, {name: value}).get(name, []):
                errors.add(f"{path}.grid.{name}", reason)
    return combos


def _models(step: Mapping[str, Any], errors: FieldErrors, session: Session, project_id: int,
            **_: Any) -> None:
    targets = step.get("targets")
    if not isinstance(targets, list) or not 1 <= len(targets) <= MODELS_MAX:
        errors.add("models.targets", f"Select 1 to {MODELS_MAX} model configurations")
        return
    models = _models_in_project(session, project_id, [
        t.get("model_id") for t in targets if isinstance(t, Mapping)])
    total = sum(_target(errors, f"models.targets[{i}]", t, models)
                for i, t in enumerate(targets))
    if total > TARGETS_MAX:
        errors.add("models.targets", f"{total} configurations after the parameter grid; "
                                     f"at most {TARGETS_MAX}")


def _judges(step: Mapping[str, Any], errors: FieldErrors, session: Session, project_id: int,
            **_: Any) -> None:
    pointwise = step.get("pointwise")
    if not isinstance(pointwise, list) or not JUDGES_MIN <= len(pointwise) <= JUDGES_MAX:
        errors.add("judges.pointwise", f"Select {JUDGES_MIN} to {JUDGES_MAX} judges")
        pointwise = []
    elif len(set(map(str, pointwise))) < len(pointwise):
        errors.add("judges.pointwise", "A judge is listed twice")
    pairwise_judge, refiner = step.get("pairwise_judge"), step.get("refiner")
    found = _models_in_project(session, project_id, [*pointwise, pairwise_judge, refiner])
    if refiner is not None and refiner not in found:
        errors.add("judges.refiner", "No such model in this project")
    for i, judge in enumerate(pointwise):
        if judge not in found:
            errors.add(f"judges.pointwise[{i}]", "No such model in this project")
    if not isinstance(step.get("pairwise"), bool):
        errors.add("judges.pairwise", "must be true or false")
    elif step["pairwise"] and pairwise_judge not in found:
        errors.add("judges.pairwise_judge", "Pick the pairwise judge's model")
    safety = step.get("safety")
    if not isinstance(safety, Mapping) or not isinstance(safety.get("pii"), bool) \
            or not isinstance(safety.get("jailbreak"), bool) \
            or safety.get("action") not in ("flag", "block"):
        errors.add("judges.safety", "must be {pii: bool, jailbreak: bool, action: flag|block}")


def _stop(step: Mapping[str, Any], errors: FieldErrors, **_: Any) -> None:
    _range(errors, "stop.max_iterations", step.get("max_iterations"), 1, 100, integer=True)
    _range(errors, "stop.min_delta", step.get("min_delta"), 0, 1)
    _range(errors, "stop.convergence_window", step.get("convergence_window"), 1, 10,
           integer=True)
    _range(errors, "stop.max_budget_micros", step.get("max_budget_micros"), 0,
           BUDGET_MAX_MICROS, integer=True)
    _range(errors, "stop.budget_alert_threshold", step.get("budget_alert_threshold"), 0.5, 1)
    _range(errors, "stop.max_total_tokens", step.get("max_total_tokens"), 0, TOKENS_MAX,
           integer=True, optional=True)
    _range(errors, "stop.max_rejections", step.get("max_rejections"), 1, MAX_REJECTIONS,
           integer=True, optional=True)
    if step.get("stop_if_no_suggestion") is not True:
        errors.add("stop.stop_if_no_suggestion", NO_SUGGESTION_STOPS)


def _model_ref(value: Any) -> int | str | None:
    if isinstance(value, bool) or value in (None, ""):
        return None
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return value if isinstance(value, int | str) else None


def refiner(config: Mapping[str, Any]) -> int | str | None:
    """The refiner's model: the wizard's `judges.refiner`; configurations stored before it
    existed may name it `refiner.model_id`; else the first pointwise judge (an id, or a
    model name as judges are named in scorer params). None when there is no judge."""
    judges = config.get("judges") or {}
    legacy = config.get("refiner")
    for value in (judges.get("refiner") if isinstance(judges, Mapping) else None,
                  legacy.get("model_id") if isinstance(legacy, Mapping) else None,
                  next(iter((judges.get("pointwise") or []) if isinstance(judges, Mapping)
                            else []), None)):
        chosen = _model_ref(value)
        if chosen is not None:
            return chosen
    return None


def max_rejections(config: Mapping[str, Any]) -> int:
    """Rejected suggestions in a row that stop the experiment (drafts saved before the
    field existed have none: the default)."""
    value = (config.get("stop") or {}).get("max_rejections")
    return int(value) if isinstance(value, int) and not isinstance(value, bool) \
        else MAX_REJECTIONS_DEFAULT


Check = Callable[..., None]
CHECKS: dict[str, Check] = {
    "objective": _objective, "rubric": _rubric, "prompt": _prompt, "data": _data,
    "models": _models, "judges": _judges, "stop": _stop}


def step_errors(session: Session, project_id: int, config: Mapping[str, Any],
                steps: tuple[str, ...] = STEPS) -> dict[str, list[str]]:
    """Field path -> reasons for the given steps of `config`; empty when they are valid."""
    errors = FieldErrors()
    for step in steps:
        values = config.get(step)
        if not isinstance(values, Mapping):
            errors.add(step, "This step is missing")
            continue
        CHECKS[step](values, errors, session=session, project_id=project_id)
    return errors.errors


def cross_errors(session: Session, config: Mapping[str, Any]) -> dict[str, list[str]]:
    """Across steps: every prompt variable must be filled by the cases' inputs."""
    from assay.core.datasets.service import version_cases

    prompt = config["prompt"]
    names = parse_variables(prompt.get("template"), prompt.get("system"))
    if not names:
        return {}
    missing: set[str] = set()
    for case in version_cases(session, config["data"]["dataset_version_id"]):
        missing.update(n for n in names if n not in (case.input or {}))
    if missing:
        return {"data.dataset_version_id": [
            f"Cases do not fill the prompt's variables: {', '.join(sorted(missing))}"]}
    return {}


def check(session: Session, project_id: int, config: Mapping[str, Any],
          steps: tuple[str, ...] = STEPS) -> None:
    """Raise 422 with field errors unless the steps are valid."""
    errors = step_errors(session, project_id, config, steps)
    if not errors and steps == STEPS:
        errors = cross_errors(session, config)
    if errors:
        raise Invalid("Some steps of the experiment are not valid", {"json": errors})
