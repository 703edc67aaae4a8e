"""Datasets and their immutable versions. A version is a list of case ids (version_cases);
a change makes a new version that shares every unchanged case (copy-on-write): adding
appends a row, deleting leaves one out, editing writes a new case row in the same
position. Positions are stable across versions, so a diff pairs cases by position."""

from __future__ import annotations

import json
import typing
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from sqlalchemy import (
    Select,
    String,
    Table,
    bindparam,
    cast,
    delete,
    exists,
    func,
    insert,
    literal,
    select,
)
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from assay.core import audit, bulk
from assay.core.auth.models import User
from assay.core.base import utcnow
from assay.core.datasets.cases import case_errors, normalize
from assay.core.datasets.models import Case, Dataset, DatasetVersion, VersionCase
from assay.core.errors import Conflict, Invalid, NotFound
from assay.core.pagination import Listing, Page, paginate
from assay.core.projects.models import Project


def name_taken() -> Conflict:
    return Conflict("A dataset with this name already exists in the project (archived ones "
                    "included)", {"json": {"name": ["Name already in use"]}}, code="NAME_TAKEN")


def _check_name(session: Session, project: Project, name: str,
                exclude: int | None = None) -> None:
    stmt = select(Dataset.id).where(Dataset.project_id == project.id, Dataset.name == name)
    if exclude is not None:
        stmt = stmt.where(Dataset.id != exclude)
    if session.scalar(stmt) is not None:
        raise name_taken()


def check_cases(kind: str, cases: Sequence[dict[str, Any]], field: str = "cases") -> None:
    """Every case valid for `kind`, or one 422 naming each bad case and field."""
    errors: dict[str, Any] = {}
    for index, case in enumerate(cases):
        found = case_errors(kind, case)
        if found:
            errors[str(index)] = found
    if errors:  # the first problem in the message: a dialog showing only it says what
        first, found = next(iter(errors.items()))
        name, reasons = next(iter(found.items()))
        raise Invalid(f"Some cases are not valid for this dataset kind: case {int(first) + 1}, "
                      f"{name}: {reasons[0]}", {"json": {field: errors}})


def insert_cases(session: Session, dataset_id: int, cases: Sequence[dict[str, Any]]) -> list[int]:
    """Bulk insert of normalized cases; their ids, in order."""
    if not cases:
        return []
    now = utcnow()
    rows = [{"dataset_id": dataset_id, "created_at": now, **normalize(case)} for case in cases]
    connection = session.connection()
    if bulk.on_postgres(connection):
        ids = session.scalars(insert(Case).returning(Case.id, sort_by_parameter_order=True), rows)
        return list(ids)
    # SQLite: one executemany without RETURNING (a third of the time for 1,000 cases), then
    # the ids. This transaction holds the database's only write lock since its first write,
    # and SQLite numbers new rows upwards: the dataset's newest ids are these rows', in order.
    session.flush()
    table = typing.cast(Table, Case.__table__)
    columns = [{("metadata" if key == "meta" else key): value for key, value in row.items()}
               for row in rows]  # the table's column names
    bulk.execute_many(connection, ("insert", table.name, *columns[0]), lambda: insert(table),
                      columns)
    newest = session.scalars(select(Case.id).where(Case.dataset_id == dataset_id)
                             .order_by(Case.id.desc()).limit(len(rows)))
    return list(newest)[::-1]


def _new_version(session: Session, actor: User | None, dataset: Dataset, note: str | None,
                 base: DatasetVersion | None, case_count: int) -> DatasetVersion:
    version = DatasetVersion(dataset_id=dataset.id, number=(base.number + 1) if base else 1,
                             case_count=case_count, note=note,
                             created_by=actor.id if actor else None)
    session.add(version)
    try:
        session.flush()
    except IntegrityError as error:  # a concurrent change took this number first
        session.rollback()
        raise version_conflict() from error
    return version


def version_conflict() -> Conflict:
    return Conflict("The dataset changed meanwhile; reload and try again",
                    code="VERSION_CONFLICT")


def _latest_locked(session: Session, dataset: Dataset) -> DatasetVersion:
    """The latest version, with the dataset row locked (PostgreSQL) so concurrent changes
    queue instead of racing for the next number."""
    session.execute(select(Dataset.id).where(Dataset.id == dataset.id).with_for_update())
    return latest_version(session, dataset.id)


def _copy_members(session: Session, source: DatasetVersion, target: DatasetVersion,
                  skip: int | None = None) -> None:
    """Share the source version's cases (all but `skip`) with the target, in place."""
    rows = select(literal(target.id), VersionCase.case_id, VersionCase.position).where(
        VersionCase.version_id == source.id)
    if skip is not None:
        rows = rows.where(VersionCase.case_id != skip)
    session.execute(insert(VersionCase).from_select(
        ["version_id", "case_id", "position"], rows))


def _append(session: Session, version: DatasetVersion, case_ids: list[int], start: int) -> None:
    if case_ids:
        bulk.insert_rows(session.connection(), typing.cast(Table, VersionCase.__table__), [
            {"version_id": version.id, "case_id": case_id, "position": start + offset}
            for offset, case_id in enumerate(case_ids)])


def create_dataset(session: Session, actor: User | None, project: Project, name: str,
                   kind: str, cases: list[dict[str, Any]], description: str | None = None,
                   split: str | None = None, tags: Sequence[str] = (),
                   origin: dict[str, Any] | None = None) -> Dataset:
    _check_name(session, project, name)
    dataset = Dataset(project_id=project.id, name=name, kind=kind, description=description,
                      split=split, tags=clean_tags(tags), origin=origin or {"type": "manual"})
    session.add(dataset)
    session.flush()
    version = _new_version(session, actor, dataset, None, None, len(cases))
    _append(session, version, insert_cases(session, dataset.id, cases), 0)
    audit.record(session, actor, "dataset.created", "dataset", dataset.id, project.id,
                 {"name": name, "kind": kind, "cases": len(cases)})
    return dataset


def latest_version(session: Session, dataset_id: int) -> DatasetVersion:
    version = session.scalar(select(DatasetVersion).where(DatasetVersion.dataset_id == dataset_id)
                             .order_by(DatasetVersion.number.desc()).limit(1))
    if version is None:
        raise NotFound("Dataset has no version")
    return version


def get_version(session: Session, dataset: Dataset, number: int | None) -> DatasetVersion:
    if number is None:
        return latest_version(session, dataset.id)
    version = session.scalar(select(DatasetVersion).where(
        DatasetVersion.dataset_id == dataset.id, DatasetVersion.number == number))
    if version is None:
        raise NotFound(f"Dataset has no version {number}",
                       {"query": {"version": ["No such version"]}})
    return version


def get_dataset(session: Session, project: Project, dataset_id: int) -> Dataset:
    dataset = session.get(Dataset, dataset_id)
    if dataset is None or dataset.project_id != project.id:
        raise NotFound("Dataset not found", {"json": {"dataset_id": ["Dataset not found"]}})
    return dataset


def has_tag(tag: str, column: Any = Case.tags) -> Any:
    """Rows whose JSON tag list holds `tag` (portable: matched in the JSON text)."""
    return cast(column, String).contains(json.dumps(tag), autoescape=True)


def clean_tags(tags: Sequence[str]) -> list[str]:
    """Trimmed, without blanks or repeats, in the order given."""
    return list(dict.fromkeys(t.strip() for t in tags if t.strip()))


def _latest_has_case(version_id: Any, condition: Any) -> Any:
    return exists(select(VersionCase.case_id).join(Case, Case.id == VersionCase.case_id)
                  .where(VersionCase.version_id == version_id, condition))


def list_datasets(session: Session, project: Project, page: int, page_size: int,
                  query: str | None = None, kind: str | None = None, tag: str | None = None,
                  include_archived: bool = False, difficulty: str | None = None) -> Page[Any]:
    """Rows of (dataset, latest version number, its case count). `tag`: the dataset's own
    tag or a tag of a case of its latest version; `difficulty`: a case of that difficulty
    in its latest version."""
    params = {"project_id": project.id}
    if not (query or tag or difficulty):
        return paginate(session, _datasets(kind, include_archived), page, page_size, False,
                        params=params)
    stmt = _datasets_of(kind, include_archived)
    if query:
        needle = query.lower()
        stmt = stmt.where(func.lower(Dataset.name).contains(needle, autoescape=True)
                          | func.lower(func.coalesce(Dataset.description, "")).contains(
                              needle, autoescape=True))
    if tag:
        stmt = stmt.where(has_tag(tag, Dataset.tags)
                          | _latest_has_case(DatasetVersion.id, has_tag(tag)))
    if difficulty:
        stmt = stmt.where(_latest_has_case(DatasetVersion.id, Case.difficulty == difficulty))
    return paginate(session, stmt, page, page_size, False, params=params)


@lru_cache(maxsize=32)  # a few shapes; a value outside them is refused or finds nothing
def _datasets(kind: str | None, include_archived: bool) -> Listing:
    return Listing.of(_datasets_of(kind, include_archived))


def _datasets_of(kind: str | None, include_archived: bool) -> Select[*tuple[Any, ...]]:
    """(dataset, latest version number, its case count) of the project named by the bind
    parameter `project_id`, newest first."""
    latest = (select(DatasetVersion.dataset_id, func.max(DatasetVersion.number).label("number"))
              .group_by(DatasetVersion.dataset_id).subquery())
    stmt = (select(Dataset, DatasetVersion.number, DatasetVersion.case_count)
            .join(latest, latest.c.dataset_id == Dataset.id)
            .join(DatasetVersion, (DatasetVersion.dataset_id == Dataset.id)
                  & (DatasetVersion.number == latest.c.number))
            .where(Dataset.project_id == bindparam("project_id")).order_by(Dataset.id.desc()))
    if kind:
        stmt = stmt.where(Dataset.kind == kind)
    if not include_archived:
        stmt = stmt.where(Dataset.archived_at.is_(None))
    return stmt


def version_cases(session: Session, version_id: int) -> list[Case]:
    stmt = (select(Case).join(VersionCase, VersionCase.case_id == Case.id)
            .where(VersionCase.version_id == version_id).order_by(VersionCase.position))
    return list(session.scalars(stmt))


def list_cases(session: Session, version: DatasetVersion, page: int, page_size: int,
               query: str | None = None, tag: str | None = None,
               difficulty: str | None = None) -> Page[Any]:
    """Rows of (case, position) of one version, in order."""
    stmt = (select(Case, VersionCase.position).join(VersionCase, VersionCase.case_id == Case.id)
            .where(VersionCase.version_id == version.id).order_by(VersionCase.position))
    if query:
        text = func.lower(cast(Case.input, String) + " " + func.coalesce(
            cast(Case.expected, String), "") + " " + func.coalesce(cast(Case.trace, String), ""))
        stmt = stmt.where(text.contains(json.dumps(query.lower())[1:-1], autoescape=True))
    if tag:
        stmt = stmt.where(has_tag(tag))
    if difficulty:
        stmt = stmt.where(Case.difficulty == difficulty)
    return paginate(session, stmt, page, page_size, scalars=False)


def update_dataset(session: Session, actor: User, project: Project, dataset: Dataset,
                   changes: dict[str, Any]) -> Dataset:
    if "tags" in changes:
        changes["tags"] = clean_tags(changes["tags"])
    changes = {key: value for key, value in changes.items() if getattr(dataset, key) != value}
    if not changes:
        return dataset
    if "name" in changes:
        _check_name(session, project, changes["name"], exclude=dataset.id)
    before = {key: getattr(dataset, key) for key in changes}
    for key, value in changes.items():
        setattr(dataset, key, list(value) if key == "tags" else value)
    audit.record(session, actor, "dataset.updated", "dataset", dataset.id, project.id,
                 {"before": before, "after": changes})
    return dataset


def archive_dataset(session: Session, actor: User, project: Project, dataset: Dataset) -> Dataset:
    if dataset.archived_at is None:
        dataset.archived_at = utcnow()
        audit.record(session, actor, "dataset.archived", "dataset", dataset.id, project.id,
                     {"name": dataset.name})
    return dataset


def restore_dataset(session: Session, actor: User, project: Project, dataset: Dataset) -> Dataset:
    if dataset.archived_at is not None:
        dataset.archived_at = None
        audit.record(session, actor, "dataset.restored", "dataset", dataset.id, project.id,
                     {"name": dataset.name})
    return dataset


def run_count(session: Session, dataset: Dataset) -> int:
    from assay.core.runs.models import Run

    return session.scalar(select(func.count()).select_from(Run).join(
        DatasetVersion, DatasetVersion.id == Run.dataset_version_id).where(
        DatasetVersion.dataset_id == dataset.id)) or 0


def delete_dataset(session: Session, actor: User, project: Project, dataset: Dataset) -> None:
    """Only a dataset no run used: runs pin its versions, and results never cascade away."""
    runs = run_count(session, dataset)
    if runs:
        raise Conflict(f"This dataset is used by {runs} run(s); archive it instead, so their "
                       "results keep it.", code="DATASET_IN_USE")
    audit.record(session, actor, "dataset.deleted", "dataset", dataset.id, project.id,
                 {"name": dataset.name})
    versions = select(DatasetVersion.id).where(DatasetVersion.dataset_id == dataset.id)
    session.execute(delete(VersionCase).where(VersionCase.version_id.in_(versions)))
    session.delete(dataset)


def _max_position(session: Session, version: DatasetVersion) -> int:
    found = session.scalar(select(func.max(VersionCase.position)).where(
        VersionCase.version_id == version.id))
    return -1 if found is None else found


def add_cases(session: Session, actor: User | None, project: Project, dataset: Dataset,
              cases: Sequence[dict[str, Any]], note: str | None = None,
              action: str = "dataset.cases_added") -> tuple[DatasetVersion, list[int]]:
    """A new version: the latest one plus `cases` (already checked) at its end."""
    base = _latest_locked(session, dataset)
    start = _max_position(session, base) + 1
    version = _new_version(session, actor, dataset, note, base, base.case_count + len(cases))
    _copy_members(session, base, version)
    ids = insert_cases(session, dataset.id, cases)
    _append(session, version, ids, start)
    audit.record(session, actor, action, "dataset", dataset.id, project.id,
                 {"version": version.number, "cases": len(cases)})
    return version, ids


def case_in_version(session: Session, version: DatasetVersion, case_id: int) -> tuple[Case, int]:
    row = session.execute(select(Case, VersionCase.position).join(
        VersionCase, VersionCase.case_id == Case.id).where(
        VersionCase.version_id == version.id, Case.id == case_id)).first()
    if row is None:
        raise NotFound("Case not found in the latest version")
    return row[0], row[1]


def current_case(session: Session, dataset: Dataset, case_id: int) -> tuple[Case, int] | None:
    """The case now at the position `case_id` has in `dataset` (itself, or the new row an
    edit made), or None once deleted: what a stale edit of `case_id` would have replaced.
    404 when `case_id` was never one of its cases."""
    case = session.get(Case, case_id)
    if case is None or case.dataset_id != dataset.id:
        raise NotFound("Case not found in the latest version")
    position = session.scalar(select(VersionCase.position)
                              .where(VersionCase.case_id == case_id).limit(1))
    latest = latest_version(session, dataset.id)
    row = session.execute(select(Case, VersionCase.position).join(
        VersionCase, VersionCase.case_id == Case.id).where(
        VersionCase.version_id == latest.id, VersionCase.position == position)).first()
    return (row[0], row[1]) if row else None


def case_dict(case: Case) -> dict[str, Any]:
    return {"input": case.input, "expected": case.expected, "trace": case.trace,
            "tags": list(case.tags or []), "difficulty": case.difficulty,
            "metadata": dict(case.meta or {})}


def edit_case(session: Session, actor: User, project: Project, dataset: Dataset, case_id: int,
              changes: dict[str, Any], note: str | None) -> tuple[DatasetVersion, int]:
    """A new version where a new case row takes the edited case's place; none when the
    values are the ones the case has (then the latest version and the same case)."""
    base = _latest_locked(session, dataset)
    old, position = case_in_version(session, base, case_id)
    merged = {**case_dict(old), **changes}
    check_cases(dataset.kind, [merged], field="case")
    if normalize(merged) == normalize(case_dict(old)):
        return base, old.id
    version = _new_version(session, actor, dataset, note, base, base.case_count)
    _copy_members(session, base, version, skip=old.id)
    [new_id] = insert_cases(session, dataset.id, [merged])
    _append(session, version, [new_id], position)
    audit.record(session, actor, "dataset.case_edited", "dataset", dataset.id, project.id,
                 {"version": version.number, "before": old.id, "after": new_id})
    return version, new_id


def delete_case(session: Session, actor: User, project: Project, dataset: Dataset,
                case_id: int, note: str | None) -> DatasetVersion:
    base = _latest_locked(session, dataset)
    old, _ = case_in_version(session, base, case_id)
    version = _new_version(session, actor, dataset, note, base, base.case_count - 1)
    _copy_members(session, base, version, skip=old.id)
    audit.record(session, actor, "dataset.case_deleted", "dataset", dataset.id, project.id,
                 {"version": version.number, "case": old.id})
    return version


def list_versions(session: Session, dataset: Dataset, page: int, page_size: int) -> Page[Any]:
    stmt = (select(DatasetVersion).where(DatasetVersion.dataset_id == dataset.id)
            .order_by(DatasetVersion.number.desc()))
    return paginate(session, stmt, page, page_size)


def diff(session: Session, dataset: Dataset, before: int | None,
         after: int | None) -> dict[str, list[Any]]:
    """Cases added, removed and changed (paired by their stable position) between versions;
    `after` defaults to the latest, `before` to the version before `after` (none before 1)."""
    target = get_version(session, dataset, after)
    number = target.number - 1 if before is None else before
    old = ({} if number < 1 else {position: case for case, position in _members(
        session, get_version(session, dataset, number))})
    new = {position: case for case, position in _members(session, target)}
    return {"added": [(new[p], p) for p in sorted(new.keys() - old.keys())],
            "removed": [(old[p], p) for p in sorted(old.keys() - new.keys())],
            "changed": [((old[p], p), (new[p], p)) for p in sorted(old.keys() & new.keys())
                        if old[p].id != new[p].id]}


def _members(session: Session, version: DatasetVersion) -> list[tuple[Case, int]]:
    rows = session.execute(select(Case, VersionCase.position).join(
        VersionCase, VersionCase.case_id == Case.id).where(VersionCase.version_id == version.id))
    return [(row[0], row[1]) for row in rows]


DEMO_DATASET = "Demo questions"


def ensure_demo_dataset(session: Session, actor: User | None, project: Project,
                        cases: list[dict[str, Any]]) -> Dataset:
    found = session.scalar(select(Dataset).where(Dataset.project_id == project.id,
                                                 Dataset.name == DEMO_DATASET))
    return found or create_dataset(session, actor, project, DEMO_DATASET, "questions", cases)
