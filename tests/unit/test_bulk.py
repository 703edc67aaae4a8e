"""Many rows in one statement (`assay.core.bulk`), on the test database (SQLite, or
PostgreSQL with ASSAY_TEST_DATABASE_URL): what lands is exactly what an executemany of the
same rows would write, awkward values included."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import JSON, Column, Integer, MetaData, String, Table, Text, select

from assay.core import bulk
from assay.core.base import UTCDateTime, utcnow
from assay.extensions import db

META = MetaData()
ROWS = Table("bulk_probe", META, Column("id", Integer, primary_key=True),
             Column("key", String(32), unique=True), Column("n", Integer),
             Column("note", Text), Column("data", JSON),
             Column("raw", JSON(none_as_null=True)), Column("at", UTCDateTime()))
AWKWARD = ['{"a": 1}', "NULL", 'quote " and \\ backslash', "comma, {brace}", "", "é ✓"]


@pytest.fixture
def table(app: Flask) -> Iterator[Table]:
    with app.app_context():
        META.drop_all(db.engine)
        META.create_all(db.engine)
        yield ROWS
        META.drop_all(db.engine)


def _read() -> dict[str, tuple[Any, ...]]:
    with db.engine.connect() as conn:
        rows = conn.execute(select(ROWS.c.key, ROWS.c.n, ROWS.c.note, ROWS.c.data,
                                   ROWS.c.raw, ROWS.c.raw.is_(None)))
        return {row[0]: tuple(row[1:]) for row in rows}


def test_rows_land_as_given(table: Table) -> None:
    now = utcnow()
    rows = [{"key": f"k{i}", "n": i, "note": note, "data": data, "raw": raw, "at": now}
            for i, (note, data, raw) in enumerate([
                (AWKWARD[0], {"x": [1, 2]}, {"y": None}), (AWKWARD[1], [], None),
                (AWKWARD[2], [{"a": "b"}, []], [1]), (AWKWARD[3], None, {"z": "NULL"}),
                (AWKWARD[4], "text", None), (AWKWARD[5], 3.5, {})])]
    with db.engine.begin() as conn:
        bulk.insert_rows(conn, table, rows)
    found = _read()
    for row in rows:
        n, note, data, raw, raw_is_null = found[row["key"]]
        assert (n, note, data, raw) == (row["n"], row["note"], row["data"], row["raw"])
        assert raw_is_null == (row["raw"] is None)  # none_as_null: SQL NULL, not 'null'


def test_upserts_add_or_skip_and_updates_by_id(table: Table) -> None:
    now = utcnow()
    with db.engine.begin() as conn:
        bulk.insert_rows(conn, table, [
            {"key": "a", "n": 1, "note": "", "data": {}, "raw": None, "at": now},
            {"key": "b", "n": 2, "note": "", "data": {}, "raw": None, "at": now}])
        bulk.insert_rows(conn, table, [
            {"key": "a", "n": 10}, {"key": "c", "n": 5}], keys=["key"], add=["n"])
        bulk.insert_rows(conn, table, [
            {"key": "b", "n": 100, "note": "kept?"}], keys=["key"], skip_existing=True)
        ids = dict(conn.execute(select(ROWS.c.key, ROWS.c.id)).all())
        bulk.update_by_id(conn, table, [{"id": ids["a"], "note": AWKWARD[2]},
                                        {"id": ids["c"], "note": None}])
        assert sorted(conn.execute(select(ROWS.c.key).where(
            bulk.any_of(ROWS.c.id, [ids["a"], ids["c"]], conn))).scalars()) == ["a", "c"]
        assert conn.execute(select(ROWS.c.key).where(
            bulk.any_of(ROWS.c.id, [], conn))).all() == []
    found = _read()
    assert found["a"][:2] == (11, AWKWARD[2])
    assert found["b"][:2] == (2, "")
    assert found["c"][:2] == (5, None)


def test_execute_many_stores_what_sqlalchemy_would(table: Table) -> None:
    """The SQLite fast path (rows to the driver as tuples, each value through its type's
    processor) leaves the same stored values, byte for byte, as SQLAlchemy's executemany."""
    from sqlalchemy import insert

    now = utcnow()

    def rows(prefix: str) -> list[dict[str, Any]]:
        return [{"key": f"{prefix}{i}", "n": i, "note": note, "data": data, "raw": raw,
                 "at": now} for i, (note, data, raw) in enumerate([
                     (AWKWARD[0], {"x": [1, 2]}, None), (AWKWARD[5], None, {"é": "✓"})])]

    with db.engine.begin() as conn:
        bulk.execute_many(conn, ("probe", "fast"), lambda: insert(ROWS), rows("fast"))
        conn.execute(insert(ROWS), rows("slow"))
    with db.engine.connect() as conn:
        stored = {key: rest for key, *rest in conn.exec_driver_sql(
            "SELECT key, n, note, data, raw, at FROM bulk_probe").all()}
    for i in range(2):
        assert stored[f"fast{i}"] == stored[f"slow{i}"]


def test_execute_many_with_a_literal_goes_the_ordinary_way(table: Table) -> None:
    """A parameter that is not in the rows (here a literal value) cannot be taken from them:
    the statement runs as an ordinary executemany, and lands the same."""
    from sqlalchemy import insert

    shape = ("probe", "literal")
    with db.engine.begin() as conn:
        bulk.execute_many(conn, shape, lambda: insert(ROWS).values(note="fixed"),
                          [{"key": "a", "n": 1}, {"key": "b", "n": 2}])
    assert {key: (n, note) for key, (n, note, *_) in _read().items()} == {
        "a": (1, "fixed"), "b": (2, "fixed")}
    if db.engine.dialect.name == "sqlite":
        assert bulk._PLANS[shape] is None
