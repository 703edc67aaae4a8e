"""Many rows in one statement.

On PostgreSQL the rows travel as one JSON document that `json_to_recordset` turns back into
a table the statement reads: one statement per batch instead of one per row, and its text does
not depend on the number of rows, so SQLAlchemy compiles it once and psycopg prepares it
once (an executemany runs, parses and plans every row's statement on the server; a batch of
100 finished cells wrote ~500 of them). Elsewhere (SQLite, in-process, where a statement
costs little) the same rows go as one executemany.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
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


def _array(values: list[Any], type_: TypeEngine[Any]) -> ColumnElement[Any]:
    array = postgresql.ARRAY(type_)
    return cast(bindparam(None, values, type_=array), array)


def rows_table(columns: Mapping[str, TypeEngine[Any]],
               rows: Sequence[Mapping[str, Any]]) -> TableValuedAlias:
    """`rows` as a FROM clause (PostgreSQL): json_to_recordset(:rows) AS anon(c type, ...).
    The rows go as one JSON document (orjson, in C) that the server parses: arrays of text
    cost psycopg an escaping pass in Python per element, more than the statements saved.
    Every row has every column of `columns`; a None is NULL (JSON columns included)."""
    document = bindparam(None, jsonio.dumps([{c: row[c] for c in columns} for row in rows]),
                         type_=Text())
    return func.json_to_recordset(cast(document, JSON)).table_valued(
        *(column(name, type_) for name, type_ in columns.items())).render_derived(
        with_types=True)


def any_of(column: ColumnElement[Any] | QueryableAttribute[Any], values: Sequence[Any],
           connection: Connection) -> ColumnElement[bool]:
    """`column IN values`, as `column = ANY(:array)` on PostgreSQL: one parameter, so the
    statement's text (and psycopg's parsing of it) is the same however many values."""
    if not on_postgres(connection):
        return column.in_(values)
    return column == any_(_array(list(values), column.type))


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
    stmt: Any
    if postgres:
        source = rows_table({c: table.c[c].type for c in columns}, rows)
        stmt = postgresql.insert(table).from_select(
            columns, select(*(source.c[c] for c in columns)).order_by(
                *(source.c[k] for k in keys)))
    elif keys:
        stmt = sqlite.insert(table)
    else:
        stmt = insert(table)
    if keys and skip_existing:
        stmt = stmt.on_conflict_do_nothing(index_elements=list(keys))
    elif keys:
        stmt = stmt.on_conflict_do_update(
            index_elements=list(keys), set_={c: table.c[c] + stmt.excluded[c] for c in add})
    if postgres:
        connection.execute(stmt)
    else:
        connection.execute(stmt, list(rows))


def update_by_id(connection: Connection, table: Table, rows: Sequence[Mapping[str, Any]],
                 key: str = "id") -> None:
    """Set each row's columns (dicts with the same keys) on the table row whose `key` it
    names. The caller holds the rows' locks already (or none are needed): the statement
    takes them in no set order."""
    if not rows:
        return
    columns = [c for c in rows[0] if c != key]
    if on_postgres(connection):
        source = rows_table({c: table.c[c].type for c in rows[0]}, rows)
        connection.execute(update(table).where(table.c[key] == source.c[key])
                           .values({c: source.c[c] for c in columns}))
        return
    connection.execute(update(table).where(table.c[key] == bindparam(f"_{key}"))
                       .values({c: bindparam(f"_{c}") for c in columns}),
                       [{f"_{c}": v for c, v in row.items()} for row in rows])
