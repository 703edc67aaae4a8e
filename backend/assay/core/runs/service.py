"""Runs: plan every cell up front, claim cells under a lease, record results once, finish."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Any, cast

from sqlalchemy import JSON, Table, bindparam, case, func, null, or_, select, update
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Session
from sqlalchemy.sql.elements import ColumnElement

from assay.core import bulk, ledger
from assay.core.audit_text import money
from assay.core.base import utcnow
from assay.core.datasets.models import Case
from assay.core.errors import DomainError, NotFound
from assay.core.llm.models import Credential, ModelConfig
from assay.core.llm.secrets import credential_key
from assay.core.pagination import Listing, Page, paginate
from assay.core.projects.models import Project
from assay.core.projects.settings import DEFAULT_MAX_RETRIES
from assay.core.prompts.models import PromptVersion
from assay.core.reports import rollups
from assay.core.retrieval import rag_run
from assay.core.runs import budget, judge_spend, rendering
from assay.core.runs.control import BUDGET_SKIPPED, transition
from assay.core.runs.judge_spend import judge_cost
from assay.core.runs.locks import for_update, lock_run
from assay.core.runs.models import TERMINAL, CellStatus, Output, Run, RunStatus, RunTarget
from assay.core.scoring.apply import CellScore, insert_scores, score_row
from assay.providers import cache as response_cache
from assay.providers.cache import Hit
from assay.providers.registry import api_key_for


def get_run(session: Session, project: Project, run_id: int) -> Run:
    run = session.execute(_RUN, {"run_id": run_id, "project_id": project.id}).scalar()
    if run is None:
        raise NotFound("Run not found")
    return run


# built once: a run page reads it on every request (session.get built its own each time,
# a sixth of reading an output in full)
_RUN = select(Run).where(Run.id == bindparam("run_id"), Run.project_id == bindparam("project_id"))


def list_runs(session: Session, project: Project, page: int, page_size: int,
              status: str | None = None) -> Page[Any]:
    return paginate(session, runs_listing(status), page, page_size,
                    params={"project_id": project.id})


def runs_listing(status: str | None) -> Listing:
    """The runs list's statements (newest first), for a project bound as `project_id`."""
    return _runs(None if status is None else RunStatus(status))


@lru_cache(maxsize=32)  # a few shapes; a value outside them is refused or finds nothing
def _runs(status: RunStatus | None) -> Listing:
    stmt = select(Run).where(Run.project_id == bindparam("project_id")).order_by(Run.id.desc())
    return Listing.of(stmt if status is None else stmt.where(Run.status == status))


def run_concurrency(session: Session, run_id: int, default: int) -> int:
    """Calls of this run in flight at once, over all its shards and workers."""
    run = session.get(Run, run_id)
    chosen = (run.settings or {}).get("concurrency") if run else None
    return max(1, int(chosen or default))


def call_timeout(session: Session, run_id: int, default: float) -> float:
    """Seconds one attempt of a call may take, wall clock."""
    run = session.get(Run, run_id)
    chosen = (run.settings or {}).get("timeout_s") if run else None
    return float(chosen or default)


def call_retries(session: Session, run_id: int) -> int:
    """Retries of a transient failure per call of this run (runs planned before retries
    were a setting: the default)."""
    run = session.get(Run, run_id)
    chosen = (run.settings or {}).get("max_retries") if run else None
    return DEFAULT_MAX_RETRIES if chosen is None else int(chosen)


def start_run(session: Session, run_id: int) -> bool:
    """pending -> running; True when this call made the transition."""
    moved = transition(session, run_id, RunStatus.running, sources=[RunStatus.pending],
                       started_at=utcnow())
    session.commit()
    return moved


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
    case_input: dict[str, Any] = field(default_factory=dict)  # for the scorers
    expected: dict[str, Any] | None = None
    turn: int = 0
    attempt: int = 0  # the claim's count of attempts on this cell
    taken_from: str | None = None  # the shard whose expired lease this claim took over
    ceiling: int | None = None  # the credential's calls in flight over every run, if set
    retrieved: list[dict[str, Any]] | None = None  # a RAG run's: the chunks in its prompt


def resolve_keys(credentials: list[Credential],
                 master: str) -> dict[int, tuple[str | None, str | None]]:
    """Credential id -> (key, why it could not be had)."""
    out: dict[int, tuple[str | None, str | None]] = {}
    for credential in credentials:
        try:
            key = credential_key(master, credential)
            out[credential.id] = (api_key_for(credential.kind, key), None)
        except DomainError as exc:
            out[credential.id] = (None, exc.message)
    return out


@dataclass(frozen=True)
class Claim:
    """What one claim got: cells to run, or why there are none."""

    cells: list[Cell]
    waiting: bool = False  # no room in the caps now, or another shard won the race: look again
    skipped: int = 0  # cells the caps can never pay for, skipped: claim again at once


# The engine's sessions hold no loaded rows to keep in step with its bulk UPDATEs: skipping
# SQLAlchemy's synchronisation saves a RETURNING and an identity-map pass per statement.
NO_SYNC = {"synchronize_session": False}


def _cells_of(session: Session, run_id: int, leases: dict[int, tuple[int, str | None]],
              secret_key: str) -> list[Cell]:
    """Claimed rows as self-contained cells: messages rendered, params merged, keys resolved,
    cached replies looked up. `leases`: output id -> (attempt, the shard taken over from)."""
    ids = sorted(leases)
    rows = session.execute(
        select(Output.id, Output.repeat, Output.turn, Case.input, RunTarget.model_id,
               RunTarget.params, RunTarget.prompt_version_id, Case.expected, RunTarget.id)
        .join(Case, Case.id == Output.case_id).join(RunTarget, RunTarget.id == Output.target_id)
        .where(bulk.any_of(Output.id, ids, session.connection())).order_by(Output.id)).all()
    settings = session.scalar(select(Run.settings).where(Run.id == run_id)) or {}
    history = int(settings.get("max_history_pairs") or rendering.DEFAULT_HISTORY_PAIRS)
    prompts = {v.id: rendering.parts_of(v) for v in session.scalars(select(PromptVersion).where(
        PromptVersion.id.in_({row.prompt_version_id for row in rows} - {None})))}
    models = {m.id: m for m in session.scalars(select(ModelConfig).where(
        ModelConfig.id.in_({row.model_id for row in rows})))}
    keys = resolve_keys(list({m.credential.id: m.credential for m in models.values()}.values()),
                 secret_key)
    use_cache, stream = settings.get("cache", True) is not False, bool(settings.get("stream"))
    rag = settings.get("rag")
    given: dict[int, list[dict[str, Any]]] = {}
    cells = []
    per_target: dict[int, tuple[dict[str, Any], Any]] = {}  # params, cache key prefix
    for oid, repeat, turn, case_input, model_id, overrides, prompt_id, expected, target_id \
            in rows:
        model = models[model_id]
        credential = model.credential
        if target_id not in per_target:  # hashed once per target, not per cell
            params = {**(model.params or {}), **(overrides or {})}
            parts = prompts.get(prompt_id)
            if parts is not None and parts.tools:  # the prompt's tools go with each call
                params["tools"] = [dict(t) for t in parts.tools]
            prefix = response_cache.key_prefix(
                credential.kind, credential.base_url, model.model, params, model.project_id) \
                if use_cache and response_cache.is_deterministic(params) else None
            per_target[target_id] = (params, prefix)
        params, prefix = per_target[target_id]
        key, key_error = keys[credential.id]
        messages = rendering.cell_messages(case_input, prompts.get(prompt_id), turn, history)
        retrieved = None
        if rag:
            messages, retrieved = rag_run.augment(session, rag, messages)
            given[oid] = retrieved
        cache_key = None if prefix is None else response_cache.keyed(prefix, messages, repeat)
        cells.append(Cell(
            output_id=oid, repeat=repeat, messages=messages, model=model.model,
            kind=credential.kind, base_url=credential.base_url,
            config=dict(credential.config or {}), credential_id=credential.id, params=params,
            price_in=model.input_price_per_mtok_micros,
            price_out=model.output_price_per_mtok_micros, api_key=key, key_error=key_error,
            stream=stream, cache_key=cache_key, case_input=case_input or {},
            expected=expected, turn=turn, attempt=leases[oid][0],
            taken_from=leases[oid][1], ceiling=credential.concurrency_ceiling,
            retrieved=retrieved))
    if given:  # kept with the output whatever the call does: what the prompt was given
        session.execute(update(_OUTPUTS).where(_OUTPUTS.c.id == bindparam("_id"))
                        .values(retrieved=bindparam("_retrieved")),
                        [{"_id": oid, "_retrieved": chunks} for oid, chunks in given.items()],
                        execution_options=NO_SYNC)
    hits = response_cache.lookup(session, [c.cache_key for c in cells if c.cache_key])
    return [replace(c, cache_hit=hits[c.cache_key]) if c.cache_key in hits else c
            for c in cells]


JudgeBound = Callable[[Cell], int]  # the most judging a cell's reply can cost


def _max_cost(cell: Cell, judging: JudgeBound | None) -> int:
    """The most a cell can cost: its call (none for a cached reply) and its judges."""
    if cell.key_error is not None:  # fails without a call, so nothing is judged either
        return 0
    call = 0 if cell.cache_hit is not None else budget.max_call_cost(
        cell.messages, cell.model, cell.params, cell.price_in, cell.price_out)
    return call + (judging(cell) if judging is not None else 0)


def _reserve(session: Session, run_id: int, cells: list[Cell], held: dict[int, int],
             judging: JudgeBound | None = None) -> tuple[list[Cell], Claim | None]:
    """Reserve the maximum cost (call and judges) of as many `cells` (in order) as the run's
    and project's caps allow. `held`: what each claimed row already had reserved (a lease
    taken over from a dead worker), released here; the others go back to pending. Returns
    (kept, the claim to return when nothing could be kept)."""
    run_row = session.execute(select(  # locked by the claim already
        Run.budget_micros, Run.spent_micros, Run.reserved_micros, Run.project_id)
        .where(Run.id == run_id)).one()
    project_row = session.execute(for_update(session, select(
        Project.budget_micros, Project.spent_micros, Project.reserved_micros)
        .where(Project.id == run_row.project_id))).one()
    caps = [(run_row.budget_micros, run_row.spent_micros, run_row.reserved_micros),
            (project_row.budget_micros, project_row.spent_micros, project_row.reserved_micros)]
    released = sum(held.values())
    space = budget.room(caps)
    kept: list[Cell] = []
    amounts: dict[int, int] = {}
    total = 0
    given_back: list[Cell] = []  # may fit once reservations in flight are settled
    never: list[tuple[Cell, int]] = []  # cannot fit whatever is settled: skipped
    for cell in cells:
        amount = _max_cost(cell, judging) if space.now is not None else 0
        if space.fits(total + amount - released):
            kept.append(cell)
            amounts[cell.output_id] = amount
            total += amount
        elif space.could_ever_fit(amount):
            given_back.append(cell)
        else:  # a dearer cell than the budget can pay for: the cheaper ones still run
            never.append((cell, amount))
    # one statement for the claim, not one per cell (the rows are locked by the claim)
    bulk.update_by_id(session.connection(), _OUTPUTS, [
        {"id": oid, "reserved_micros": amount} for oid, amount in amounts.items()
        if amount or held.get(oid)])
    if given_back:
        session.execute(update(Output).where(Output.id.in_([c.output_id for c in given_back]))
                        .values(status=CellStatus.pending, lease_owner=None, lease_until=None,
                                reserved_micros=0, attempts=Output.attempts - 1),
                        execution_options=NO_SYNC)
    delta = total - released
    if delta:
        session.execute(update(Run).where(Run.id == run_id)
                        .values(reserved_micros=Run.reserved_micros + delta),
                        execution_options=NO_SYNC)
        session.execute(update(Project).where(Project.id == run_row.project_id)
                        .values(reserved_micros=Project.reserved_micros + delta),
                        execution_options=NO_SYNC)
    if never:
        _skip_for_budget(session, run_id, never, max(space.ever or 0, 0))
    if kept:
        return kept, None
    if given_back:
        return [], Claim([], waiting=True)
    return [], Claim([], skipped=len(never))


def budget_reason(need: int, left: int) -> str:
    """Why a cell was skipped for the budget, in dollars."""
    return (f"This call may cost up to {money(need)} and the budget has {money(left)} left")


def _skip_for_budget(session: Session, run_id: int, cells: list[tuple[Cell, int]],
                     left: int) -> None:
    """Claimed cells no budget left can pay for: skipped (never sent), each with its reason,
    the run's and targets' skipped counters moved; the claim's attempt given back. The run
    goes on with the cells that fit, and ends as budget_exceeded (finish_if_done)."""
    rows = [{"id": cell.output_id, "reason": budget_reason(need, left)}
            for cell, need in cells]
    session.execute(
        update(_OUTPUTS).where(_OUTPUTS.c.id == bindparam("_id"))
        .values(status=CellStatus.skipped, error_class=BUDGET_SKIPPED,
                error_message=bindparam("_reason"), finished_at=utcnow(), lease_owner=None,
                lease_until=None, reserved_micros=0, attempts=_OUTPUTS.c.attempts - 1),
        [{"_id": row["id"], "_reason": row["reason"]} for row in rows],
        execution_options=NO_SYNC)
    per_target = Counter(target for (target,) in session.execute(
        select(Output.target_id).where(Output.id.in_([row["id"] for row in rows]))))
    for target_id, count in sorted(per_target.items()):
        session.execute(update(RunTarget).where(RunTarget.id == target_id)
                        .values(skipped=RunTarget.skipped + count), execution_options=NO_SYNC)
    session.execute(update(Run).where(Run.id == run_id)
                    .values(skipped=Run.skipped + len(rows)), execution_options=NO_SYNC)


def claim_cells(session: Session, run_id: int, owner: str, limit: int, lease: timedelta,
                secret_key: str, judging: JudgeBound | None = None) -> Claim:
    """Lease up to `limit` pending (or lease-expired) cells of a running run to `owner`,
    with their keys resolved, cached replies looked up and maximum cost (with `judging`,
    their judges' too) reserved against the caps. One transaction: a cell is leased and
    reserved together, or not at all."""
    now = utcnow()
    # The run row is locked first (PostgreSQL), so a pause or cancel waits for claims in
    # progress and no claim starts after it: once it commits, nothing new is claimed.
    if session.scalar(for_update(session, select(Run.status).where(Run.id == run_id))) != (
            RunStatus.running):
        session.commit()
        return Claim([])
    claimable = or_(Output.status == CellStatus.pending,
                    (Output.status == CellStatus.running) & (Output.lease_until < now))
    # a running row here has an expired lease: its owner is who the claim takes over from
    candidates = (select(Output.id, Output.status, Output.lease_owner)
                  .where(Output.run_id == run_id, claimable).order_by(Output.id).limit(limit))
    if session.get_bind().dialect.name == "postgresql":
        candidates = candidates.with_for_update(skip_locked=True)
    previous = {oid: owner if state == CellStatus.running else None
                for oid, state, owner in session.execute(candidates)}
    ids = list(previous)
    if not ids:
        session.commit()
        return Claim([])
    # Checked again by the UPDATE itself: on SQLite (no SKIP LOCKED, no row locks) another
    # worker may have claimed some of these ids since the SELECT, or the run been paused.
    still_running = select(Run.id).where(Run.id == run_id, Run.status == RunStatus.running)
    claimed = session.connection().execute(  # Core: the ORM adds nothing here
        update(cast(Table, Output.__table__))
        .where(bulk.any_of(Output.id, ids, session.connection()), claimable,
               Output.run_id.in_(still_running))
        .values(status=CellStatus.running, lease_owner=owner, lease_until=now + lease,
                attempts=Output.attempts + 1)
        .returning(Output.id, Output.reserved_micros, Output.attempts)).all()
    if not claimed:  # another shard took them first (SQLite): there may be more, look again
        session.commit()
        return Claim([], waiting=True)
    held = {oid: reserved for oid, reserved, _ in claimed if reserved}
    cells = _cells_of(session, run_id, {oid: (attempts, previous[oid])
                                        for oid, _, attempts in claimed}, secret_key)
    kept, stop = _reserve(session, run_id, cells, held, judging)
    session.commit()
    return stop or Claim(kept)


def renew_leases(session: Session, owner: str, output_ids: list[int], lease: timedelta) -> None:
    """Keep the leases of cells still in flight, so no other worker takes them over."""
    for chunk in range(0, len(output_ids), 1000):
        session.execute(update(Output).where(
            bulk.any_of(Output.id, output_ids[chunk:chunk + 1000], session.connection()),
            Output.lease_owner == owner,
            Output.status == CellStatus.running).values(lease_until=utcnow() + lease),
            execution_options=NO_SYNC)
    session.commit()


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
    scores: tuple[CellScore, ...] = ()  # what the run's scorers made of a reply
    # the judge calls that answered for a reply whose other judges a stop cut (so no
    # scores): billed by the provider, so charged to the output and on the ledger
    judged: ledger.Tab | None = None


def judged_micros(r: CellResult) -> int | None:
    """What the judges of a result cost: its scores', or those a stop left unscored."""
    if r.scores or r.judged is None or not r.judged.calls:
        return judge_cost(r.scores)
    return r.judged.spent_micros


_JSON = JSON(none_as_null=True)


def _cache_writes(session: Session, results: list[CellResult]) -> None:
    hits = [r.cache_key for r in results if r.cached and r.cache_key]
    response_cache.count_hits(session, hits)
    response_cache.store(session, [
        response_cache.Entry(r.cache_key, r.provider, r.model, r.text or "", r.tokens_in,
                             r.tokens_out, r.raw_response if isinstance(r.raw_response, dict)
                             else {})
        for r in results if r.ok and not r.cached and r.cache_key])


def _output_row(r: CellResult) -> dict[str, Any]:
    status = CellStatus.succeeded if r.ok else CellStatus.failed
    return {"oid": r.output_id, "new_status": status.value,
            "new_text": r.text, "new_error_class": r.error_class,
            "new_error_message": r.error_message, "new_tokens_in": r.tokens_in,
            "new_tokens_out": r.tokens_out, "new_cost": r.cost_micros,
            "new_judged": judged_micros(r), "new_latency": r.latency_ms,
            "new_ttft": r.ttft_ms, "new_cached": r.cached, "new_raw_request": r.raw_request,
            "new_raw_response": r.raw_response, "more_attempts": max(r.calls - 1, 0)}


_OUTPUTS = cast(Table, Output.__table__)
_C = _OUTPUTS.c
# the columns of `_output_row`, typed (for PostgreSQL's json_to_recordset)
_ROW_TYPES: dict[str, Any] = {
    "oid": _C.id.type, "new_status": _C.status.type, "new_text": _C.text.type,
    "new_error_class": _C.error_class.type, "new_error_message": _C.error_message.type,
    "new_tokens_in": _C.tokens_in.type, "new_tokens_out": _C.tokens_out.type,
    "new_cost": _C.cost_micros.type, "new_judged": _C.judge_cost_micros.type,
    "new_latency": _C.latency_ms.type, "new_ttft": _C.ttft_ms.type, "new_cached": _C.cached.type,
    "new_raw_request": _JSON, "new_raw_response": _JSON, "more_attempts": _C.attempts.type}


def _sqlite_write() -> Any:
    """The executemany of `_write_outputs` on SQLite: every value a parameter of the row."""
    return (
        update(_OUTPUTS).where(_C.id == bindparam("oid"),
                               _C.lease_owner == bindparam("owner"),
                               _C.status == bindparam("running", type_=_C.status.type))
        .values(status=bindparam("new_status"), text=bindparam("new_text"),
                error_class=bindparam("new_error_class"),
                error_message=bindparam("new_error_message"),
                tokens_in=bindparam("new_tokens_in"), tokens_out=bindparam("new_tokens_out"),
                cost_micros=bindparam("new_cost"), judge_cost_micros=bindparam("new_judged"),
                latency_ms=bindparam("new_latency"),
                ttft_ms=bindparam("new_ttft"), cached=bindparam("new_cached"),
                raw_request=bindparam("new_raw_request", type_=_JSON),
                raw_response=bindparam("new_raw_response", type_=_JSON),
                attempts=_C.attempts + bindparam("more_attempts"),
                finished_at=bindparam("now", type_=_C.finished_at.type), lease_until=null(),
                lease_owner=bindparam("mark")))


def _mine() -> ColumnElement[bool]:
    """The cell is still leased to the shard writing it (parameter `owner`)."""
    return (_C.lease_owner == bindparam("owner")) & (_C.status == CellStatus.running)


def _locked_mine() -> Any:
    """PostgreSQL: the cells of `ids` still the writer's, locked, with what they reserved."""
    return (select(_C.id, _C.target_id, _C.reserved_micros, _C.case_id)
            .where(bulk.any_param(_C.id, "ids"), _mine()).order_by(_C.id).with_for_update())


def _postgres_write() -> Any:
    """PostgreSQL: the batch's rows (`bulk.document`) onto the writer's cells."""
    rows = bulk.rows_table(_ROW_TYPES)
    return update(_OUTPUTS).where(_C.id == rows.c.oid, _mine()).values(
        status=rows.c.new_status, text=rows.c.new_text,
        error_class=rows.c.new_error_class, error_message=rows.c.new_error_message,
        tokens_in=rows.c.new_tokens_in, tokens_out=rows.c.new_tokens_out,
        cost_micros=rows.c.new_cost, judge_cost_micros=rows.c.new_judged,
        latency_ms=rows.c.new_latency, ttft_ms=rows.c.new_ttft,
        cached=rows.c.new_cached, raw_request=rows.c.new_raw_request,
        raw_response=rows.c.new_raw_response,
        # the claim counted one attempt; retries add theirs
        attempts=_C.attempts + rows.c.more_attempts,
        finished_at=bindparam("now", type_=_C.finished_at.type), lease_until=None,
        lease_owner=None, reserved_micros=0)


def _write_outputs(connection: Connection, owner: str, results: list[CellResult], batch: int,
                   now: datetime) -> Sequence[Any]:
    """Write the results of cells still leased to `owner` (a cell whose lease another worker
    took over is left to it), their reservations zeroed; returns (id, target_id,
    reserved_micros, case_id) of each row written, with what it had reserved."""
    ids = [r.output_id for r in results]
    if bulk.on_postgres(connection):
        # lock the rows and read what they reserved, then one UPDATE ... FROM
        # json_to_recordset(...) for the whole batch (an executemany ran a statement per row)
        written = connection.execute(bulk.built("outputs.mine", _locked_mine), {
            "ids": ids, "owner": owner}).all()
        kept = {row.id for row in written}
        if kept:
            connection.execute(bulk.built("outputs.write", _postgres_write), {
                "owner": owner, "now": now, **bulk.document(_ROW_TYPES, [
                    _output_row(r) for r in results if r.output_id in kept])})
        return written
    # SQLite: an executemany (in-process, cheap) that tags the rows it wrote with a mark,
    # then what they had reserved is read back and zeroed
    mark = f"{owner}:{batch}"
    fixed = {"owner": owner, "running": CellStatus.running.value, "mark": mark, "now": now}
    bulk.execute_many(connection, "outputs.write", _sqlite_write,
                      [{**_output_row(r), **fixed} for r in results])
    written = connection.execute(
        select(_C.id, _C.target_id, _C.reserved_micros, _C.case_id)
        .where(_C.id.in_(ids), _C.lease_owner == mark)).all()
    if written:
        connection.execute(update(_OUTPUTS).where(_C.id.in_([row.id for row in written]))
                           .values(lease_owner=None, reserved_micros=0))
    return written


@dataclass(frozen=True)
class Recorded:
    """What a batch moved, for the events the shard publishes."""

    cells: int
    alert: bool  # this batch crossed the alert threshold of the run's or project's cap


def record_results(session: Session, run_id: int, owner: str,
                   results: list[CellResult], batch: int = 0) -> Recorded:
    """Write finished cells and settle their cost, in one transaction: each output lands once
    (a cell whose lease another worker took over is left to it), its reservation is released
    and its actual cost and tokens are added to the target's, run's and project's counters.
    Its scores and fresh deterministic replies (response cache) land in the same
    transaction."""
    if not results:
        return Recorded(0, False)
    now = utcnow()
    # the shard's own leased cells first, the run row after: the run stays locked only
    # while the counters move, so claims (which lock it whole) wait less (locks.py)
    written = _write_outputs(session.connection(), owner, results, batch, now)
    lock_run(session, run_id)
    by_id = {r.output_id: r for r in results}
    tallies: dict[int, rollups.Tally] = {}
    latencies: Counter[tuple[int, int]] = Counter()
    for oid, target_id, reserved, _ in written:
        r = by_id[oid]
        tallies.setdefault(target_id, rollups.Tally()).add(r.ok, r.cost_micros, reserved,
                                                      r.tokens_in, r.tokens_out,
                                                      judged_micros(r))
        if r.ok and not r.cached and r.latency_ms is not None:
            latencies[(target_id, r.latency_ms)] += 1
    alert, project_id = _settle(session, run_id, tallies) if tallies else (False, 0)
    rollups.add_finished(session, now.date(), tallies, latencies)
    # the judges' calls onto the ledger by judge model (the cells' own are target_days'):
    # a few rows a batch, and none for a run without judges
    judge_spend.record_judges(session, project_id, run_id, "judges", [
        score for row in written for score in by_id[row.id].scores], now.date(),
        [t for row in written if (t := by_id[row.id].judged) is not None])
    _cache_writes(session, [by_id[row.id] for row in written])
    insert_scores(session, [score_row(run_id, row.id, row.target_id, row.case_id, score,
                                      now=now) for row in written
                            for score in by_id[row.id].scores])
    session.commit()
    return Recorded(len(written), alert)


def _settle(session: Session, run_id: int, tallies: dict[int, rollups.Tally]
            ) -> tuple[bool, int]:
    """Move the counters (targets, run, project: always in this order) by what was written:
    a target's spend is its model's calls; the run's and project's add the judges'.
    (True when the run's or the project's spend crossed its alert threshold just now (the
    run's `alerted_at` makes that happen once per run), the run's project)."""
    total = rollups.Tally()  # the run row is locked already (lock_run)
    for target_id, t in sorted(tallies.items()):
        session.execute(update(RunTarget).where(RunTarget.id == target_id).values(
            succeeded=RunTarget.succeeded + t.succeeded, failed=RunTarget.failed + t.failed,
            spent_micros=RunTarget.spent_micros + t.spent,
            tokens_in=RunTarget.tokens_in + t.tokens_in,
            tokens_out=RunTarget.tokens_out + t.tokens_out), execution_options=NO_SYNC)
        for name in ("succeeded", "failed", "spent", "judged", "released", "tokens_in",
                     "tokens_out"):
            setattr(total, name, getattr(total, name) + getattr(t, name))
    run = session.execute(
        update(Run).where(Run.id == run_id).values(
            succeeded=Run.succeeded + total.succeeded, failed=Run.failed + total.failed,
            spent_micros=Run.spent_micros + total.spent + total.judged,
            judge_spent_micros=Run.judge_spent_micros + total.judged,
            reserved_micros=Run.reserved_micros - total.released,
            tokens_in=Run.tokens_in + total.tokens_in,
            tokens_out=Run.tokens_out + total.tokens_out)
        .returning(Run.project_id, Run.budget_micros, Run.spent_micros, Run.alert_threshold,
                   Run.alerted_at), execution_options=NO_SYNC).one()
    project = None
    spent = total.spent + total.judged
    if spent or total.released:
        project = session.execute(
            update(Project).where(Project.id == run.project_id).values(
                spent_micros=Project.spent_micros + spent,
                reserved_micros=Project.reserved_micros - total.released)
            .returning(Project.budget_micros, Project.spent_micros, Project.alert_threshold),
            execution_options=NO_SYNC).one()
    if run.alerted_at is not None or not spent:
        return False, run.project_id
    crossed = budget.crossed_alert(run.budget_micros, run.spent_micros, run.alert_threshold) or (
        project is not None and budget.crossed_alert(project.budget_micros,
                                                     project.spent_micros,
                                                     project.alert_threshold))
    if not crossed:
        return False, run.project_id
    moved = session.execute(update(Run).where(Run.id == run_id, Run.alerted_at.is_(None))
                            .values(alerted_at=utcnow()))
    return bool(getattr(moved, "rowcount", 0)), run.project_id


def skip_open_cells(session: Session, run_id: int, error_class: str, message: str) -> int:
    """Pending cells -> skipped (never sent), with the run's and targets' counters moved in
    the same transaction. Cells in flight finish and are recorded as usual. Returns how many
    were skipped; the caller commits."""
    lock_run(session, run_id)
    moved = session.execute(
        update(Output).where(Output.run_id == run_id, Output.status == CellStatus.pending)
        .values(status=CellStatus.skipped, error_class=error_class, error_message=message,
                finished_at=utcnow(), lease_owner=None, lease_until=None)
        .returning(Output.target_id))
    per_target = Counter(target_id for (target_id,) in moved)
    skipped = sum(per_target.values())
    if not skipped:
        return 0
    for target_id, count in per_target.items():
        session.execute(update(RunTarget).where(RunTarget.id == target_id)
                        .values(skipped=RunTarget.skipped + count))
    session.execute(update(Run).where(Run.id == run_id).values(skipped=Run.skipped + skipped))
    return skipped


def skip_expired_cells(session: Session, run_id: int, error_class: str, message: str) -> int:
    """Cells of a stopped (cancelled, out of budget) run still leased to a worker that died:
    skipped, with what they had reserved released. Their worker, if it was only slow, finds
    the lease gone and its write is dropped. The caller commits."""
    lock_run(session, run_id)
    # a cell locked already is its shard's batch being written (locks.py): it lands there
    rows = session.execute(for_update(session, select(
        Output.id, Output.target_id, Output.reserved_micros).where(
        Output.run_id == run_id, Output.status == CellStatus.running,
        Output.lease_until < utcnow()), skip_locked=True)).all()
    if not rows:
        return 0
    session.execute(update(Output).where(Output.id.in_([row.id for row in rows])).values(
        status=CellStatus.skipped, error_class=error_class, error_message=message,
        finished_at=utcnow(), lease_owner=None, lease_until=None, reserved_micros=0))
    per_target = Counter(row.target_id for row in rows)
    for target_id, count in sorted(per_target.items()):
        session.execute(update(RunTarget).where(RunTarget.id == target_id)
                        .values(skipped=RunTarget.skipped + count))
    released = sum(row.reserved_micros for row in rows)
    project_id = session.execute(
        update(Run).where(Run.id == run_id).values(
            skipped=Run.skipped + len(rows), reserved_micros=Run.reserved_micros - released)
        .returning(Run.project_id)).scalar_one()
    if released:
        session.execute(update(Project).where(Project.id == project_id)
                        .values(reserved_micros=Project.reserved_micros - released))
    return len(rows)


def give_back(session: Session, run_id: int, owner: str, sent: Collection[int],
              unsent: Collection[int]) -> int:
    """Cells `owner` claimed that got no reply: their calls aborted by a stop (`sent`), or
    never started (`unsent`). Their reservations are released (nothing was billed) and they
    are skipped when the run has ended (cancelled), else back to pending, for a resume to
    run once. The run's status is read under its lock, so a cancel that lands meanwhile
    never leaves a pending cell behind. Returns how many; commits."""
    ids = [*sent, *unsent]
    if not ids:
        return 0
    if session.get_bind().dialect.name == "postgresql":
        lock_run(session, run_id)
    else:  # SQLite: a first write opens the write transaction before the status is read
        session.execute(update(Run).where(Run.id == run_id).values(skipped=Run.skipped),
                        execution_options=NO_SYNC)
    run = session.execute(select(Run.status, Run.error, Run.project_id)
                          .where(Run.id == run_id)).one()
    rows = session.execute(for_update(session, select(
        Output.id, Output.target_id, Output.reserved_micros).where(
        bulk.any_of(Output.id, ids, session.connection()), Output.lease_owner == owner,
        Output.status == CellStatus.running))).all()
    mine = [row.id for row in rows]
    if not mine:
        session.commit()
        return 0
    released = sum(row.reserved_micros for row in rows)
    ended = RunStatus(run.status) in TERMINAL
    if ended:
        error_class = "cancelled" if run.status == RunStatus.cancelled else str(run.status)
        session.execute(update(Output).where(Output.id.in_(mine)).values(
            status=CellStatus.skipped, error_class=error_class,
            error_message=run.error or "Stopped before its reply", finished_at=utcnow(),
            lease_owner=None, lease_until=None, reserved_micros=0), execution_options=NO_SYNC)
        for target_id, count in sorted(Counter(row.target_id for row in rows).items()):
            session.execute(update(RunTarget).where(RunTarget.id == target_id)
                            .values(skipped=RunTarget.skipped + count),
                            execution_options=NO_SYNC)
    else:
        never = set(unsent)
        for chosen, back in ((sorted(i for i in mine if i in never), 1),
                             (sorted(i for i in mine if i not in never), 0)):
            if chosen:  # a call never sent takes its claim's attempt back
                session.execute(update(Output).where(Output.id.in_(chosen)).values(
                    status=CellStatus.pending, lease_owner=None, lease_until=None,
                    reserved_micros=0, attempts=Output.attempts - back),
                    execution_options=NO_SYNC)
    session.execute(update(Run).where(Run.id == run_id).values(
        skipped=Run.skipped + (len(mine) if ended else 0),
        reserved_micros=Run.reserved_micros - released), execution_options=NO_SYNC)
    if released:
        session.execute(update(Project).where(Project.id == run.project_id)
                        .values(reserved_micros=Project.reserved_micros - released),
                        execution_options=NO_SYNC)
    session.commit()
    return len(mine)


def is_over(session: Session, run_id: int,
            statuses: Collection[RunStatus] = TERMINAL) -> bool:
    """Ended (completed, cancelled, out of budget...: one of `statuses`) with no cell still
    in flight: what a progress stream waits for before it ends, so its last counts are
    final."""
    status = session.scalar(select(Run.status).where(Run.id == run_id))
    if status is None or RunStatus(status) not in statuses:
        return False
    return not session.scalar(select(func.count()).where(
        Output.run_id == run_id, Output.status == CellStatus.running))


def finish_if_done(session: Session, run_id: int) -> Run | None:
    """Close the run when no cell is left to do; returns it only on that transition.

    One statement checks and moves: with a count first, a retry committed between the
    count and the move (failed cells back to pending, the run running again) let a late
    shard of the pass before close the retried run as completed, its cells left pending."""
    open_cells = select(Output.id).where(
        Output.run_id == run_id, Output.status.in_([CellStatus.pending, CellStatus.running]))
    # a cell the budget could not pay for ends the run as out of budget, with its reason
    # (the first such cell's), once the cells that fit have run: a resume reopens them
    priced_out = (select(Output.error_message).where(
        Output.run_id == run_id, Output.status == CellStatus.skipped,
        Output.error_class == BUDGET_SKIPPED).order_by(Output.id).limit(1).scalar_subquery())
    ending = case((priced_out.is_not(None), RunStatus.budget_exceeded.value),
                  (Run.failed == 0, RunStatus.completed.value),
                  (Run.succeeded == 0, RunStatus.failed.value), else_=RunStatus.partial.value)
    moved = session.execute(
        update(Run).where(Run.id == run_id, Run.status == RunStatus.running.value,
                          ~open_cells.exists())
        .values(status=ending, error=func.coalesce(priced_out, Run.error),
                finished_at=utcnow()).execution_options(synchronize_session=False))
    session.commit()
    run = session.get(Run, run_id)
    if run is None:
        raise NotFound("Run not found")
    if not getattr(moved, "rowcount", 0):
        return None  # cells left, already ended (by another shard), or paused
    session.refresh(run)
    return run
