"""`assay eval` locally: config -> planned run -> engine -> run files -> verdict."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.collections_policy import fewer_collections
from assay.core.errors import RunNotReady
from assay.core.evalcli import export, local, outcome, runfiles
from assay.core.evalcli.config import EvalConfig
from assay.core.evalcli.local import Progress


class NotReady(Exception):
    """The config's run cannot start (an unpriced model with a budget, ...): exit 2 with
    each reason, nothing called."""

    def __init__(self, file: str, reasons: list[dict[str, Any]]) -> None:
        self.file = file
        self.lines = [reason_text(r) for r in reasons]
        super().__init__("; ".join(self.lines))


class Interrupted(Exception):
    """Ctrl-C: the run was stopped and kept as cancelled, to be finished with --resume."""

    def __init__(self, run_id: str, done: int, total: int) -> None:
        self.run_id, self.done, self.total = run_id, done, total
        super().__init__(f"run {run_id} interrupted")


def reason_text(reason: Any) -> str:
    """A reason of the engine's (a dict with a code and a message) as a line to read."""
    if isinstance(reason, dict):
        message = reason.get("message") or reason.get("code") or str(reason)
        code = reason.get("code")
        return f"{message} ({code})" if code and code not in message else str(message)
    return str(reason)


@dataclass
class Options:
    runs_dir: Path
    cache: bool = True
    cache_dir: Path | None = None  # None with cache on: runs_dir/.cache
    max_cost_micros: int | None = None
    concurrency: int | None = None
    fail_under: float | None = None
    fake_url: str | None = None
    resume: str | None = None  # a cancelled run's id (or latest) to finish


@dataclass
class Result:
    folder: Path
    run: runfiles.RunData
    verdict: outcome.Verdict


def cache_dir(opts: Options) -> Path | None:
    if not opts.cache:
        return None
    return opts.cache_dir or opts.runs_dir / ".cache"


def run_eval(cfg: EvalConfig, opts: Options,
             on_progress: Callable[[Progress], None] | None = None) -> Result:
    # what is imported by now is never garbage, and a run allocates many short-lived rows:
    # the collector's default thresholds cost the planning and the run files a third of
    # their time (the shard runner asks for the same while it runs)
    with local.isolated_runtime(), fewer_collections():
        return _run_eval(cfg, opts, on_progress)


def _run_eval(cfg: EvalConfig, opts: Options,
              on_progress: Callable[[Progress], None] | None) -> Result:
    max_cost = opts.max_cost_micros if opts.max_cost_micros is not None else cfg.max_cost_micros
    concurrency = opts.concurrency or cfg.concurrency
    run_id = runfiles.new_run_id(opts.runs_dir)
    folder = opts.runs_dir / run_id
    try:
        try:
            planned = local.plan(cfg, folder, cache=opts.cache, max_cost_micros=max_cost,
                                 concurrency=concurrency, fake_url=opts.fake_url,
                                 templates=opts.runs_dir / ".cache")
        except RunNotReady as exc:
            raise NotReady(cfg.file, exc.errors.get("reasons", [])) from exc
        with local.shared_cache(folder, cache_dir(opts)):
            local.execute(planned, on_progress)
        written = export.collect(cfg, planned, opts.cache, max_cost, concurrency)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)  # no half-written run in the index
        raise
    finally:
        _close(locals().get("planned"))
    written.run_id = run_id
    written.metadata["run_id"] = run_id
    fail_under = opts.fail_under if opts.fail_under is not None else cfg.fail_under
    written.metadata["thresholds"]["fail_under"] = fail_under
    data = runfiles.RunData(folder, written.prompt, written.cases, written.responses,
                            written.evaluations, written.metadata)
    verdict = outcome.judge(data, fail_under)
    written.metadata["exit_code"] = verdict.code
    runfiles.write_run(opts.runs_dir, written)
    return Result(folder, data, verdict)


def _close(planned: local.Planned | None) -> None:
    if planned is None:
        return
    planned.rt.db.engine.dispose()
    from assay.redis_conn import discard_embedded  # started only for a provider's rpm/tpm

    discard_embedded(planned.rt.settings)
    shutil.rmtree(planned.rt.settings.instance_path, ignore_errors=True)


def verdict_of(folder: Path, fail_under: float | None) -> outcome.Verdict:
    run = runfiles.read_run(folder)
    return outcome.judge(run, fail_under if fail_under is not None
                         else run.prompt["settings"].get("fail_under"))


def dump_json(run: runfiles.RunData) -> str:
    return json.dumps({"run_id": run.id, "status": run.metadata["status"],
                       "totals": run.metadata["totals"], "summary": run.metadata["summary"],
                       "exit_code": run.metadata.get("exit_code")}, indent=2)
