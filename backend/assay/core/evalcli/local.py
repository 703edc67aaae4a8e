"""Run a config in this process on the server's own engine: the run folder's SQLite file
holds the project, models, dataset, scorers and run; the shard runner (jobs/runs.py) works
through the cells in an asyncio loop here, exactly as an RQ worker does, as the run's only
shard (`alone`: no journal, no shared slots, no events), so no Redis is needed. Then the run
is written out as run files (export.py)."""

from __future__ import annotations

import secrets
import shutil
import sqlite3
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from assay import aio
from assay.core.auth.service import register
from assay.core.datasets.service import create_dataset
from assay.core.evalcli import schema
from assay.core.evalcli.config import EvalConfig
from assay.core.llm.models import CachedResponse, Credential
from assay.core.llm.service import create_model
from assay.core.projects.service import create_project
from assay.core.prompts.service import create_prompt
from assay.core.runs.estimate import estimate_run
from assay.core.runs.models import Output, Run
from assay.core.runs.planning import RunSpec, TargetSpec, plan_run
from assay.core.scoring.service import create_scorer
from assay.observability import metrics
from assay.runtime import Runtime, configure
from assay.settings import Settings

MICROS = 1_000_000
DB_FILE = "assay.db"
CACHE_FILE = "responses.sqlite"


@dataclass
class Progress:
    total: int
    done: int
    failed: int
    spent_micros: int
    elapsed_s: float


@dataclass
class Planned:
    rt: Runtime
    run_id: int
    project_id: int
    targets: dict[int, tuple[str, str]]  # run target id -> (model name, prompt name)
    case_index: dict[int, int]  # case row id -> the config's case index
    scorer_names: dict[int, tuple[str, str]]  # scorer version id -> (name, kind)
    spec: RunSpec


@contextmanager
def isolated_runtime() -> Iterator[None]:
    """A local run configures the process's database and runtime for its run folder; put
    back what was there (a server's, in tests sharing the process) when it is done."""
    from assay import runtime
    from assay.extensions import db

    current = runtime._current
    try:
        with db.put_back():
            yield
    finally:
        runtime._current = current


def settings_for(folder: Path, concurrency: int, fake_url: str | None) -> Settings:
    # an embedded Redis only if a provider's rpm/tpm limit needs one (ratelimit.py), and
    # nothing else
    instance = Path(tempfile.mkdtemp(prefix="assay-eval-"))
    return Settings(instance_path=instance, database_url=f"sqlite:///{folder / DB_FILE}",
                    redis_url=None, secret_key=secrets.token_urlsafe(32),
                    jwt_secret=secrets.token_urlsafe(48), bcrypt_rounds=4,
                    run_concurrency=concurrency, redis_prefix=f"eval-{secrets.token_hex(4)}",
                    fake_provider_url=fake_url or "http://127.0.0.1:8100")


def _micros(dollars: float | None) -> int | None:
    return None if dollars is None else round(dollars * MICROS)


def plan(cfg: EvalConfig, folder: Path, *, cache: bool, max_cost_micros: int | None,
         concurrency: int | None, fake_url: str | None, write: bool = True,
         templates: Path | None = None) -> Planned:
    """The config as rows of the run folder's database, and the run planned (`write`
    False: only resolved, for an estimate); `templates`: where the empty database is kept
    (schema.py)."""
    folder.mkdir(parents=True, exist_ok=True)
    rt = configure(settings_for(folder, concurrency or cfg.concurrency, fake_url))
    # a new file in a new folder (new_run_id, mkdtemp): no table to look for first
    schema.create(rt.db.engine, folder / DB_FILE, templates)
    with rt.db.factory() as session:
        user = register(session, "eval@assay.invalid", secrets.token_urlsafe(24) + "aA1!",
                        "assay eval", 4)
        project = create_project(session, user, "assay eval", cfg.description)
        if any(s.kind == "code_execution" for s in cfg.scorers):
            project.settings = {**(project.settings or {}), "code_execution": True}
        credentials: dict[str, int] = {}
        for name, provider in cfg.providers.items():
            row = Credential(project_id=project.id, kind=provider.kind, label=name,
                             base_url=provider.base_url or "", config=provider.config,
                             secret_env=provider.api_key_env, is_default=True)
            session.add(row)
            session.flush()
            credentials[name] = row.id
        models = {m.name: create_model(session, user, project, {
            "name": m.name, "credential_id": credentials[m.provider], "model": m.model,
            "params": m.params, "input_price_per_mtok_micros": _micros(m.input_price_per_mtok),
            "output_price_per_mtok_micros": _micros(m.output_price_per_mtok)})
            for m in cfg.models}
        versions = {p["name"]: create_prompt(session, user, project, {
            "name": p["name"], "template": p["template"], "system": p["system"]})[1]
            for p in cfg.prompts}
        dataset = create_dataset(session, user, project, "tests", "cases", [
            {"input": c["vars"], "expected": c["expected"], "tags": c["tags"],
             "metadata": {**c["metadata"], "eval_case_index": c["index"]}}
            for c in cfg.cases])
        scorers = [create_scorer(session, user, project, {
            "name": s.name, "kind": s.kind, "params": s.params}) for s in cfg.scorers]
        spec = RunSpec(
            dataset_id=dataset.id, name=Path(cfg.file).stem,
            targets=tuple(TargetSpec(models[m.name].id, prompt_version_id=versions[p["name"]].id)
                          for m in cfg.models for p in cfg.prompts),
            repeats=cfg.repeats, concurrency=concurrency or cfg.concurrency, cache=cache,
            timeout_s=cfg.timeout_s, max_retries=cfg.max_retries,
            budget_micros=max_cost_micros, scorer_ids=tuple(s[0].id for s in scorers))
        run_id = 0
        if write:
            run = plan_run(session, user, project, spec)
            run_id = run.id
        session.commit()
        project_id = project.id
    names = {v.id: p for p, v in versions.items()}
    return Planned(rt, run_id, project_id, _targets(rt, run_id, names) if write else {},
                   _case_index(rt), {s[1].id: (s[0].name, s[0].kind) for s in scorers}, spec)


def _targets(rt: Runtime, run_id: int, prompts: dict[int, str]) -> dict[int, tuple[str, str]]:
    from assay.core.llm.models import ModelConfig
    from assay.core.runs.models import RunTarget

    with rt.db.factory() as session:
        rows = session.execute(select(RunTarget.id, ModelConfig.name, RunTarget.prompt_version_id)
                               .join(ModelConfig, ModelConfig.id == RunTarget.model_id)
                               .where(RunTarget.run_id == run_id)).all()
    return {r[0]: (r[1], prompts.get(r[2] or 0, "")) for r in rows}


def _case_index(rt: Runtime) -> dict[int, int]:
    from assay.core.datasets.models import Case

    with rt.db.factory() as session:
        return {row[0]: int((row[1] or {}).get("eval_case_index", 0))
                for row in session.execute(select(Case.id, Case.meta))}


def estimate(cfg: EvalConfig, *, cache: bool, max_cost_micros: int | None,
             fake_url: str | None) -> dict[str, Any]:
    folder = Path(tempfile.mkdtemp(prefix="assay-estimate-"))
    with isolated_runtime():
        return _estimate(cfg, folder, cache, max_cost_micros, fake_url)


def _estimate(cfg: EvalConfig, folder: Path, cache: bool, max_cost_micros: int | None,
              fake_url: str | None) -> dict[str, Any]:
    from assay.core.projects.models import Project

    try:
        planned = plan(cfg, folder, cache=cache, max_cost_micros=max_cost_micros,
                       concurrency=None, fake_url=fake_url, write=False)
        shutil.rmtree(planned.rt.settings.instance_path, ignore_errors=True)
        with planned.rt.db.factory() as session:
            project = session.get(Project, planned.project_id)
            assert project is not None
            return estimate_run(session, project, planned.spec)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@contextmanager
def shared_cache(folder: Path, cache_dir: Path | None) -> Iterator[None]:
    """The response cache lives in the run's database; across runs it is kept in
    `cache_dir`: copied in before the run, new replies copied back after it."""
    if cache_dir is None:
        yield
        return
    cache_dir.mkdir(parents=True, exist_ok=True)
    table = CachedResponse.__tablename__
    columns = ", ".join(c.name for c in CachedResponse.__table__.columns)
    with sqlite3.connect(cache_dir / CACHE_FILE) as shared:
        shared.execute(f"CREATE TABLE IF NOT EXISTS {table} (key TEXT PRIMARY KEY, "
                       "provider TEXT, model TEXT, text TEXT, tokens_in INTEGER, "
                       "tokens_out INTEGER, raw TEXT, hits INTEGER, created_at TEXT)")
    copy = (f"INSERT OR IGNORE INTO {{to}}.{table} ({columns}) "
            f"SELECT {columns} FROM {{source}}.{table}")
    with sqlite3.connect(folder / DB_FILE) as conn:
        conn.execute("ATTACH DATABASE ? AS shared", (str(cache_dir / CACHE_FILE),))
        conn.execute(copy.format(to="main", source="shared"))
        conn.commit()
        conn.execute("DETACH DATABASE shared")
    try:
        yield
    finally:
        with sqlite3.connect(folder / DB_FILE) as conn:
            conn.execute("ATTACH DATABASE ? AS shared", (str(cache_dir / CACHE_FILE),))
            conn.execute(copy.format(to="shared", source="main"))
            conn.commit()
            conn.execute("DETACH DATABASE shared")


def _progress(session: Session, run_id: int, total: int, started: float) -> Progress:
    rows = dict(session.execute(select(Output.status, func.count()).where(
        Output.run_id == run_id).group_by(Output.status)).all())
    spent = session.scalar(select(Run.spent_micros).where(Run.id == run_id)) or 0
    done = sum(rows.get(s, 0) for s in ("succeeded", "failed", "skipped"))
    return Progress(total, done, rows.get("failed", 0), int(spent), time.monotonic() - started)


def execute(planned: Planned, on_progress: Callable[[Progress], None] | None = None,
            every_s: float = 0.25) -> None:
    """Drive the shard runner to the run's end; `on_progress` is called from a thread."""
    from assay.jobs.runs import _Shard

    rt, run_id = planned.rt, planned.run_id
    with rt.db.factory() as session:
        total = session.scalar(select(func.count()).where(Output.run_id == run_id)) or 0
    started = time.monotonic()
    stop = threading.Event()

    def watch() -> None:
        while not stop.wait(every_s):
            with rt.db.factory() as session:
                on_progress(_progress(session, run_id, total, started))  # type: ignore[misc]

    watcher = threading.Thread(target=watch, daemon=True) if on_progress else None
    if watcher:
        watcher.start()
    try:
        with metrics.unrecorded():
            aio.run(_Shard(rt, run_id, alone=True).run())
    finally:
        stop.set()
        if watcher:
            watcher.join()
    if on_progress:
        with rt.db.factory() as session:
            on_progress(_progress(session, run_id, total, started))
