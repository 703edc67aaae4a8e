"""Experiment templates (edison FR-EC-001): YAML files in seeds/experiment_templates/, each
an objective, a rubric, a seed prompt and sample cases. They are read and checked on every
read (the files are small), so a broken file is reported with its name and field instead
of producing a draft that cannot start. Applying one makes a dataset of its cases and a
draft experiment with the first four steps filled."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from sqlalchemy import select
from sqlalchemy.orm import Session

from assay.core.auth.models import User
from assay.core.datasets.cases import case_errors
from assay.core.datasets.models import Dataset
from assay.core.datasets.service import create_dataset, latest_version
from assay.core.errors import DomainError, NotFound
from assay.core.experiments import service
from assay.core.experiments.config import CHECKS
from assay.core.experiments.models import Experiment
from assay.core.projects.models import Project
from assay.scorers.judging import FieldErrors
from assay.settings import REPO_ROOT

FOLDER = REPO_ROOT / "seeds" / "experiment_templates"
SLUG = re.compile(r"^[a-z0-9][a-z0-9-]{0,59}$")
FIELDS = ("name", "description", "objective", "rubric", "prompt", "cases")
MIN_CASES = 8


class TemplateInvalid(DomainError):
    """A template file shipped with Assay is broken: a server-side problem, named exactly."""

    status, code = 500, "TEMPLATE_INVALID"


@dataclass(frozen=True)
class Template:
    slug: str
    name: str
    description: str
    objective: str
    rubric: list[dict[str, Any]]
    prompt: dict[str, Any]
    cases: list[dict[str, Any]]

    @property
    def steps(self) -> dict[str, Any]:
        return {"objective": {"goal": self.objective}, "rubric": {"criteria": self.rubric},
                "prompt": {"template": self.prompt["template"],
                           "system": self.prompt.get("system"), "few_shots": [], "tools": []}}


def _case(raw: dict[str, Any]) -> dict[str, Any]:
    expected = raw.get("expected")
    return {"input": raw.get("input"), "tags": list(raw.get("tags") or []),
            "expected": {"output": expected} if isinstance(expected, str) else expected}


def parse(path: Path) -> Template:
    """The template in `path`, or TemplateInvalid naming the file and every bad field."""
    where = f"seeds/experiment_templates/{path.name}"
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise TemplateInvalid(f"{where}: not readable YAML ({exc})") from exc
    if not isinstance(raw, dict):
        raise TemplateInvalid(f"{where}: must be a mapping with {', '.join(FIELDS)}")
    errors = FieldErrors()
    for key in raw:
        if key not in FIELDS:
            errors.add(str(key), f"unknown field; allowed: {', '.join(FIELDS)}")
    for key in ("name", "description"):
        if not isinstance(raw.get(key), str) or not raw[key].strip():
            errors.add(key, "must be non-empty text")
    found = raw.get("prompt")
    prompt: dict[str, Any] = found if isinstance(found, dict) else {}
    steps = {"objective": {"goal": raw.get("objective")},
             "rubric": {"criteria": raw.get("rubric")},
             "prompt": {"template": prompt.get("template"), "system": prompt.get("system")}}
    for step, values in steps.items():
        CHECKS[step](values, errors)
    cases = raw.get("cases")
    if not isinstance(cases, list) or len(cases) < MIN_CASES:
        errors.add("cases", f"at least {MIN_CASES} sample cases are needed")
        cases = []
    cleaned = [_case(c) if isinstance(c, dict) else {} for c in cases]
    for i, case in enumerate(cleaned):
        for name, reasons in case_errors("cases", case).items():
            for reason in reasons:
                errors.add(f"cases[{i}].{name}", reason)
    if errors.errors:
        listed = "; ".join(f"{k}: {', '.join(v)}" for k, v in errors.errors.items())
        raise TemplateInvalid(f"{where}: {listed}", {"file": where, "fields": errors.errors})
    return Template(path.stem, raw["name"].strip(), raw["description"].strip(),
                    raw["objective"], raw["rubric"], prompt, cleaned)


def load_all(folder: Path = FOLDER) -> list[Template]:
    return [parse(path) for path in sorted(folder.glob("*.yaml"))]


def get(slug: str, folder: Path = FOLDER) -> Template:
    path = folder / f"{slug}.yaml"
    if not SLUG.match(slug) or not path.is_file():
        raise NotFound("No such experiment template")
    return parse(path)


def _dataset_name(session: Session, project: Project, base: str) -> str:
    name, n = base[:100], 1
    while session.scalar(select(Dataset.id).where(Dataset.project_id == project.id,
                                                  Dataset.name == name)) is not None:
        n += 1
        name = f"{base[:92]} #{n}"
    return name


def apply(session: Session, actor: User | None, project: Project, template: Template,
          into: Experiment | None = None) -> Experiment:
    """A dataset of the template's cases and a draft using it (steps 1-4 filled): `into`
    (a draft the user began) or a new one."""
    dataset = create_dataset(session, actor, project,
                             _dataset_name(session, project, f"{template.name} samples"),
                             "cases", template.cases,
                             description=f"Sample cases of the {template.name} template",
                             origin={"type": "template", "template": template.slug})
    version = latest_version(session, dataset.id)
    steps = {**template.steps, "data": {"dataset_version_id": version.id}}
    if into is not None:
        return service.refill(session, actor, project, into, template.name,
                              template.description, steps, template.slug)
    return service.create(session, actor, project, template.name, template.description,
                          steps, template=template.slug)
