"""Datasets of a project: every kind, immutable versions, cases, a diff between versions.
Viewers read; editors write. Each change to the cases makes a new version."""

from __future__ import annotations

from typing import Any

from sqlalchemy.exc import IntegrityError

from assay.api import preconditions
from assay.api.base import Blueprint, commit, page_dict, page_of, project_access, session, user
from assay.api.datasets.schemas import (
    CaseBulkSchema,
    CaseChangeSchema,
    CaseEditSchema,
    CaseListArgs,
    CasesAddedSchema,
    CaseSchema,
    CaseWriteSchema,
    DatasetCreateSchema,
    DatasetListArgs,
    DatasetSchema,
    DatasetUpdateSchema,
    DiffArgs,
    DiffSchema,
    PageQuery,
    TagChangeSchema,
    TagListSchema,
    TagRemoveSchema,
    TagRenameSchema,
    VersionSchema,
    load_cases,
)
from assay.core.datasets import service, tags
from assay.core.datasets.models import Case, Dataset, DatasetVersion
from assay.core.errors import Conflict
from assay.core.projects.models import Project, Role

blp = Blueprint("datasets", __name__, url_prefix="/api/projects/<int:project_id>/datasets",
                description="Datasets, versions and cases")
ONE = "/<int:dataset_id>"


def view(dataset: Dataset, version: DatasetVersion) -> dict[str, Any]:
    return {"id": dataset.id, "name": dataset.name, "description": dataset.description,
            "kind": dataset.kind, "split": dataset.split, "case_count": version.case_count,
            "version": version.number, "tags": list(dataset.tags or []),
            "origin": dataset.origin, "archived_at": dataset.archived_at,
            "created_at": dataset.created_at, "row_version": dataset.row_version}


def case_view(case: Case, position: int) -> dict[str, Any]:
    return {"id": case.id, "position": position, **service.case_dict(case),
            "created_at": case.created_at}


def version_view(version: DatasetVersion) -> dict[str, Any]:
    return {"id": version.id, "number": version.number, "note": version.note,
            "case_count": version.case_count,
            "created_at": version.created_at, "created_by": version.created_by}


def _commit_unique(error: Conflict) -> None:
    try:
        commit()
    except IntegrityError as exc:  # a concurrent request took the name or version first
        session().rollback()
        raise error from exc


def _concurrent() -> Conflict:
    return service.version_conflict()


def _dataset(project_id: int, dataset_id: int, role: Role) -> tuple[Project, Dataset]:
    project, _ = project_access(project_id, role)
    return project, service.get_dataset(session(), project, dataset_id)


@blp.get("")
@blp.arguments(DatasetListArgs, location="query")
@blp.response(200, page_of(DatasetSchema))
def list_datasets(args: dict[str, Any], project_id: int) -> Any:
    project, _ = project_access(project_id, Role.viewer)
    page = service.list_datasets(session(), project, args["page"], args["page_size"],
                                 args["q"], args["kind"], args["tag"], args["include_archived"],
                                 args["difficulty"])
    return page_dict(page, [{**view(d, DatasetVersion(number=number, case_count=count))}
                            for d, number, count in page.items])


@blp.post("")
@blp.arguments(DatasetCreateSchema)
@blp.response(201, DatasetSchema)
def create_dataset(data: dict[str, Any], project_id: int) -> Any:
    """Name unique per project (409 NAME_TAKEN); version 1 holds the initial cases."""
    project, _ = project_access(project_id, Role.editor)
    cases = load_cases(data["kind"], data["cases"])
    dataset = service.create_dataset(session(), user(), project, data["name"].strip(),
                                     data["kind"], cases, data["description"],
                                     data["split"], data["tags"])
    _commit_unique(service.name_taken())
    return view(dataset, service.latest_version(session(), dataset.id))


@blp.get("/tags")
@blp.response(200, TagListSchema)
def list_tags(project_id: int) -> Any:
    """Every tag on the project's datasets, with how many datasets carry it."""
    project, _ = project_access(project_id, Role.viewer)
    return {"items": [{"tag": tag, "count": count}
                      for tag, count in tags.project_tags(session(), project)]}


@blp.post("/tags/rename")
@blp.arguments(TagRenameSchema)
@blp.response(200, TagChangeSchema)
def rename_tag(data: dict[str, Any], project_id: int) -> Any:
    """Renames a tag on every dataset of the project (404 when no dataset has it)."""
    project, _ = project_access(project_id, Role.editor)
    changed = tags.rename_tag(session(), user(), project, data["from_"], data["to"])
    commit()
    return {"datasets": changed}


@blp.post("/tags/remove")
@blp.arguments(TagRemoveSchema)
@blp.response(200, TagChangeSchema)
def remove_tag(data: dict[str, Any], project_id: int) -> Any:
    """Takes a tag off every dataset of the project (404 when no dataset has it)."""
    project, _ = project_access(project_id, Role.editor)
    changed = tags.remove_tag(session(), user(), project, data["tag"])
    commit()
    return {"datasets": changed}


def _current(dataset: Dataset) -> dict[str, Any]:
    return view(dataset, service.latest_version(session(), dataset.id))


@blp.get(ONE)
@blp.response(200, DatasetSchema)
@preconditions.read()
def get_dataset(project_id: int, dataset_id: int) -> Any:
    _, dataset = _dataset(project_id, dataset_id, Role.viewer)
    return preconditions.tagged(_current(dataset), dataset)


@blp.patch(ONE)
@blp.arguments(DatasetUpdateSchema)
@blp.response(200, DatasetSchema)
@preconditions.write()
def update_dataset(data: dict[str, Any], project_id: int, dataset_id: int) -> Any:
    project, dataset = _dataset(project_id, dataset_id, Role.editor)
    preconditions.guard(dataset, lambda: _current(dataset))
    if "name" in data:
        data["name"] = data["name"].strip()
    service.update_dataset(session(), user(), project, dataset, data)
    _commit_unique(service.name_taken())
    return preconditions.tagged(_current(dataset), dataset)


@blp.delete(ONE)
@blp.response(204)
def delete_dataset(project_id: int, dataset_id: int) -> Any:
    """Only a dataset no run used (409 DATASET_IN_USE otherwise: archive it instead)."""
    project, dataset = _dataset(project_id, dataset_id, Role.editor)
    service.delete_dataset(session(), user(), project, dataset)
    commit()
    return None


@blp.post(ONE + "/archive")
@blp.response(200, DatasetSchema)
def archive_dataset(project_id: int, dataset_id: int) -> Any:
    """Hidden from lists unless asked for; runs keep their pinned versions."""
    project, dataset = _dataset(project_id, dataset_id, Role.editor)
    service.archive_dataset(session(), user(), project, dataset)
    commit()
    return view(dataset, service.latest_version(session(), dataset.id))


@blp.post(ONE + "/restore")
@blp.response(200, DatasetSchema)
def restore_dataset(project_id: int, dataset_id: int) -> Any:
    project, dataset = _dataset(project_id, dataset_id, Role.editor)
    service.restore_dataset(session(), user(), project, dataset)
    commit()
    return view(dataset, service.latest_version(session(), dataset.id))


@blp.get(ONE + "/cases")
@blp.arguments(CaseListArgs, location="query")
@blp.response(200, page_of(CaseSchema))
def list_cases(args: dict[str, Any], project_id: int, dataset_id: int) -> Any:
    _, dataset = _dataset(project_id, dataset_id, Role.viewer)
    version = service.get_version(session(), dataset, args["version"])
    page = service.list_cases(session(), version, args["page"], args["page_size"], args["q"],
                              args["tag"], args["difficulty"])
    return page_dict(page, [case_view(case, position) for case, position in page.items])


@blp.post(ONE + "/cases")
@blp.arguments(CaseWriteSchema)
@blp.response(201, CaseChangeSchema)
def add_case(data: dict[str, Any], project_id: int, dataset_id: int) -> Any:
    """Appends a case: a new version sharing every existing case."""
    project, dataset = _dataset(project_id, dataset_id, Role.editor)
    note = data.pop("note")
    service.check_cases(dataset.kind, [data], field="case")
    version, [case_id] = service.add_cases(session(), user(), project, dataset, [data], note,
                                           "dataset.case_added")
    _commit_unique(_concurrent())
    case, position = service.case_in_version(session(), version, case_id)
    return {"version": version_view(version), "case": case_view(case, position)}


@blp.post(ONE + "/cases/bulk")
@blp.arguments(CaseBulkSchema)
@blp.response(201, CasesAddedSchema)
def add_cases(data: dict[str, Any], project_id: int, dataset_id: int) -> Any:
    """Appends several cases in one new version; 422 naming each bad case (by its index)
    and field when any is invalid, and then nothing is written."""
    project, dataset = _dataset(project_id, dataset_id, Role.editor)
    cases = load_cases(dataset.kind, data["cases"])
    version, ids = service.add_cases(session(), user(), project, dataset, cases,
                                     data["note"])
    _commit_unique(_concurrent())
    rows = [service.case_in_version(session(), version, case_id) for case_id in ids]
    return {"version": version_view(version), "cases": [case_view(*row) for row in rows]}


def _unchanged_case(dataset: Dataset, case_id: int) -> None:
    """A case row never changes, so its id is its version (its ETag): editing one that an
    edit (or a delete) replaced is a stale write, 412 with the case now in its place."""
    now = service.current_case(session(), dataset, case_id)
    preconditions.expect(now[0].id if now else 0, lambda: case_view(*now) if now else None,
                         implied=case_id)


@blp.patch(ONE + "/cases/<int:case_id>")
@blp.arguments(CaseEditSchema)
@blp.response(200, CaseChangeSchema)
@preconditions.write()
def edit_case(data: dict[str, Any], project_id: int, dataset_id: int, case_id: int) -> Any:
    """A new version in which a new case row (new id, same position) replaces this one."""
    project, dataset = _dataset(project_id, dataset_id, Role.editor)
    _unchanged_case(dataset, case_id)
    note = data.pop("note", None)
    version, new_id = service.edit_case(session(), user(), project, dataset, case_id, data,
                                        note)
    _commit_unique(_concurrent())
    case, position = service.case_in_version(session(), version, new_id)
    return preconditions.tagged(
        {"version": version_view(version), "case": case_view(case, position)}, new_id)


@blp.delete(ONE + "/cases/<int:case_id>")
@blp.response(200, CaseChangeSchema)
@preconditions.write()
def delete_case(project_id: int, dataset_id: int, case_id: int) -> Any:
    """A new version without this case; older versions keep it."""
    project, dataset = _dataset(project_id, dataset_id, Role.editor)
    _unchanged_case(dataset, case_id)
    version = service.delete_case(session(), user(), project, dataset, case_id, None)
    _commit_unique(_concurrent())
    return {"version": version_view(version), "case": None}


@blp.get(ONE + "/versions")
@blp.arguments(PageQuery, location="query")
@blp.response(200, page_of(VersionSchema))
def list_versions(args: dict[str, Any], project_id: int, dataset_id: int) -> Any:
    _, dataset = _dataset(project_id, dataset_id, Role.viewer)
    page = service.list_versions(session(), dataset, args["page"], args["page_size"])
    return page_dict(page, [version_view(v) for v in page.items])


@blp.get(ONE + "/diff")
@blp.arguments(DiffArgs, location="query")
@blp.response(200, DiffSchema)
def diff_versions(args: dict[str, Any], project_id: int, dataset_id: int) -> Any:
    """Cases added, removed and changed from version `from` to version `to`."""
    _, dataset = _dataset(project_id, dataset_id, Role.viewer)
    found = service.diff(session(), dataset, args["from_"], args["to"])
    return {"added": [case_view(*row) for row in found["added"]],
            "removed": [case_view(*row) for row in found["removed"]],
            "changed": [{"before": case_view(*b), "after": case_view(*a)}
                        for b, a in found["changed"]]}
