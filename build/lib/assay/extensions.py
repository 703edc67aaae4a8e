"""The database, created unbound; the app factory and the worker bind it to settings.

Flask-Migrate's instance lives with the app factory (app.py): workers and `assay eval`
import this module, and need no Alembic."""

from __future__ import annotations

from assay.db import Database

db = Database()
