"""Many rows in one statement.

On PostgreSQL the rows travel as one JSON document that `json_to_recordset` turns back into
a table the statement reads: one statement per batch instead of one per row, and its text does
not depend on the number of rows, so SQLAlchemy compiles it once and psycopg prepares it
once (an executemany runs, parses and plans every row's statement on the server; a batch of
100 finished cells wrote ~500 of them). Elsewhere (SQLite, in-process, where a statement
costs little) the same rows go as one executemany, compiled once per statement shape and
handed to the driver as tuples (`execute_many`).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import Any

from sqlalchemy import (
    JSON,
    Table,
    Text,
    any_,
    bindparam,
    cast,
    column,
    func,
    insert,
    select,
    update,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection
from sqlalchemy.orm import QueryableAttribute
from sqlalchemy.sql.elements import ColumnElement
from sqlalchemy.sql.selectable import TableValuedAlias
from sqlalchemy.types import TypeEngine

from assay import jsonio


def on_postgres(connection: Connection) -> bool:
    return connection.dialect.name == "postgresql"


def _array(type_: TypeEngine[Any], values: list[Any] | None = None,
           name: str | None = None) -> ColumnElement[Any]:
    """An array parameter: `values`, or parameter `name`'s when the statement runs."""
    array = postgresql.ARRAY(type_)
    return cast(bindparam(name, values, type_=array), array)


ROWS = "rows"  # the parameter a `rows_table` statement takes its rows in


def rows_table(columns: Mapping[str, TypeEngine[Any]]) -> TableValuedAlias:
    """The rows of parameter ROWS as a FROM clause (PostgreSQL):
    json_to_recordset(:rows) AS anon(c type, ...). The rows go as one JSON document
    (`document`, orjson, in C) that the server parses: arrays of text cost psycopg an
    escaping pass in Python per element, more than the statements saved. Every row has every
    column of `columns`; a None is NULL (JSON columns included)."""
    return func.json_to_recordset(cast(bindparam(ROWS, type_=Text()), JSON)).table_valued(
        *(column(name, type_) for name, type_ in columns.items())).render_derived(
        with_types=True)


def document(columns: Iterable[str], rows: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """The ROWS parameter of a `rows_table` statement."""
    names = list(columns)
    return {ROWS: jsonio.dumps([{c: row[c] for c in names} for row in rows])}


# statement shape -> the statement: built once (building one took longer than its batch of
# rows took to encode), its text then compiled once by SQLAlchemy's cache
_BUILT: dict[Hashable, Any] = {}


def built(shape: Hashable, build: Callable[[], Any]) -> Any:
    """The statement `build` makes for `shape` (a key naming everything it depends on)."""
    stmt = _BUILT.get(shape)
    if stmt is None:
        stmt = _BUILT[shape] = build()
    return stmt


def any_param(column: ColumnElement[Any], name: str) -> ColumnElement[bool]:
    """`column = ANY(:name)` (PostgreSQL), the array given when the statement runs."""
    return column == any_(_array(column.type, name=name))


def any_of(column: ColumnElement[Any] | QueryableAttribute[Any], values: Sequence[Any],
           connection: Connection) -> ColumnElement[bool]:
    """`column IN values`, as `column = ANY(:array)` on PostgreSQL: one parameter, so the
    statement's text (and psycopg's parsing of it) is the same however many values."""
    if not on_postgres(connection):
        return column.in_(values)
    return column == any_(_array(column.type, list(values)))


def insert_rows(connection: Connection, table: Table, rows: Sequence[Mapping[str, Any]], *,
                keys: Sequence[str] = (), add: Sequence[str] = (),
                skip_existing: bool = False) -> None:
    """Insert `rows` (dicts with the same columns). With `keys` (a unique index): a row whose
    keys exist already is skipped (`skip_existing`) or has its `add` columns added to the
    existing row's. On PostgreSQL no two rows may share their keys (one statement cannot
    update a row twice); the rows are inserted in key order, as an executemany of sorted rows
    would, so two writers of the same keys lock them in one order and cannot deadlock."""
    if not rows:
        return
    columns = list(rows[0])
    postgres = on_postgres(connection)
    if not postgres:
        shape = ("insert", table.name, tuple(columns), tuple(keys), tuple(add), skip_existing)
        execute_many(connection, shape, lambda: _upsert(table, keys, add, skip_existing),
                     rows)
        return
    def build() -> Any:
        source = rows_table({c: table.c[c].type for c in columns})
        return _on_conflict(postgresql.insert(table).from_select(
            columns, select(*(source.c[c] for c in columns)).order_by(
                *(source.c[k] for k in keys))), keys, add, skip_existing)
    shape = ("insert", table.name, tuple(columns), tuple(keys), tuple(add), skip_existing)
    connection.execute(built(shape, build), document(columns, rows))


def _upsert(table: Table, keys: Sequence[str], add: Sequence[str],
            skip_existing: bool) -> Any:
    return _on_conflict(sqlite.insert(table) if keys else insert(table), keys, add,
                        skip_existing)


def _on_conflict(stmt: Any, keys: Sequence[str], add: Sequence[str],
                 skip_existing: bool) -> Any:
    table = stmt.table
    if keys and skip_existing:
        return stmt.on_conflict_do_nothing(index_elements=list(keys))
    if keys:
        return stmt.on_conflict_do_update(
            index_elements=list(keys), set_={c: table.c[c] + stmt.excluded[c] for c in add})
    return stmt


# SQLite: a statement shape -> its text and, per `?` in order, the row key and the value's
# processing (its type's bind processor for this dialect; None when there is none)
_PLANS: dict[Hashable, tuple[str, list[tuple[str, Callable[[Any], Any] | None]]] | None] = {}


def execute_many(connection: Connection, shape: Hashable, build: Callable[[], Any],
                 rows: Sequence[Mapping[str, Any]]) -> None:
    """`connection.execute(build(), rows)`, as an executemany. On SQLite the statement is
    compiled once per `shape` (a key naming everything its text depends on), and the rows go
    to the driver as tuples: SQLAlchemy's own handling of each row (a parameter dict, then
    each value through its type) cost more than SQLite's writing them (measured: a third of
    a finished batch's write). A statement whose parameters do not all come from the rows (a
    column default, a literal) goes the ordinary way."""
    if not rows:
        return
    if on_postgres(connection):
        connection.execute(build(), list(rows))
        return
    if shape not in _PLANS:
        _PLANS[shape] = _plan(connection, build(), list(rows[0]))
    plan = _PLANS[shape]
    if plan is None:
        connection.execute(build(), list(rows))
        return
    text, fields = plan
    connection.exec_driver_sql(text, [
        tuple(row[name] if process is None else process(row[name]) for name, process in fields)
        for row in rows])


def _plan(connection: Connection, stmt: Any,
          keys: list[str]) -> tuple[str, list[tuple[str, Callable[[Any], Any] | None]]] | None:
    dialect = connection.dialect
    compiled = stmt.compile(dialect=dialect, column_keys=keys)
    names = list(compiled.positiontup or ())
    if not set(names) <= set(keys) or compiled.returning:
        return None
    return compiled.string, [
        (name, compiled.binds[name].type.dialect_impl(dialect).bind_processor(dialect))
        for name in names]


def update_by_id(connection: Connection, table: Table, rows: Sequence[Mapping[str, Any]],
                 key: str = "id") -> None:
    """Set each row's columns (dicts with the same keys) on the table row whose `key` it
    names. The caller holds the rows' locks already (or none are needed): the statement
    takes them in no set order."""
    if not rows:
        return
    columns = [c for c in rows[0] if c != key]
    if on_postgres(connection):
        def build() -> Any:
            source = rows_table({c: table.c[c].type for c in rows[0]})
            return (update(table).where(table.c[key] == source.c[key])
                    .values({c: source.c[c] for c in columns}))
        connection.execute(built(("update", table.name, key, tuple(rows[0])), build),
                           document(rows[0], rows))
        return
    connection.execute(update(table).where(table.c[key] == bindparam(f"_{key}"))
                       .values({c: bindparam(f"_{c}") for c in columns}),
                       [{f"_{c}": v for c, v in row.items()} for row in rows])
