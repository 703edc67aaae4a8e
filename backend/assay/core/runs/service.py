"""Runs: plan every cell up front, claim cells under a lease, record results once, finish."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import timedelta
from typing import Any, cast

from sqlalchemy import JSON, Table, bindparam, func, insert, or_, select, update
from sqlalchemy.orm import Session

from assay.core import audit
from assay.core.auth.models import User
from assay.core.base import utcnow
from assay.core.datasets.models import Case
from assay.core.datasets.service import get_dataset, latest_version, version_cases
from assay.core.errors import DomainError, Invalid, NotFound
from assay.core.llm.models import Credential, ModelConfig
from assay.core.llm.secrets import resolve_api_key
from assay.core.llm.service import models_by_id
from assay.core.pagination import Page, paginate
from assay.core.projects.models import Project
from assay.core.runs.models import TERMINAL, CellStatus, Output, Run, RunStatus, RunTarget
from assay.providers import cache as response_cache
from assay.providers.cache import Hit
from assay.providers.registry import api_key_for


def create_run(session: Session, actor: User | None, project: Project, dataset_id: int,
               model_ids: list[int], name: str | None = None, repeats: int = 1,
               concurrency: int | None = None, cache: bool = True,
               stream: bool = False, timeout_s: int | None = None) -> Run:
    """Plan every cell. `cache`: reuse (and store) replies of deterministic calls;
    `stream`: call with streaming so each output records its time to first token;
    `timeout_s`: wall-clock limit of one attempt of a call."""
    if not model_ids:
        raise Invalid("Choose at least one model", {"json": {"model_ids": ["Required"]}})
    dataset = get_dataset(session, project, dataset_id)
    version = latest_version(session, dataset.id)
    models = models_by_id(session, project, list(dict.fromkeys(model_ids)))
    cases = version_cases(session, version.id)
    if not cases:
        raise Invalid("The dataset has no cases", {"json": {"dataset_id": ["No cases"]}})
    run = Run(project_id=project.id, name=name or f"{dataset.name} v{version.number}",
              dataset_version_id=version.id, created_by=actor.id if actor else None,
              total=len(cases) * len(models) * repeats,
              settings={"repeats": repeats, "concurrency": concurrency, "cache": cache,
                        "stream": stream, "timeout_s": timeout_s})
    session.add(run)
    session.flush()
    targets = [RunTarget(run_id=run.id, model_id=m.id, position=i) for i, m in enumerate(models)]
    session.add_all(targets)
    session.flush()
    session.execute(insert(Output), [
        {"run_id": run.id, "case_id": case.id, "target_id": target.id, "repeat": r,
         "status": CellStatus.pending, "attempts": 0}
        for case in cases for target in targets for r in range(repeats)
    ])
    audit.record(session, actor, "run.created", "run", run.id, project.id,
                 {"dataset_id": dataset.id, "version": version.number, "model_ids": model_ids,
                  "cells": run.total})
    return run


def get_run(session: Session, project: Project, run_id: int) -> Run:
    run = session.get(Run, run_id)
    if run is None or run.project_id != project.id:
        raise NotFound("Run not found")
    return run


def list_runs(session: Session, project: Project, page: int, page_size: int) -> Page[Any]:
    stmt = select(Run).where(Run.project_id == project.id).order_by(Run.id.desc())
    return paginate(session, stmt, page, page_size)


def target_model_ids(session: Session, run_ids: list[int]) -> dict[int, list[int]]:
    rows = session.execute(select(RunTarget.run_id, RunTarget.model_id)
                           .where(RunTarget.run_id.in_(run_ids)).order_by(RunTarget.position))
    out: dict[int, list[int]] = {run_id: [] for run_id in run_ids}
    for run_id, model_id in rows:
        out[run_id].append(model_id)
    return out


def list_outputs(session: Session, run: Run, page: int, page_size: int) -> Page[Any]:
    """Rows of (output, model id, model name) in case then target order."""
    stmt = (select(Output, ModelConfig.id, ModelConfig.name)
            .join(RunTarget, RunTarget.id == Output.target_id)
            .join(ModelConfig, ModelConfig.id == RunTarget.model_id)
            .where(Output.run_id == run.id)
            .order_by(Output.case_id, RunTarget.position, Output.repeat))
    return paginate(session, stmt, page, page_size, scalars=False)


def run_concurrency(session: Session, run_id: int, default: int) -> int:
    """Calls of this run in flight at once, per worker shard."""
    run = session.get(Run, run_id)
    chosen = (run.settings or {}).get("concurrency") if run else None
    return max(1, int(chosen or default))


def call_timeout(session: Session, run_id: int, default: float) -> float:
    """Seconds one attempt of a call may take, wall clock."""
    run = session.get(Run, run_id)
    chosen = (run.settings or {}).get("timeout_s") if run else None
    return float(chosen or default)


def start_run(session: Session, run_id: int) -> bool:
    """pending -> running; True when this call made the transition."""
    moved = session.execute(update(Run).where(Run.id == run_id, Run.status == RunStatus.pending)
                            .values(status=RunStatus.running, started_at=utcnow()))
    session.commit()
    return bool(getattr(moved, "rowcount", 0))


@dataclass(frozen=True)
class Cell:
    """Everything a worker needs to make one call, detached from the session. The key is
    resolved here, in the worker, and never leaves it: not in a repr, a job, an event."""

    output_id: int
    repeat: int
    model: str
    kind: str
    base_url: str
    config: dict[str, Any]
    credential_id: int
    params: dict[str, Any]
    messages: list[dict[str, Any]]
    price_in: int | None  # None: the model has no price, so the cost stays unknown
    price_out: int | None
    api_key: str | None = field(default=None, repr=False)
    key_error: str | None = None  # the key could not be resolved: the cell fails as auth
    stream: bool = False
    cache_key: str | None = None  # set when the call is cacheable (deterministic, cache on)
    cache_hit: Hit | None = None


def messages_of(case_input: dict[str, Any]) -> list[dict[str, Any]]:
    if isinstance(case_input.get("messages"), list):
        return list(case_input["messages"])
    text = case_input.get("question") or case_input.get("prompt") or str(case_input)
    return [{"role": "user", "content": str(text)}]


def case_messages(case: Case) -> list[dict[str, Any]]:
    return messages_of(case.input)


def _keys(credentials: list[Credential], master: str) -> dict[int, tuple[str | None, str | None]]:
    """Credential id -> (key, why it could not be had)."""
    out: dict[int, tuple[str | None, str | None]] = {}
    for credential in credentials:
        try:
            key = resolve_api_key(master, credential.project_id, credential.kind,
                                  credential.secret_ciphertext, credential.secret_env)
            out[credential.id] = (api_key_for(credential.kind, key), None)
        except DomainError as exc:
            out[credential.id] = (None, exc.message)
    return out


def claim_cells(session: Session, run_id: int, owner: str, limit: int, lease: timedelta,
                secret_key: str) -> list[Cell]:
    """Lease up to `limit` pending (or lease-expired) cells of a running run to `owner`,
    with their keys resolved and their cached replies (if any) looked up."""
    now = utcnow()
    claimable = or_(Output.status == CellStatus.pending,
                    (Output.status == CellStatus.running) & (Output.lease_until < now))
    candidates = (select(Output.id).join(Run, Run.id == Output.run_id)
                  .where(Output.run_id == run_id, Run.status == RunStatus.running, claimable)
                  .order_by(Output.id).limit(limit))
    if session.get_bind().dialect.name == "postgresql":
        candidates = candidates.with_for_update(skip_locked=True, of=Output)
    ids = list(session.scalars(candidates))
    if not ids:
        session.commit()
        return []
    # Claimable is checked again by the UPDATE itself: on SQLite (no SKIP LOCKED) another
    # worker may have claimed some of these ids since the SELECT; those are left to it.
    session.execute(update(Output).where(Output.id.in_(ids), claimable).values(
        status=CellStatus.running, lease_owner=owner, lease_until=now + lease,
        attempts=Output.attempts + 1))
    rows = session.execute(
        select(Output.id, Output.repeat, Case.input, RunTarget.model_id)
        .join(Case, Case.id == Output.case_id).join(RunTarget, RunTarget.id == Output.target_id)
        .where(Output.id.in_(ids), Output.lease_owner == owner).order_by(Output.id)).all()
    settings = session.scalar(select(Run.settings).where(Run.id == run_id)) or {}
    models = list(session.scalars(select(ModelConfig).where(
        ModelConfig.id.in_({row.model_id for row in rows}))))
    keys = _keys(list({m.credential.id: m.credential for m in models}.values()), secret_key)
    use_cache, stream = settings.get("cache", True) is not False, bool(settings.get("stream"))
    shared: dict[int, dict[str, Any]] = {}  # what every cell of one model has in common
    prefixes: dict[int, Any] = {}
    for m in models:
        credential, params = m.credential, dict(m.params or {})
        key, key_error = keys[credential.id]
        shared[m.id] = {
            "model": m.model, "kind": credential.kind, "base_url": credential.base_url,
            "config": dict(credential.config or {}), "credential_id": credential.id,
            "params": params, "price_in": m.input_price_per_mtok_micros,
            "price_out": m.output_price_per_mtok_micros, "api_key": key,
            "key_error": key_error, "stream": stream}
        if use_cache and response_cache.is_deterministic(params):
            prefixes[m.id] = response_cache.key_prefix(credential.kind, credential.base_url,
                                                       m.model, params, m.project_id)
    cells = []
    for oid, repeat, case_input, model_id in rows:
        messages = messages_of(case_input)
        prefix = prefixes.get(model_id)
        cells.append(Cell(output_id=oid, repeat=repeat, messages=messages,
                          cache_key=None if prefix is None
                          else response_cache.keyed(prefix, messages, repeat),
                          **shared[model_id]))
    hits = response_cache.lookup(session, [c.cache_key for c in cells if c.cache_key])
    session.commit()
    return [replace(c, cache_hit=hits[c.cache_key]) if c.cache_key in hits else c
            for c in cells]


@dataclass(frozen=True)
class CellResult:
    output_id: int
    ok: bool
    text: str | None = None
    error_class: str | None = None
    error_message: str | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    cost_micros: int | None = None
    latency_ms: int | None = None
    ttft_ms: int | None = None
    calls: int = 0  # requests sent to the provider for this result (retries included)
    cached: bool = False
    raw_request: dict[str, Any] | None = None
    raw_response: Any = None
    cache_key: str | None = None  # a hit (cached) or a reply to store (not cached)
    provider: str = ""
    model: str = ""


_JSON = JSON(none_as_null=True)


def _cache_writes(session: Session, results: list[CellResult]) -> None:
    hits = [r.cache_key for r in results if r.cached and r.cache_key]
    response_cache.count_hits(session, hits)
    response_cache.store(session, [
        response_cache.Entry(r.cache_key, r.provider, r.model, r.text or "", r.tokens_in,
                             r.tokens_out, r.raw_response if isinstance(r.raw_response, dict)
                             else {})
        for r in results if r.ok and not r.cached and r.cache_key])


def record_results(session: Session, run_id: int, owner: str,
                   results: list[CellResult]) -> Run | None:
    """Write finished cells; a cell whose lease another worker took over is left to it.
    Fresh deterministic replies go into the response cache in the same transaction."""
    if not results:
        return None
    now = utcnow()
    statement = (
        update(cast(Table, Output.__table__))  # Core: the ORM has no bulk update with WHERE
        .where(Output.id == bindparam("oid"), Output.lease_owner == owner,
               Output.status == CellStatus.running)
        .values(status=bindparam("new_status"), text=bindparam("new_text"),
                error_class=bindparam("new_error_class"),
                error_message=bindparam("new_error_message"),
                tokens_in=bindparam("new_tokens_in"), tokens_out=bindparam("new_tokens_out"),
                cost_micros=bindparam("new_cost"), latency_ms=bindparam("new_latency"),
                ttft_ms=bindparam("new_ttft"), cached=bindparam("new_cached"),
                raw_request=bindparam("new_raw_request", type_=_JSON),
                raw_response=bindparam("new_raw_response", type_=_JSON),
                # the claim counted one attempt; retries add theirs
                attempts=Output.attempts + bindparam("more_attempts"),
                finished_at=now, lease_until=None)
    )
    session.execute(statement, [  # one executemany for the whole batch
        {"oid": r.output_id, "new_status": CellStatus.succeeded if r.ok else CellStatus.failed,
         "new_text": r.text, "new_error_class": r.error_class,
         "new_error_message": r.error_message, "new_tokens_in": r.tokens_in,
         "new_tokens_out": r.tokens_out, "new_cost": r.cost_micros,
         "new_latency": r.latency_ms, "new_ttft": r.ttft_ms, "new_cached": r.cached,
         "new_raw_request": r.raw_request, "new_raw_response": r.raw_response,
         "more_attempts": max(r.calls - 1, 0)} for r in results])
    _cache_writes(session, results)
    run = refresh_counts(session, run_id)
    session.commit()
    return run


def refresh_counts(session: Session, run_id: int) -> Run:
    counts = dict(session.execute(select(Output.status, func.count())
                                  .where(Output.run_id == run_id).group_by(Output.status)).all())
    run = session.get(Run, run_id)
    if run is None:
        raise NotFound("Run not found")
    run.succeeded = counts.get(CellStatus.succeeded, 0)
    run.failed = counts.get(CellStatus.failed, 0)
    return run


def finish_if_done(session: Session, run_id: int) -> Run | None:
    """Close the run when no cell is left to do; returns it only on that transition."""
    open_cells = session.scalar(select(func.count()).where(
        Output.run_id == run_id, Output.status.in_([CellStatus.pending, CellStatus.running])))
    run = refresh_counts(session, run_id)
    if open_cells or RunStatus(run.status) in TERMINAL:
        session.commit()
        return None
    status = (RunStatus.completed if run.failed == 0
              else RunStatus.failed if run.succeeded == 0 else RunStatus.partial)
    finished_at = utcnow()
    moved = session.execute(update(Run).where(Run.id == run_id, Run.status == RunStatus.running)
                            .values(status=status, finished_at=finished_at,
                                    succeeded=run.succeeded, failed=run.failed))
    session.commit()
    if not getattr(moved, "rowcount", 0):
        return None  # another worker closed it first
    session.refresh(run)
    return run


def progress(run: Run) -> dict[str, Any]:
    return {"run_id": run.id, "status": run.status, "total": run.total,
            "succeeded": run.succeeded, "failed": run.failed}
