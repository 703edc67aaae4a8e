"""Tags on datasets themselves: the project's tags with their counts, and renaming or
removing a tag on every dataset of the project at once (the tag manager)."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from assay.core import audit
from assay.core.auth.models import User
from assay.core.datasets.models import Dataset
from assay.core.datasets.service import clean_tags, has_tag
from assay.core.errors import NotFound
from assay.core.projects.models import Project


def project_tags(session: Session, project: Project) -> list[tuple[str, int]]:
    """Every tag on the project's datasets (archived ones included), with how many carry it,
    most used first."""
    counts: dict[str, int] = {}
    for tags in session.scalars(select(Dataset.tags).where(Dataset.project_id == project.id)):
        for tag in tags or []:
            counts[tag] = counts.get(tag, 0) + 1
    return sorted(counts.items(), key=lambda item: (-item[1], item[0].lower()))


def _tagged(session: Session, project: Project, tag: str) -> list[Dataset]:
    found = session.scalars(select(Dataset).where(Dataset.project_id == project.id,
                                                  has_tag(tag, Dataset.tags)))
    return [d for d in found if tag in (d.tags or [])]  # the text match is only a prefilter


def rename_tag(session: Session, actor: User, project: Project, old: str, new: str) -> int:
    """`old` becomes `new` on every dataset of the project (merging when one has both);
    how many datasets changed. 404 when no dataset has `old`."""
    new = new.strip()
    datasets = _tagged(session, project, old)
    if not datasets:
        raise NotFound(f"No dataset is tagged {old!r}", {"json": {"tag": ["No such tag"]}})
    for dataset in datasets:
        dataset.tags = clean_tags([new if t == old else t for t in dataset.tags])
    audit.record(session, actor, "dataset.tag_renamed", "project", project.id, project.id,
                 {"from": old, "to": new, "datasets": [d.id for d in datasets]})
    return len(datasets)


def remove_tag(session: Session, actor: User, project: Project, tag: str) -> int:
    """`tag` off every dataset of the project; how many datasets changed (404 when none)."""
    datasets = _tagged(session, project, tag)
    if not datasets:
        raise NotFound(f"No dataset is tagged {tag!r}", {"json": {"tag": ["No such tag"]}})
    for dataset in datasets:
        dataset.tags = [t for t in dataset.tags if t != tag]
    audit.record(session, actor, "dataset.tag_removed", "project", project.id, project.id,
                 {"tag": tag, "datasets": [d.id for d in datasets]})
    return len(datasets)
