"""Datasets: create with a first version, list with their latest version."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from assay.core import audit
from assay.core.auth.models import User
from assay.core.datasets.models import Case, Dataset, DatasetVersion, VersionCase
from assay.core.errors import NotFound
from assay.core.pagination import Page, paginate
from assay.core.projects.models import Project


def create_dataset(session: Session, actor: User | None, project: Project, name: str,
                   kind: str, cases: list[dict[str, Any]]) -> Dataset:
    dataset = Dataset(project_id=project.id, name=name, kind=kind)
    session.add(dataset)
    session.flush()
    version = DatasetVersion(dataset_id=dataset.id, number=1, case_count=len(cases))
    session.add(version)
    session.flush()
    for position, raw in enumerate(cases):
        case = Case(dataset_id=dataset.id, input=raw["input"], expected=raw.get("expected"),
                    tags=list(raw.get("tags", [])))
        session.add(case)
        session.flush()
        session.add(VersionCase(version_id=version.id, case_id=case.id, position=position))
    audit.record(session, actor, "dataset.created", "dataset", dataset.id, project.id,
                 {"name": name, "cases": len(cases)})
    return dataset


def latest_version(session: Session, dataset_id: int) -> DatasetVersion:
    version = session.scalar(select(DatasetVersion).where(DatasetVersion.dataset_id == dataset_id)
                             .order_by(DatasetVersion.number.desc()).limit(1))
    if version is None:
        raise NotFound("Dataset has no version")
    return version


def get_dataset(session: Session, project: Project, dataset_id: int) -> Dataset:
    dataset = session.get(Dataset, dataset_id)
    if dataset is None or dataset.project_id != project.id:
        raise NotFound("Dataset not found", {"json": {"dataset_id": ["Dataset not found"]}})
    return dataset


def list_datasets(session: Session, project: Project, page: int, page_size: int) -> Page[Any]:
    """Rows of (dataset, latest version number, its case count)."""
    latest = (select(DatasetVersion.dataset_id, func.max(DatasetVersion.number).label("number"))
              .group_by(DatasetVersion.dataset_id).subquery())
    stmt = (select(Dataset, DatasetVersion.number, DatasetVersion.case_count)
            .join(latest, latest.c.dataset_id == Dataset.id)
            .join(DatasetVersion, (DatasetVersion.dataset_id == Dataset.id)
                  & (DatasetVersion.number == latest.c.number))
            .where(Dataset.project_id == project.id).order_by(Dataset.id.desc()))
    return paginate(session, stmt, page, page_size, scalars=False)


def version_cases(session: Session, version_id: int) -> list[Case]:
    stmt = (select(Case).join(VersionCase, VersionCase.case_id == Case.id)
            .where(VersionCase.version_id == version_id).order_by(VersionCase.position))
    return list(session.scalars(stmt))


DEMO_DATASET = "Demo questions"


def ensure_demo_dataset(session: Session, actor: User | None, project: Project,
                        cases: list[dict[str, Any]]) -> Dataset:
    found = session.scalar(select(Dataset).where(Dataset.project_id == project.id,
                                                 Dataset.name == DEMO_DATASET))
    return found or create_dataset(session, actor, project, DEMO_DATASET, "questions", cases)
