"""The soak's phases on a started stack (stack.py):

1. setup: the users sign up; each makes a project of their own, except `shared` of them,
   who work in one project its owner made and shared with the others as editors; a
   probe user makes a project with a finished run; the fuzzer's user mints its token.
2. before: the probe reads its pages one after another (`probe_rounds` rounds).
3. during, for `seconds`: the users work (users.py), schemathesis fuzzes (fuzz.py), and
   the probe keeps reading.
4. quiesce: every run still going in the users' and the fuzzer's projects is cancelled,
   and the soak waits for them to stop, so that "after" measures an idle server again.
5. after: the probe reads as before; then the pool's checked-out count (polled until it is
   0, for a while: a request may still be ending), and the server's log.

`problems()` says what failed, each with the request behind it; `lines()` the figures.
"""

from __future__ import annotations

import statistics
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from tests.soak.fuzz import Fuzzer, FuzzReport
from tests.soak.stack import LogFindings, PoolReading, SoakStack, read_log
from tests.soak.users import (
    TERMINAL,
    Browser,
    Call,
    Recorder,
    SimulatedUser,
    Workspace,
    close_all,
    make_workspace,
    new_email,
)

LIVE = ("pending", "running", "paused")


@dataclass
class SoakConfig:
    seconds: float = 40.0  # the "during" phase
    users: int = 6
    shared: int = 3  # of the users, how many work in one shared project (0: none)
    probe_rounds: int = 8  # of the probe's reads (PROBE_READS), before and after
    fuzz: bool = True
    fuzz_workers: int = 1
    seed: int = 31


@dataclass
class Percentiles:
    n: int
    p50: float
    p95: float

    @classmethod
    def of(cls, values: list[float]) -> Percentiles:
        if len(values) < 2:
            return cls(len(values), values[0] if values else 0.0, values[0] if values else 0.0)
        return cls(len(values), statistics.median(values),
                   statistics.quantiles(values, n=20, method="inclusive")[18])

    def __str__(self) -> str:
        return f"{self.p50:.1f}/{self.p95:.1f}"


@dataclass
class SoakResult:
    database: str
    config: SoakConfig
    reads: dict[str, Percentiles]
    user_calls: int
    actions: dict[str, int]
    failures: list[Call]  # 5xx and no-response of the users and the probe
    log: LogFindings
    pool: PoolReading
    pool_waited_s: float
    fuzz: FuzzReport | None
    simulation_errors: list[str]
    unfinished_runs: list[str]
    dead: list[str]  # processes of the stack that exited
    phases_s: dict[str, float] = field(default_factory=dict)  # how long each phase took

    @property
    def ratio_p50(self) -> float:
        return self.reads["after"].p50 / max(self.reads["before"].p50, 0.01)

    @property
    def ratio_p95(self) -> float:
        return self.reads["after"].p95 / max(self.reads["before"].p95, 0.01)

    def problems(self, factor: float = 3.0, slack_ms: float = 100.0) -> list[str]:
        """What the soak promises and did not hold. Reads after may be slower than
        before by `factor` plus `slack_ms` (the machine's noise; a pool that leaked
        makes them take 30 s)."""
        found = []
        before, after = self.reads["before"], self.reads["after"]
        if after.p95 > factor * before.p95 + slack_ms or after.p50 > factor * before.p50 + \
                slack_ms:
            found.append(f"reads after are slower than before: p50/p95 {after} ms against "
                         f"{before} ms")
        if self.pool.checked_out not in (None, 0):
            found.append(f"{self.pool.checked_out} pool connections still checked out "
                         f"{self.pool_waited_s:.0f} s after the soak ({self.pool.source}): "
                         + "; ".join(map(str, self.pool.held[:5])))
        if self.log.count_500:
            found.append(f"{self.log.count_500} x 500 in the server's log: "
                         + "; ".join(self.log.server_errors[:10]))
        other_5xx = [line for line in self.log.server_errors
                     if " 500 " not in line and " 503 " not in line]
        if other_5xx:
            found.append("other 5xx in the server's log: " + "; ".join(other_5xx[:10]))
        if self.log.errors:
            found.append(f"{len(self.log.errors)} error records in the server's log: "
                         + " || ".join(self.log.errors[:5]))
        bad = [c for c in self.failures if c.status != 503]
        if bad:
            found.append(f"{len(bad)} requests of the users failed: " + " || ".join(
                f"{c.method} {c.url} -> {c.status or 'no response'} {c.body[:200]} "
                f"(request id {c.request_id}, {c.phase})" for c in bad[:10]))
        if self.fuzz is not None and self.fuzz.server_errors:
            found.append("schemathesis got server errors: " + " || ".join(
                f"{f.request} -> {f.status} {f.body[:200]}" for f in self.fuzz.server_errors[:10]))
        if self.fuzz is not None and not _fuzzer_got_in(self.fuzz):
            found.append(f"schemathesis made no authenticated request ({self.fuzz.statuses}):"
                         f"\n{self.fuzz.output_tail}")
        if self.simulation_errors:
            found.append("the simulated users met answers they could not follow: "
                         + " || ".join(self.simulation_errors[:10]))
        if self.unfinished_runs:
            found.append("runs still going after every run was cancelled: "
                         + ", ".join(self.unfinished_runs))
        if self.dead:
            found.append(f"processes of the stack exited: {self.dead}")
        missing = [name for name, _ in SimulatedUser.ACTIONS if not self.actions.get(name)]
        if missing:
            found.append(f"the users never did {missing} (actions: {self.actions})")
        return found

    def lines(self) -> list[str]:
        c, r = self.config, self.reads
        share = f", {c.shared} sharing one project" if c.shared else ""
        fuzz = " + schemathesis --checks all" if c.fuzz else ""
        done = ", ".join(f"{k} {v}" for k, v in sorted(self.actions.items()))
        out = [f"soak on {self.database}: {c.users} users{share}{fuzz}, {c.seconds:.0f} s",
               f"  reads p50/p95 ms: before {r['before']}, during {r['during']}, after "
               f"{r['after']}; after/before p50 {self.ratio_p50:.2f}, p95 {self.ratio_p95:.2f}",
               f"  users: {self.user_calls} requests ({done}); "
               f"5xx or no response: {len(self.failures)}",
               f"  server log: {sum(self.log.statuses.values())} requests, 5xx "
               f"{self.log.count_5xx} (500: {self.log.count_500}), error records "
               f"{len(self.log.errors)}",
               f"  pool checked out at the end: {self.pool.checked_out} ({self.pool.source})",
               "  phases s: " + ", ".join(f"{k} {v:.0f}" for k, v in self.phases_s.items())]
        if self.fuzz is not None:
            out.append(f"  schemathesis: {self.fuzz.requests} requests, failing checks "
                       f"{self.fuzz.failures or 'none'}, server errors "
                       f"{len(self.fuzz.server_errors)}")
        return out


def _fuzzer_got_in(report: FuzzReport) -> bool:
    authenticated = sum(n for status, n in report.statuses.items() if status not in (401, 403))
    return report.requests > 0 and authenticated > report.requests / 4


PROBE_READS = ("me", "projects", "runs", "run", "outputs", "grid", "datasets")


class Probe:
    """A user of their own reading the same pages over and over: the read latency."""

    def __init__(self, user: Browser, workspace: Workspace, run_id: int):
        base = f"/api/projects/{workspace.project_id}"
        self.user = user
        self.paths = {"me": "/api/auth/me", "projects": "/api/projects",
                      "runs": f"{base}/runs", "run": f"{base}/runs/{run_id}",
                      "outputs": f"{base}/runs/{run_id}/outputs?page=1&page_size=50",
                      "grid": f"{base}/runs/{run_id}/grid?offset=0&limit=50",
                      "datasets": f"{base}/datasets"}

    def round(self) -> None:
        for name in PROBE_READS:
            self.user.call("GET", self.paths[name], f"read {name}")

    def keep_reading(self, stop: threading.Event) -> None:
        while not stop.is_set():
            self.round()
            stop.wait(0.2)


def _finished_run(user: Browser, ws: Workspace, timeout_s: float = 120.0) -> int:
    found = user.json("POST", f"/api/projects/{ws.project_id}/runs", "POST run", json={
        "dataset_id": ws.dataset_id, "targets": [{"model_id": ws.model_id}],
        "scorer_ids": [ws.check_scorer_id, ws.manual_scorer_id], "cache": False})
    if found is None:
        raise RuntimeError("the probe's run could not be created")
    run = int(found["id"])
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        progress = user.json("GET", f"/api/projects/{ws.project_id}/runs/{run}/progress",
                             "GET progress")
        if progress is not None and progress.get("status") in TERMINAL:
            return run
        time.sleep(0.3)
    raise RuntimeError(f"the probe's run {run} did not finish in {timeout_s} s")


def _live_runs(user: Browser, project_ids: list[int],
               deadline: float) -> list[tuple[int, int]]:
    found: list[tuple[int, int]] = []
    for project in project_ids:
        for status in LIVE:
            if time.monotonic() > deadline:  # a server that stopped answering
                return found
            page = user.json("GET", f"/api/projects/{project}/runs?status={status}&page_size=100",
                             "quiesce runs") or {}
            found += [(project, int(run["id"])) for run in page.get("items") or []]
    return found


def _quiesce(owners: list[tuple[Browser, list[int]]], timeout_s: float) -> list[str]:
    """Cancel every run still going in these projects and wait for each to stop; the
    ones that did not, as "project/run status"."""
    deadline = time.monotonic() + timeout_s
    going: list[tuple[Browser, int, int]] = []
    for user, projects in owners:
        for project, run in _live_runs(user, projects, deadline):
            user.call("POST", f"/api/projects/{project}/runs/{run}/cancel", "quiesce cancel")
            going.append((user, project, run))
    left: list[str] = []
    for user, project, run in going:
        status = None
        while time.monotonic() < deadline:
            progress = user.json("GET", f"/api/projects/{project}/runs/{run}/progress",
                                 "quiesce progress")
            status = None if progress is None else progress.get("status")
            if status in TERMINAL:
                break
            time.sleep(0.3)
        if status not in TERMINAL:
            left.append(f"{project}/{run} {status}")
    return left


def _fuzzer_projects(user: Browser) -> list[int]:
    page = user.json("GET", "/api/projects?page_size=100", "quiesce projects") or {}
    return [int(p["id"]) for p in page.get("items") or []]


def soak(stack: SoakStack, config: SoakConfig) -> SoakResult:
    recorder = Recorder()
    browsers: list[Browser] = []

    def browser(who: str) -> Browser:
        found = Browser(stack.api_url, who, recorder)
        browsers.append(found)
        return found

    try:
        return _soak(stack, config, recorder, browser)
    finally:
        close_all(browsers)


def _soak(stack: SoakStack, config: SoakConfig, recorder: Recorder,
          browser: Any) -> SoakResult:
    phases: dict[str, float] = {}
    began = time.monotonic()

    def ended(phase: str) -> None:
        nonlocal began
        phases[phase], began = time.monotonic() - began, time.monotonic()

    users, workspaces = [], []
    emails = [new_email(f"user{i}") for i in range(config.users)]
    for i, email in enumerate(emails):
        user = browser(f"user{i}")
        user.sign_up(email, f"Soak user {i}")
        users.append(user)
    shared: Workspace | None = None
    for i, user in enumerate(users):
        if i < config.shared and shared is not None:
            workspaces.append(shared)
            continue
        ws = make_workspace(user, stack.fake_url, f"Soak {i}")
        if i < config.shared:
            shared = ws
            for member in emails[1:config.shared]:
                user.call("POST", f"/api/projects/{ws.project_id}/members", "POST member",
                          json={"email": member, "role": "editor"})
        workspaces.append(ws)
    probe_user = browser("probe")
    probe_user.sign_up(new_email("probe"), "Soak probe")
    probe_ws = make_workspace(probe_user, stack.fake_url, "Soak probe")
    probe = Probe(probe_user, probe_ws, _finished_run(probe_user, probe_ws))
    fuzz_user = browser("fuzzer")
    fuzz_user.sign_up(new_email("fuzzer"), "Soak fuzzer")
    token = fuzz_user.json("POST", "/api/auth/tokens", "POST token", json={"name": "fuzzer"})

    probe.round()  # warm: the first reads fill caches and connect
    ended("setup")
    recorder.phase = "before"
    for _ in range(config.probe_rounds):
        probe.round()
    ended("before")

    recorder.phase = "during"
    stop = threading.Event()
    locks: dict[int, threading.Lock] = {}
    simulated = [SimulatedUser(user, ws, stop, config.seed + i,
                               locks.setdefault(ws.project_id, threading.Lock()))
                 for i, (user, ws) in enumerate(zip(users, workspaces, strict=True))]
    fuzzer = None
    if config.fuzz and token is not None:
        fuzzer = Fuzzer(stack.api_url, token["token"], config.seconds, stack.workdir,
                        config.fuzz_workers, config.seed)
        fuzzer.start()
    reader = threading.Thread(target=probe.keep_reading, args=(stop,), daemon=True)
    for thread in (*simulated, reader):
        thread.start()
    stop.wait(config.seconds)
    stop.set()
    for thread in (*simulated, reader):
        thread.join(timeout=120)
    fuzz = fuzzer.finish() if fuzzer is not None else None
    ended("during")

    recorder.phase = "quiesce"
    owners = [(user, [ws.project_id]) for user, ws in zip(users, workspaces, strict=True)]
    owners.append((fuzz_user, _fuzzer_projects(fuzz_user)))
    unfinished = _quiesce(owners, timeout_s=60)
    ended("quiesce")

    recorder.phase = "after"
    for _ in range(config.probe_rounds):
        probe.round()
        if sum(1 for c in recorder.calls if c.phase == "after" and
               (c.status == 0 or c.status >= 500)) >= 3:
            break  # the server is not answering: three 30 s failures say enough

    started = time.monotonic()
    pool = stack.pool()
    while pool.checked_out not in (None, 0) and time.monotonic() - started < 20:
        time.sleep(1)
        pool = stack.pool()
    waited = time.monotonic() - started
    ended("after")

    reads = {phase: Percentiles.of([c.ms for c in recorder.calls
                                    if c.phase == phase and c.label.startswith("read ")])
             for phase in ("before", "during", "after")}
    actions: dict[str, int] = {}
    for user in simulated:
        for name, count in user.actions.items():
            actions[name] = actions.get(name, 0) + count
    return SoakResult(
        database=stack.label, config=config, reads=reads,
        user_calls=sum(1 for c in recorder.calls if c.phase == "during"),
        actions=actions, failures=recorder.failures(), log=read_log(stack.log_path("api")),
        pool=pool, pool_waited_s=waited, fuzz=fuzz,
        simulation_errors=[e for user in simulated for e in user.errors],
        unfinished_runs=unfinished, dead=[n for n in stack.procs if n not in stack.alive()],
        phases_s=phases)
