"""Pre-run validation (edison "Pre-Run Validation"): every reason a well-formed run cannot
start, not only the first. Each reason is {code, message} plus, where it applies,
model_id, target (the index of the request's targets entry), label, prompt_version_id,
case_ids and variables.

Codes: no_targets, empty_dataset, credential_missing, credential_failing,
unpriced_with_budget, missing_variables, needs_prompt, budget_spent, model_archived.
"""

from __future__ import annotations

import os
from typing import Any

from sqlalchemy.orm import Session

from assay.core.llm import kinds as kinds_
from assay.core.llm.models import ModelConfig
from assay.core.llm.service import priced
from assay.core.projects.models import Project
from assay.core.runs.planning import PlannedTarget, Resolved, RunSpec, resolve
from assay.core.runs.rendering import missing_variables

REASON_CODES = ("no_targets", "empty_dataset", "credential_missing", "credential_failing",
                "unpriced_with_budget", "missing_variables", "needs_prompt", "budget_spent",
                "model_archived")
MAX_CASE_IDS = 100  # listed per reason; the message gives the full count


def problems(session: Session, project: Project, spec: RunSpec) -> list[dict[str, Any]]:
    """Every reason a run of `spec` cannot start (empty: it can). Bad input (an unknown model,
    a parameter the provider refuses...) raises Invalid instead."""
    return collect_problems(resolve(session, project, spec))


def _credential_reasons(model: ModelConfig) -> list[dict[str, Any]]:
    credential = model.credential
    where = f"Model {model.name}: credential {credential.label}"
    kind = kinds_.KINDS.get(credential.kind)
    if credential.secret_env and not os.environ.get(credential.secret_env):
        return [{"code": "credential_missing", "model_id": model.id,
                 "message": f"{where} reads its key from {credential.secret_env}, which is "
                            "not set on this server"}]
    if kind is not None and kind.needs_key and not credential.secret_ciphertext \
            and not credential.secret_env:
        return [{"code": "credential_missing", "model_id": model.id,
                 "message": f"{where} has no API key"}]
    if credential.last_test_ok is False:
        why = f": {credential.last_test_error}" if credential.last_test_error else ""
        return [{"code": "credential_failing", "model_id": model.id,
                 "message": f"{where} failed its last test{why}"}]
    return []


def _model_reasons(resolved: Resolved) -> list[dict[str, Any]]:
    reasons: list[dict[str, Any]] = []
    budget = resolved.spec.budget_micros is not None \
        or resolved.project.budget_micros is not None
    models = {t.model.id: t.model for t in resolved.targets if t.model is not None}
    for model in models.values():
        if model.archived_at is not None:
            reasons.append({"code": "model_archived", "model_id": model.id,
                            "message": f"Model {model.name} is archived: restore it to use "
                                       "it"})
        reasons += _credential_reasons(model)
        if budget and not priced(model):
            reasons.append({"code": "unpriced_with_budget", "model_id": model.id,
                            "message": f"Model {model.name} has no price, so a budget cannot "
                                       "be kept: set its prices or remove the budget"})
    judges = {m.id: m for m in resolved.judges.values()} if budget else {}
    for judge in judges.values():
        if not priced(judge) and judge.id not in models:
            reasons.append({"code": "unpriced_with_budget", "model_id": judge.id,
                            "message": f"Judge model {judge.name} has no price, so a budget "
                                       "cannot be kept: set its prices or remove the budget"})
    return reasons


def _prompt_reasons(resolved: Resolved) -> list[dict[str, Any]]:
    reasons: list[dict[str, Any]] = []
    if resolved.dataset.kind == "cases":
        for index in sorted({t.index for t in resolved.targets if t.version is None}):
            target = next(t for t in resolved.targets if t.index == index)
            reasons.append({"code": "needs_prompt", "target": index, "label": target.label,
                            "message": f"Target {index + 1} ({target.label}) needs a prompt "
                                       "version: template cases are rendered through one"})
    by_version: dict[int, PlannedTarget] = {}
    for target in resolved.targets:
        if target.version is not None:
            by_version.setdefault(target.version.id, target)
    for target in by_version.values():
        parts = target.prompt_parts
        assert target.version is not None and target.prompt is not None
        case_ids: list[int] = []
        variables: dict[str, None] = {}
        for case_id, data, _ in resolved.cases:
            missing = missing_variables(parts, data)
            if missing:
                case_ids.append(case_id)
                variables.update(dict.fromkeys(missing))
        if case_ids:
            name = f"{target.prompt.name} v{target.version.number}"
            reasons.append({
                "code": "missing_variables", "target": target.index, "label": target.label,
                "prompt_version_id": target.version.id, "case_ids": case_ids[:MAX_CASE_IDS],
                "variables": list(variables),
                "message": f"Prompt {name} uses {', '.join(variables)}, missing in "
                           f"{len(case_ids)} case(s)"})
    return reasons


def _budget_reasons(resolved: Resolved) -> list[dict[str, Any]]:
    reasons: list[dict[str, Any]] = []
    project, spec = resolved.project, resolved.spec
    if project.budget_micros is not None and project.spent_micros >= project.budget_micros:
        reasons.append({"code": "budget_spent",
                        "message": "The project's budget is spent: raise it to run more"})
    if spec.budget_micros is not None and spec.budget_micros < 1:
        reasons.append({"code": "budget_spent", "message": "The run's budget is below 1 "
                                                            "micro-dollar"})
    return reasons


def collect_problems(resolved: Resolved) -> list[dict[str, Any]]:
    reasons: list[dict[str, Any]] = []
    if not resolved.is_trace and not resolved.spec.targets:
        reasons.append({"code": "no_targets", "message": "Choose at least one target"})
    if resolved.version.case_count == 0:
        reasons.append({"code": "empty_dataset",
                        "message": f"Version {resolved.version.number} of the dataset has no "
                                   "cases"})
    if not resolved.is_trace:
        reasons += _model_reasons(resolved)
        reasons += _prompt_reasons(resolved)
    reasons += _budget_reasons(resolved)
    return reasons
