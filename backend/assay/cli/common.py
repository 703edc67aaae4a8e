"""What the commands share: the --runs-dir option, the consoles, and the number formats
of their tables. Imports nothing of the commands (they import this: no cycle)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:  # rich is imported by the commands that print with it, when they do
    from rich.console import Console

RUNS_DIR = click.option("--runs-dir", type=click.Path(file_okay=False, path_type=Path),
                        default=lambda: os.environ.get("ASSAY_RUNS_DIR", "runs"),
                        show_default="ASSAY_RUNS_DIR or ./runs", help="Where run files go.")
# a pipe or a file gets every column unwrapped (a terminal's width is kept)
UNWRAPPED_WIDTH = 1000


def out() -> Console:
    """Results go to stdout (`> out.txt` keeps them), unwrapped when it is not a terminal."""
    from rich.console import Console

    return Console(highlight=False, emoji=False,
                   width=None if sys.stdout.isatty() else UNWRAPPED_WIDTH)


def err() -> Console:
    """Progress, warnings and problems go to stderr."""
    from rich.console import Console

    return Console(stderr=True, soft_wrap=True, emoji=False, highlight=False)


def money(micros: int | None) -> str:
    return "-" if micros is None else f"${micros / 1e6:,.4f}"


def interval(score: dict[str, Any] | None) -> str:
    if score is None or score.get("mean") is None:
        return "-"
    if score.get("low") is None:
        return f"{score['mean']:.3f}"
    return f"{score['mean']:.3f} [{score['low']:.2f}, {score['high']:.2f}]"


def rate(value: dict[str, Any] | None) -> str:
    if value is None:
        return "-"
    return f"{value['rate']:.1%} ({value['passed']}/{value['total']})"


def number(value: float | None, digits: int = 0) -> str:
    return "-" if value is None else f"{value:.{digits}f}"
