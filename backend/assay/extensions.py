"""Extensions created unbound; the app factory and the worker bind them to settings."""

from __future__ import annotations

from flask_migrate import Migrate
from flask_smorest import Api

from assay.db import Database

db = Database()
migrate = Migrate()
api = Api()
