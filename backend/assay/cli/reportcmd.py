"""`assay report RUN... -o report.html`: the single-file HTML report of local runs."""

from __future__ import annotations

from pathlib import Path

import click

from assay.cli.common import RUNS_DIR


@click.command("report")
@click.argument("runs", nargs=-1, required=True)
@click.option("-o", "--output", "output", type=click.Path(dir_okay=False, path_type=Path),
              default=Path("report.html"), show_default=True, help="The HTML file to write.")
@RUNS_DIR
def report(runs: tuple[str, ...], output: Path, runs_dir: Path | str) -> None:
    """Write one self-contained HTML file for RUNS (run folders, run ids, or `latest`):
    run list, run detail, charts and every output; it opens offline and makes no request.
    Exit code 2 when a run cannot be read."""
    from assay.core.evalcli.runfiles import RunFileError, resolve
    from assay.core.evalreport import render_html

    try:
        folders = [resolve(Path(runs_dir), ref) for ref in runs]
        done = render_html(folders, output)
    except RunFileError as exc:
        click.echo(f"assay report: {exc.message}", err=True)
        raise SystemExit(2) from exc
    except OSError as exc:  # the runs were read: the output path is the problem
        click.echo(f"assay report: cannot write {output}: {exc.strerror or exc}", err=True)
        raise SystemExit(2) from exc
    click.echo(f"Wrote {done.path} ({done.runs} run{'s' if done.runs != 1 else ''}, "
               f"{done.outputs:,} outputs, {done.bytes / 1024:,.0f} kB)")
