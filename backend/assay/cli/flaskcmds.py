"""Flask's commands under `assay` (`db`, `openapi`, `routes`, `shell`, a plugin's): found
through a FlaskGroup that builds the app, imported only when such a command is asked for."""

from __future__ import annotations

import click
from flask.cli import FlaskGroup, ScriptInfo


def create_app():  # type: ignore[no-untyped-def]
    """The Flask app, for Flask's commands (and tests that read the whole command tree)."""
    from assay.app import create_app as create

    return create()


_FLASK = FlaskGroup(create_app=create_app, add_default_commands=True, add_version_option=False,
                    load_dotenv=False, set_debug_flag=False)


def flask_command(ctx: click.Context, name: str) -> click.Command | None:
    """The named command of Flask, its extensions or a plugin; the context carries the
    ScriptInfo their app-context wrappers look for."""
    root = ctx.find_root()
    if not isinstance(root.obj, ScriptInfo):
        root.obj = ScriptInfo(create_app=create_app, set_debug_flag=False,
                              load_dotenv_defaults=False)
    ctx.obj = root.obj
    return _FLASK.get_command(ctx, name)
