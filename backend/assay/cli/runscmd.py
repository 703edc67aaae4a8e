"""`assay runs list|show|rm`, `assay compare`, `assay push`: commands over run files."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click
from rich.table import Table

from assay.cli.common import RUNS_DIR, out
from assay.core.evalcli import runfiles
from assay.core.evalcli.runfiles import RunFileError


def _resolve(runs_dir: Path, ref: str) -> Path:
    try:
        return runfiles.resolve(runs_dir, ref)
    except RunFileError as exc:
        raise click.UsageError(exc.message) from exc


def _read(folder: Path) -> runfiles.RunData:
    try:
        return runfiles.read_run(folder)
    except RunFileError as exc:
        raise click.UsageError(exc.message) from exc


@click.group("runs")
def runs() -> None:
    """List, show and remove local runs (run files under --runs-dir)."""


@runs.command("list")
@RUNS_DIR
@click.option("--rebuild", is_flag=True, help="Rebuild index.json from the run folders.")
@click.option("--json", "as_json", is_flag=True)
def list_runs(runs_dir: Path, rebuild: bool, as_json: bool) -> None:
    """The runs in index.json, oldest first."""
    index = runfiles.rebuild_index(runs_dir) if rebuild else runfiles.read_index(runs_dir)
    if as_json:
        click.echo(json.dumps(index["runs"], indent=2))
        return
    table = Table()
    for column in ("id", "status", "models", "outputs", "score", "cost"):
        table.add_column(column)
    for run in index["runs"]:
        score = run["average_score"]
        table.add_row(run["id"], run["status"], ", ".join(run["models"]), str(run["outputs"]),
                      "-" if score is None else f"{score:.3f}",
                      f"${run['cost_micros'] / 1e6:,.4f}")
    out().print(table)


@runs.command("show")
@RUNS_DIR
@click.argument("run", default="latest")
def show(runs_dir: Path, run: str) -> None:
    """A run's results table (RUN: an id, a folder, or latest)."""
    from assay.cli.tables import print_failures, results_table

    data = _read(_resolve(runs_dir, run))
    console = out()
    console.print(results_table(data))
    print_failures(console, data)
    totals = data.metadata["totals"]
    console.print(f"{totals['outputs']} outputs, {totals['failed']} failed, {totals['cached']} "
                  f"cached; cost ${totals['cost_micros'] / 1e6:,.4f} + judges "
                  f"${totals['judge_cost_micros'] / 1e6:,.4f}; {data.path}", highlight=False)


@runs.command("rm")
@RUNS_DIR
@click.argument("run_refs", nargs=-1, required=True)
def rm(runs_dir: Path, run_refs: tuple[str, ...]) -> None:
    """Delete runs (their folders and index entries): all of them, or, when one cannot be
    found, none (exit 2)."""
    folders = [_resolve(runs_dir, ref) for ref in run_refs]  # every one found first
    for folder in dict.fromkeys(folders):
        click.echo(f"removed {runfiles.remove_run(runs_dir, str(folder))}")


@click.command("compare")
@RUNS_DIR
@click.argument("run_a")
@click.argument("run_b")
@click.option("--json", "as_json", is_flag=True)
def compare(runs_dir: Path, run_a: str, run_b: str, as_json: bool) -> None:
    """B against A (the baseline): paired verdicts and the per-case diff. Exit 1 when a
    scorer regressed significantly on some model."""
    from assay.core.evalcli.compare import UnrelatedRuns, as_dict
    from assay.core.evalcli.compare import compare as compare_runs

    a, b = _read(_resolve(runs_dir, run_a)), _read(_resolve(runs_dir, run_b))
    try:
        result = compare_runs(a, b)
    except UnrelatedRuns as exc:
        raise click.UsageError(exc.message) from exc
    if as_json:
        click.echo(json.dumps(as_dict(result), indent=2))
    else:
        console = out()
        table = Table(title=f"{b.id} (B) against {a.id} (A)")
        for column in ("model", "scorer", "n", "A", "B", "B - A [95% CI]", "p", "verdict"):
            table.add_column(column)
        for v in result.verdicts:
            diff = "-" if v.difference is None else f"{v.difference:+.3f}" + (
                "" if v.low is None else f" [{v.low:+.2f}, {v.high:+.2f}]")
            colour = "red" if v.regressed else "green" if v.verdict == "B better" else ""
            table.add_row(v.model, v.scorer, str(v.n), _f(v.mean_a), _f(v.mean_b), diff,
                          "-" if v.p_value is None else f"{v.p_value:.3g}",
                          f"[{colour}]{v.verdict}[/]" if colour else v.verdict)
        console.print(table)
        if result.changed:
            console.print(f"{len(result.changed)} case id(s) name other cases in B (other "
                          f"variables or expected answer), compared as new cases: "
                          f"{', '.join(result.changed[:10])}", highlight=False)
        for label, rows in (("fixed", result.fixed), ("regressed", result.regressed),
                            ("new fail", result.new_fail)):
            console.print(f"{label}: {len(rows)}")
            for model, case, prompt in rows[:20]:
                console.print(f"  {model} / {prompt} / case {case}")
    sys.exit(1 if result.significant_regression else 0)


def _f(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


@click.command("push")
@RUNS_DIR
@click.argument("run", default="latest")
@click.option("--server", required=True, envvar="ASSAY_SERVER", help="The Assay server's URL.")
@click.option("--project", type=int, required=True, envvar="ASSAY_PROJECT",
              help="The project id to push into.")
def push(runs_dir: Path, run: str, server: str, project: int) -> None:
    """Upload a local run to an Assay server (token in ASSAY_TOKEN) so it lands in the
    team's reports."""
    from assay.cli.remote import push_run

    data = _read(_resolve(runs_dir, run))
    for url in push_run(data, server, project):
        click.echo(url)

