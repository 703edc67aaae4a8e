"""`assay init` and `assay eval`: thin commands over assay.core.evalcli (exit codes in
outcome.py; README "assay eval"). Results on stdout, progress and problems on stderr."""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path
from typing import Any, NoReturn

import click

from assay.cli.common import RUNS_DIR, err, money, out
from assay.core.evalcli import codes as outcome
from assay.core.evalcli.formats import FORMATS, format_for

SUFFIXES = ", ".join(f"{s} ({f})" for s, f in (
    (".json", "json"), (".csv", "csv"), (".xml", "junit"), (".html", "html")))


def _write_output(run: Any, fmt: str, path: Path | None) -> None:
    from assay.core.evalcli import formats

    if fmt == "html":
        from assay.core.evalreport import render_html

        render_html([run.path], path or run.path / "report.html")
        return
    text = {"json": formats.to_json, "csv": formats.to_csv, "junit": formats.to_junit}[fmt](run)
    if path is None:
        click.echo(text, nl=False)
    else:
        path.write_text(text)


def output_choice(output: str | None, fmt: str | None, out_file: Path | None
                  ) -> tuple[str | None, Path | None]:
    """(format, file) from `-o/--output FILE` and `--format`, as `assay report -o` reads:
    --output is a file; its suffix gives the format unless --format does. The older
    `--output json -o FILE` (--output a format) still works, with a note."""
    if output in FORMATS and fmt is None and not Path(output).suffix:
        err().print(f"[yellow]--output {output}: --output now names a file (as in `assay "
                    f"report`); use --format {output} (taken as the format this time)[/]")
        return output, out_file
    path = Path(output) if output else out_file
    if path is None:
        return fmt, None
    fmt = fmt or format_for(path)
    if fmt is None:
        raise click.UsageError(f"--output {path}: no format for its suffix (one of "
                               f"{SUFFIXES}): add --format")
    return fmt, path


def _load_config(path: Path, need_keys: bool) -> Any:
    from assay.core.evalcli.config import ConfigError, load

    try:
        return load(path, need_keys=need_keys)
    except ConfigError as exc:
        _problems(f"{len(exc.problems)} problem(s) in {exc.file}; nothing was run:",
                  exc.lines())


def _problems(title: str, lines: list[str]) -> NoReturn:
    click.secho(title, fg="red", bold=True, err=True)  # click's, not rich's: a bad config
    for line in lines:  # exits before rich is imported
        click.echo(f"  {line}", err=True)
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
@click.option("-o", "--output", "output", metavar="FILE",
              help=f"Also write the results to FILE, in the format of its suffix: {SUFFIXES}.")
@click.option("--format", "fmt", type=click.Choice(FORMATS),
              help="The format of --output (stdout for json/csv/junit without --output).")
@click.option("--out", "out_file", type=click.Path(dir_okay=False, path_type=Path),
              hidden=True, help="The older name of --output FILE.")
@click.option("--resume", "resume", metavar="RUN",
              help="Finish a cancelled or interrupted run (an id or latest): only the cells "
                   "not done are called.")
@click.option("--server", help="Run on this Assay server (token in ASSAY_TOKEN).")
@click.option("--project", type=int, help="With --server: the project id.")
@click.option("-q", "--quiet", is_flag=True, help="No progress and no table (CI).")
def eval_(config: Path, runs_dir: Path, estimate: bool, max_cost: float | None, no_cache: bool,
          cache_dir: Path | None, concurrency: int | None, fail_under: float | None,
          output: str | None, fmt: str | None, out_file: Path | None, resume: str | None,
          server: str | None, project: int | None, quiet: bool) -> None:
    """Evaluate the prompts, models and test cases of CONFIG; score, report, exit 0-4."""
    fmt, out_path = output_choice(output, fmt, out_file)
    cfg = _load_config(config, need_keys=True)
    logging.getLogger("assay").setLevel(logging.WARNING)  # the table says how the run went
    from assay.core.evalcli.prices import fill_openrouter_prices

    for name in fill_openrouter_prices(cfg):
        err().print(f"[yellow]{name}: no price (OpenRouter's list lacks it): its cost is "
                    "not counted[/]")
    max_cost_micros = None if max_cost is None else round(max_cost * 1_000_000)
    if server:
        from assay.cli.remote import eval_on_server

        sys.exit(eval_on_server(cfg, server, project, quiet=quiet, fail_under=fail_under,
                                max_cost_micros=max_cost_micros, cache=not no_cache))
    from assay.core.evalcli import local, service
    from assay.core.evalcli.service import NotReady

    fake_url = os.environ.get("ASSAY_FAKE_PROVIDER_URL")
    if estimate:
        figures = local.estimate(cfg, cache=not no_cache, max_cost_micros=max_cost_micros,
                                 fake_url=fake_url)
        _print_estimate(figures)
        if figures["problems"]:
            _problems("the run could not start:", [service.reason_text(p)
                                                   for p in figures["problems"]])
        sys.exit(outcome.OK)
    opts = service.Options(runs_dir=runs_dir, cache=not no_cache, cache_dir=cache_dir,
                           max_cost_micros=max_cost_micros, concurrency=concurrency,
                           fail_under=fail_under, fake_url=fake_url, resume=resume)
    try:
        result = _run(cfg, opts, quiet)
    except NotReady as exc:
        _problems(f"{exc.file}: the run cannot start; nothing was called:", exc.lines)
    except service.Interrupted as stopped:
        err().print(f"[yellow]interrupted: run {stopped.run_id} kept as cancelled "
                    f"({stopped.done} of {stopped.total} calls done); finish it with: "
                    f"assay eval {config} --resume {stopped.run_id}[/]")
        sys.exit(outcome.INTERRUPTED)
    if not quiet:
        from assay.cli.tables import print_failures, results_table

        console = out()
        console.print(results_table(result.run))
        print_failures(console, result.run)
        console.print(f"run files: {result.folder}")
    for reason in result.verdict.reasons:
        err().print(f"[yellow]{reason}[/]")
    if fmt:
        _write_output(result.run, fmt, out_path)
    sys.exit(result.verdict.code)


def _run(cfg: Any, opts: Any, quiet: bool) -> Any:
    from assay.core.evalcli import service

    if quiet:
        return service.run_eval(cfg, opts)
    from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

    # the count column shows "planning" until the run has its cells: never "0/None"
    with Progress(TextColumn("[bold]{task.description}"), BarColumn(),
                  TextColumn("{task.fields[count]}"),
                  TextColumn("[red]{task.fields[failed]} failed"),
                  TextColumn("{task.fields[spend]}"), TimeRemainingColumn(),
                  console=err(), transient=True) as bar:
        task = bar.add_task("assay eval", total=None, failed=0, spend="$0", count="planning")

        def show(p: Any) -> None:
            bar.update(task, total=p.total, completed=p.done, failed=p.failed,
                       spend=money(p.spent_micros), count=f"{p.done}/{p.total} calls")

        return service.run_eval(cfg, opts, show)


def _print_estimate(figures: dict[str, Any]) -> None:
    console = out()
    console.print(f"{figures['cases']} cases x {len(figures['per_target'])} targets x "
                  f"{figures['repeats']} repeats = {figures['calls']} calls, "
                  f"{figures['judge_calls']} judge calls")
    for target in figures["per_target"]:
        console.print(f"  {target['label']}: {money(target['low_micros'])} - "
                      f"{money(target['high_micros'])}"
                      + ("" if target["priced"] else " (unpriced)"))
    likely = figures.get("likely_micros")
    console.print(f"estimated cost: {money(figures['low_micros'])} - "
                  f"{money(figures['high_micros'])}"
                  + (f", likely {money(likely)}" if likely is not None else "")
                  + f" (judges {money(figures['judge_low_micros'])} - "
                    f"{money(figures['judge_high_micros'])}); cached replies cost nothing")
    if not figures["complete"]:
        console.print("[yellow]some models have no price: their calls are not counted[/]")


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
