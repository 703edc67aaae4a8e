"""`assay init`, `assay eval`, `assay runs`, `assay compare`, `assay push`: thin commands
over assay.core.evalcli (exit codes in outcome.py; README "assay eval")."""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from assay.core.evalcli import outcome, runfiles
from assay.core.evalcli.formats import FORMATS

RUNS_DIR = click.option("--runs-dir", type=click.Path(file_okay=False, path_type=Path),
                        default=lambda: os.environ.get("ASSAY_RUNS_DIR", "runs"),
                        show_default="ASSAY_RUNS_DIR or ./runs", help="Where run files go.")


def _err() -> Console:
    return Console(stderr=True, soft_wrap=True, emoji=False)


def _money(micros: int | None) -> str:
    return "-" if micros is None else f"${micros / 1e6:,.4f}"


def _interval(score: dict[str, Any] | None) -> str:
    if score is None:
        return "-"
    if score["low"] is None:
        return f"{score['mean']:.3f}"
    return f"{score['mean']:.3f} [{score['low']:.2f}, {score['high']:.2f}]"


def results_table(run: runfiles.RunData) -> Table:
    """Per model: the composite with its interval, pass rate, calls, cost, latency, and,
    when a judge gave them, the judges' mean confidence (schema version 1 runs have none)."""
    summary = run.metadata["summary"]
    judged = any(row.get("confidence") for row in summary)
    table = Table(title=f"{run.id}: {run.metadata['status']}",
                  caption="conf.: the judges' mean confidence in their scores (0-1)"
                  if judged else None)
    for column in ("model", "score [95% CI]", "pass rate", *(("conf.",) if judged else ()),
                   "ok/failed", "cost", "p50 ms", "p95 ms"):
        table.add_column(column, justify="left" if column == "model" else "right",
                         no_wrap=column in ("model", "cost"))
    for row in summary:
        rate = row["pass_rate"]
        latency = row["latency_ms"]
        sure = row.get("confidence")
        confidence = ("-" if sure is None else f"{sure['mean']:.2f}",)
        table.add_row(row["model"], _interval(row["score"]),
                      "-" if rate is None else f"{rate['rate']:.1%} ({rate['passed']}/"
                                               f"{rate['total']})",
                      *(confidence if judged else ()),
                      f"{row['succeeded']}/{row['failed']}", _money(row["cost_micros"]),
                      "-" if latency["p50"] is None else f"{latency['p50']:.0f}",
                      "-" if latency["p95"] is None else f"{latency['p95']:.0f}")
    return table


def _write_output(run: runfiles.RunData, fmt: str, out: Path | None) -> None:
    from assay.core.evalcli import formats

    if fmt == "html":
        try:
            from assay.core.evalreport import render_html
        except ImportError as exc:
            raise click.UsageError("--output html needs `assay report` (assay.core.evalreport), "
                                   "which this installation does not have") from exc
        render_html([run.path], out or run.path / "report.html")
        return
    text = {"json": formats.to_json, "csv": formats.to_csv, "junit": formats.to_junit}[fmt](run)
    if out is None:
        click.echo(text, nl=False)
    else:
        out.write_text(text)


def _load_config(path: Path, need_keys: bool) -> Any:
    from assay.core.evalcli.config import ConfigError, load

    try:
        return load(path, need_keys=need_keys)
    except ConfigError as exc:
        console = _err()
        console.print(f"[bold red]{len(exc.problems)} problem(s) in {exc.file}; nothing was "
                      "run:[/]", highlight=False)
        for line in exc.lines():
            console.print(f"  {line}", highlight=False, markup=False)
        sys.exit(outcome.USAGE)


@click.command("eval")
@click.argument("config", type=click.Path(dir_okay=False, path_type=Path))
@RUNS_DIR
@click.option("--estimate", is_flag=True, help="Print the cost range and exit; nothing is run.")
@click.option("--max-cost", type=click.FloatRange(min=0), help="Hard cap in dollars (exit 3).")
@click.option("--no-cache", is_flag=True, help="Call the models even for cached replies.")
@click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path),
              help="Where cached replies are kept [default: RUNS_DIR/.cache].")
@click.option("--concurrency", type=click.IntRange(1, 1000), help="Calls in flight.")
@click.option("--fail-under", type=click.FloatRange(0, 1),
              help="Exit 1 when a model's mean on any scorer is below this.")
@click.option("--output", "fmt", type=click.Choice(FORMATS), help="Also write the results so.")
@click.option("-o", "--out", type=click.Path(dir_okay=False, path_type=Path),
              help="File for --output (stdout for json/csv/junit when omitted).")
@click.option("--server", help="Run on this Assay server (token in ASSAY_TOKEN).")
@click.option("--project", type=int, help="With --server: the project id.")
@click.option("-q", "--quiet", is_flag=True, help="No progress and no table (CI).")
def eval_(config: Path, runs_dir: Path, estimate: bool, max_cost: float | None, no_cache: bool,
          cache_dir: Path | None, concurrency: int | None, fail_under: float | None,
          fmt: str | None, out: Path | None, server: str | None, project: int | None,
          quiet: bool) -> None:
    """Evaluate the prompts, models and test cases of CONFIG; score, report, exit 0-4."""
    from assay.core.evalcli import local, service

    logging.getLogger("assay").setLevel(logging.WARNING)  # the table says how the run went
    cfg = _load_config(config, need_keys=not estimate)
    from assay.core.evalcli.prices import fill_openrouter_prices

    for name in fill_openrouter_prices(cfg):
        _err().print(f"[yellow]{name}: no price (OpenRouter's list lacks it): its cost is "
                     "not counted[/]", highlight=False)
    max_cost_micros = None if max_cost is None else round(max_cost * 1_000_000)
    if server:
        from assay.cli.remote import eval_on_server

        sys.exit(eval_on_server(cfg, server, project, quiet=quiet, fail_under=fail_under,
                                max_cost_micros=max_cost_micros, cache=not no_cache))
    fake_url = os.environ.get("ASSAY_FAKE_PROVIDER_URL")
    if estimate:
        figures = local.estimate(cfg, cache=not no_cache, max_cost_micros=max_cost_micros,
                                 fake_url=fake_url)
        _print_estimate(figures)
        sys.exit(outcome.OK)
    opts = service.Options(runs_dir=runs_dir, cache=not no_cache, cache_dir=cache_dir,
                           max_cost_micros=max_cost_micros, concurrency=concurrency,
                           fail_under=fail_under, fake_url=fake_url)
    console = _err()
    if quiet:
        result = service.run_eval(cfg, opts)
    else:
        with Progress(TextColumn("[bold]{task.description}"), BarColumn(),
                      TextColumn("{task.completed}/{task.total} calls"),
                      TextColumn("[red]{task.fields[failed]} failed"),
                      TextColumn("{task.fields[spend]}"), TimeRemainingColumn(),
                      console=console, transient=True) as bar:
            task = bar.add_task("assay eval", total=None, failed=0, spend="$0")

            def show(p: local.Progress) -> None:
                bar.update(task, total=p.total, completed=p.done, failed=p.failed,
                           spend=_money(p.spent_micros))

            result = service.run_eval(cfg, opts, show)
        console.print(results_table(result.run))
        console.print(f"run files: {result.folder}", highlight=False)
    for reason in result.verdict.reasons:
        console.print(f"[yellow]{reason}[/]", highlight=False)
    if fmt:
        _write_output(result.run, fmt, out)
    sys.exit(result.verdict.code)


def _print_estimate(figures: dict[str, Any]) -> None:
    console = Console(highlight=False, emoji=False)
    console.print(f"{figures['cases']} cases x {len(figures['per_target'])} targets x "
                  f"{figures['repeats']} repeats = {figures['calls']} calls, "
                  f"{figures['judge_calls']} judge calls")
    for target in figures["per_target"]:
        console.print(f"  {target['label']}: {_money(target['low_micros'])} - "
                      f"{_money(target['high_micros'])}"
                      + ("" if target["priced"] else " (unpriced)"))
    console.print(f"estimated cost: {_money(figures['low_micros'])} - "
                  f"{_money(figures['high_micros'])} (judges {_money(figures['judge_low_micros'])}"
                  f" - {_money(figures['judge_high_micros'])}); cached replies cost nothing")
    if not figures["complete"]:
        console.print("[yellow]some models have no price: their calls are not counted[/]")
    for problem in figures["problems"]:
        console.print(f"[yellow]{problem}[/]")


@click.command("init")
@click.argument("path", type=click.Path(dir_okay=False, path_type=Path), default="assay.yaml")
@click.option("--force", is_flag=True, help="Overwrite an existing file.")
def init(path: Path, force: bool) -> None:
    """Write a commented example config to PATH."""
    from assay.core.evalcli.example import EXAMPLE

    if path.exists() and not force:
        raise click.UsageError(f"{path} exists (--force to overwrite)")
    path.write_text(EXAMPLE)
    click.echo(f"wrote {path}; try: assay eval {path} --estimate")


def register(group: click.Group) -> None:
    from assay.cli import runscmd

    group.add_command(eval_)
    group.add_command(init)
    for command in runscmd.COMMANDS:
        group.add_command(command)
