"""The migrations build exactly the schema the models declare: a column added to a model
without a migration (or the reverse) fails here, on SQLite and PostgreSQL alike."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from flask import Flask

from assay.extensions import db


def test_the_migrated_database_matches_the_models(app: Flask) -> None:
    with db.engine.connect() as connection:
        context = MigrationContext.configure(connection, opts={"compare_type": False})
        diff = compare_metadata(context, db.metadata)
    assert diff == [], diff
