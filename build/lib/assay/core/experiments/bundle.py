"""The experiment bundle: a zip of experiment.yaml (name, description, template and the
frozen configuration), prompts.yaml plus one prompts/v<N>.txt per version (with parent
and changelog), cases.jsonl (the pinned dataset version), results.csv and report.md.

Importing a bundle makes a new draft in the target project: its cases become a new
dataset, the configuration is kept, and model ids that do not exist in the project are
dropped from the models and judges steps (the draft's `problems` then ask for them)."""

from __future__ import annotations

import io
import json
import zipfile
from typing import Any

import yaml
from sqlalchemy import select
from sqlalchemy.orm import Session

from assay.core.auth.models import User
from assay.core.datasets.models import Dataset
from assay.core.datasets.service import create_dataset, latest_version, version_cases
from assay.core.errors import Invalid
from assay.core.experiments import config as config_
from assay.core.experiments import exports, service
from assay.core.experiments.models import Experiment
from assay.core.llm.models import ModelConfig
from assay.core.projects.models import Project
from assay.core.prompts.models import PromptVersion

FORMAT = "assay-experiment-bundle/1"
MAX_BYTES = 10_000_000
MAX_CASES = 10_000


def build(session: Session, experiment: Experiment, report: dict[str, Any]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("experiment.yaml", yaml.safe_dump({
            "format": FORMAT, "name": experiment.name, "description": experiment.description,
            "template": experiment.template, "status": experiment.status,
            "stop_reason": experiment.stop_reason, "split_seed": experiment.split_seed,
            "config": experiment.config}, sort_keys=False, allow_unicode=True))
        versions = list(session.scalars(select(PromptVersion).where(
            PromptVersion.prompt_id == experiment.prompt_id).order_by(PromptVersion.number))) \
            if experiment.prompt_id else []
        numbers = {v.id: v.number for v in versions}
        z.writestr("prompts.yaml", yaml.safe_dump([{
            "number": v.number, "parent": numbers.get(v.parent_id or 0), "note": v.note,
            "system": v.system, "template": v.template, "few_shots": v.few_shots,
            "tools": v.tools, "created_at": v.created_at.isoformat()} for v in versions],
            sort_keys=False, allow_unicode=True))
        for v in versions:
            z.writestr(f"prompts/v{v.number}.txt", v.template)
        version_id = experiment.dataset_version_id or experiment.config.get(
            "data", {}).get("dataset_version_id")
        cases = version_cases(session, version_id) if version_id else []
        z.writestr("cases.jsonl", "".join(json.dumps(
            {"input": c.input, "expected": c.expected, "tags": c.tags}, ensure_ascii=False)
            + "\n" for c in cases))
        z.writestr("results.csv", "".join(exports.results_csv(session, experiment)))
        z.writestr("report.md", exports.markdown(report))
    return buffer.getvalue()


def _bad(message: str) -> Invalid:
    return Invalid(f"Not an experiment bundle: {message}", {"json": {"content": [message]}})


def _read(data: bytes) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    if len(data) > MAX_BYTES:
        raise _bad(f"larger than {MAX_BYTES // 1_000_000} MB")
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            names = set(z.namelist())
            if "experiment.yaml" not in names:
                raise _bad("experiment.yaml is missing")
            meta = yaml.safe_load(z.read("experiment.yaml"))
            lines = z.read("cases.jsonl").decode("utf-8").splitlines() \
                if "cases.jsonl" in names else []
    except (zipfile.BadZipFile, yaml.YAMLError, UnicodeDecodeError) as exc:
        raise _bad(f"unreadable ({exc.__class__.__name__})") from exc
    if not isinstance(meta, dict) or meta.get("format") != FORMAT \
            or not isinstance(meta.get("config"), dict):
        raise _bad(f"experiment.yaml must have format {FORMAT} and a config")
    if len(lines) > MAX_CASES:
        raise _bad(f"more than {MAX_CASES} cases")
    try:
        cases = [json.loads(line) for line in lines if line.strip()]
    except ValueError as exc:
        raise _bad("cases.jsonl has a line that is not JSON") from exc
    return meta, cases


def _known_models(session: Session, project: Project, config: dict[str, Any]) -> None:
    ids = set(session.scalars(select(ModelConfig.id).where(
        ModelConfig.project_id == project.id, ModelConfig.archived_at.is_(None))))
    models = config.get("models") or {}
    models["targets"] = [t for t in models.get("targets") or []
                         if isinstance(t, dict) and t.get("model_id") in ids]
    judges = config.get("judges") or {}
    judges["pointwise"] = [j for j in judges.get("pointwise") or [] if j in ids]
    for key in ("pairwise_judge", "refiner"):
        if judges.get(key) not in ids:
            judges[key] = None


def import_bundle(session: Session, actor: User | None, project: Project,
                  data: bytes) -> Experiment:
    meta, cases = _read(data)
    config = {step: dict(v) for step, v in meta["config"].items()
              if step in config_.STEPS and isinstance(v, dict)}
    _known_models(session, project, config)
    name = str(meta.get("name") or "Imported experiment")[:180]
    data_step = dict(config.get("data") or {})
    data_step["dataset_version_id"] = None
    if cases:
        base, n = f"{name} cases"[:100], 1
        dataset_name = base
        while session.scalar(select(Dataset.id).where(Dataset.project_id == project.id,
                                                      Dataset.name == dataset_name)):
            n += 1
            dataset_name = f"{base[:92]} #{n}"
        dataset = create_dataset(session, actor, project, dataset_name, "cases", [
            {"input": c.get("input"), "expected": c.get("expected"),
             "tags": c.get("tags") or []} for c in cases],
            origin={"type": "imported", "format": "experiment-bundle", "rows": len(cases)})
        data_step["dataset_version_id"] = latest_version(session, dataset.id).id
    config["data"] = data_step
    return service.create(session, actor, project, f"{name} (imported)",
                          meta.get("description"), config, meta.get("template"))
