"""Engine figures at scale: planning 100,000 cells, and the peak RSS of a real worker process
(RQ worker and its work horse) through a 100,000-cell run."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from assay.app import create_app
from assay.core.auth.service import register
from assay.core.datasets.service import create_dataset
from assay.core.llm.service import ensure_demo_models
from assay.core.projects.service import create_project
from assay.core.runs.planning import RunSpec, TargetSpec, plan_run
from assay.extensions import db
from assay.jobs.queues import enqueue_run
from assay.runtime import configure
from assay.settings import Settings

CELLS = 100_000


def _rss_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except (FileNotFoundError, ProcessLookupError):
        pass
    return 0


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except FileNotFoundError:
        return []
    return [int(p) for p in text.split()]


def plan_in_process(database_url: str, cases: int = 10_000, grid: int = 10) -> float:
    """Seconds to plan a run of `cases` x `grid` targets (a temperature grid) = 100,000 cells
    against `database_url`, validation included, one commit."""
    os.environ.update({"ASSAY_INSTANCE_PATH": tempfile.mkdtemp(prefix="assay-bench-"),
                       "DATABASE_URL": database_url, "ASSAY_BCRYPT_ROUNDS": "4"})
    settings = Settings.from_env()
    app = create_app(settings)
    with app.app_context():
        from flask_migrate import upgrade

        upgrade()
    with db.factory() as session:
        user = register(session, "plan@example.com", "Bench-password-1!", None, 4)
        project = create_project(session, user, "Plan bench")
        model = ensure_demo_models(session, user, project, "http://127.0.0.1:9")[0]
        dataset = create_dataset(session, user, project, "plan", "questions", [
            {"input": {"question": f"question {i}"}} for i in range(cases)])
        session.commit()
        grid_values = [round(0.1 * i, 1) for i in range(grid)]
        started = time.perf_counter()
        run = plan_run(session, user, project, RunSpec(
            dataset_id=dataset.id, targets=(TargetSpec(model.id,
                                                       grid={"temperature": grid_values}),)))
        session.commit()
        elapsed = time.perf_counter() - started
        assert run.total == cases * grid
    return elapsed


def _prepare(env: dict[str, str], cells: int, concurrency: int) -> tuple[Settings, int]:
    settings = Settings.from_env(env)
    app = create_app(settings)
    with app.app_context():
        from flask_migrate import upgrade

        upgrade()
    with db.factory() as session:
        user = register(session, f"scale{time.time_ns()}@example.com", "Bench-password-1!",
                        None, 4)
        project = create_project(session, user, "Scale")
        models = ensure_demo_models(session, user, project, settings.fake_provider_url)[:1]
        dataset = create_dataset(session, user, project, "scale", "questions", [
            {"input": {"question": f"question {i}"}} for i in range(cells)])
        run = plan_run(session, user, project, RunSpec(
            dataset_id=dataset.id, targets=tuple(TargetSpec(m.id) for m in models),
            concurrency=concurrency, cache=False))
        session.commit()
        return settings, run.id


def worker_rss(env: dict[str, str], cells: int = CELLS, concurrency: int = 200) -> dict[str, Any]:
    """Run `cells` cells through one `assay worker --burst` process (one shard) and sample
    the RSS of the worker and of its forked work horse every 100 ms."""
    env = {**os.environ, **env, "ASSAY_RUN_SHARDS": "1"}
    settings, run_id = _prepare(env, cells, concurrency)
    rt = configure(settings)
    enqueue_run(rt, run_id)
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "assay", "worker", "--burst"], env=env)
    peak_worker = peak_horse = 0
    while proc.poll() is None:
        peak_worker = max(peak_worker, _rss_kb(proc.pid))
        for child in _children(proc.pid):
            peak_horse = max(peak_horse, _rss_kb(child))
        time.sleep(0.1)
    elapsed = time.perf_counter() - started
    with db.factory() as session:
        from assay.core.runs.models import Run

        run = session.get(Run, run_id)
        assert run is not None
        done, status = run.succeeded + run.failed, run.status
    return {"cells": cells, "done": done, "status": status, "seconds": round(elapsed, 1),
            "worker_mb": round(peak_worker / 1024), "horse_mb": round(peak_horse / 1024)}
