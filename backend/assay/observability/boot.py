"""What every `assay` process sets up first, before anything imports prometheus_client."""

from __future__ import annotations

import atexit
import os
import sys
from pathlib import Path

from assay.observability import logs, tracing

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"


def multiproc_dir(instance: Path, fresh: bool = False) -> Path | None:
    """PROMETHEUS_MULTIPROC_DIR, else `<instance>/metrics`, put in the environment so that
    child processes share it. `fresh` (`assay up`: every process starts anew) deletes the
    sample files of earlier processes. None when metrics are off (ASSAY_METRICS=0)."""
    if os.environ.get("ASSAY_METRICS", "1") == "0":
        return None
    path = Path(os.environ.get(MULTIPROC_ENV) or instance / "metrics")
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    if fresh:  # only the sample files: the directory may be one the operator chose
        for stale in path.glob("*.db"):
            stale.unlink(missing_ok=True)
    os.environ[MULTIPROC_ENV] = str(path)
    return path


def instance_path() -> Path:
    from assay.settings import REPO_ROOT

    return Path(os.environ.get("ASSAY_INSTANCE_PATH") or REPO_ROOT / "instance").resolve()


def _drop_live_gauges() -> None:
    """At exit, a process that recorded samples leaves no live gauge behind (metrics.py is
    not imported for this alone: `assay eval` and `--help` start without it)."""
    metrics = sys.modules.get("assay.observability.metrics")
    if metrics is not None:
        metrics.at_exit()


def start(command: str | None = None) -> None:
    """Logging (ASSAY_LOG_LEVEL, ASSAY_LOG_FORMAT), the metrics directory, and traces
    when OTEL_EXPORTER_OTLP_ENDPOINT is set (service `assay-<command>`)."""
    logs.configure()
    if multiproc_dir(instance_path()) is not None:
        atexit.register(_drop_live_gauges)
    tracing.setup(f"assay-{command or 'cli'}")
