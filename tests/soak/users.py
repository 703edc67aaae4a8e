"""Simulated users: each signs up and in as the SPA does (session cookie, CSRF header on
unsafe methods), then, until told to stop, browses, starts runs and follows their event
stream, reviews outputs with a manual score, downloads exports (some abandoned after the
first bytes, as a closed tab does) and cancels runs in flight. Each has a project of their
own, or works in one the team shares. Every response is recorded (Recorder): its latency
for the figures, and each 5xx or failed request with what was asked."""

from __future__ import annotations

import contextlib
import random
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

PASSWORD = "Soak-password-1!"
TERMINAL = {"completed", "partial", "failed", "cancelled", "budget_exceeded"}
QUESTIONS = [f"Question {i}: what is {i} + {i}, and why?" for i in range(40)]


@dataclass
class Call:
    phase: str
    who: str
    label: str  # "GET run": what the SPA does, for the figures
    method: str
    url: str
    status: int  # 0: no response (a timeout, a reset)
    ms: float
    request_id: str
    body: str  # the start of a 5xx's body, or the transport error


@dataclass
class Recorder:
    phase: str = "setup"
    calls: list[Call] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, call: Call) -> None:
        with self.lock:
            self.calls.append(call)

    def failures(self) -> list[Call]:
        """Calls without a response, and 5xx (a 503 with Retry-After, the server's
        documented answer when it is full, included: the figures count it)."""
        return [c for c in self.calls if c.status == 0 or c.status >= 500]


class Browser:
    """One signed-in person's HTTP client, recording every call."""

    def __init__(self, base_url: str, who: str, recorder: Recorder):
        self.who, self.recorder = who, recorder
        # An idle connection is given up before gunicorn's 2 s keep-alive closes it: reusing
        # one the server is closing at that moment resets the request (a browser retries
        # it; httpx does not), which is the client's race, not the server's fault.
        self.http = httpx.Client(base_url=base_url, timeout=httpx.Timeout(45, connect=10),
                                 limits=httpx.Limits(keepalive_expiry=1.0))

    def call(self, method: str, path: str, label: str, **kwargs: Any) -> httpx.Response | None:
        started = time.perf_counter()
        try:
            reply = self.http.request(method, path, **kwargs)
        except httpx.HTTPError as error:
            self._record(label, method, path, 0, started, "", f"{type(error).__name__}: {error}")
            return None
        self._record(label, method, path, reply.status_code, started,
                     reply.headers.get("X-Request-ID", ""),
                     reply.text[:300] if reply.status_code >= 500 else "")
        return reply

    def json(self, method: str, path: str, label: str, **kwargs: Any) -> Any:
        """The body of a 2xx answer, else None (the figures have the status)."""
        reply = self.call(method, path, label, **kwargs)
        if reply is None or not reply.is_success:
            return None
        return reply.json()

    def stream(self, path: str, label: str, keep: Callable[[str], bool],
               timeout_s: float) -> int:
        """GET a streamed body line by line while `keep(line)` and for at most `timeout_s`,
        then close it, as a browser leaving the page does; the status (0: none)."""
        started = time.perf_counter()
        deadline = time.monotonic() + timeout_s
        try:
            with self.http.stream("GET", path) as reply:
                self._record(label, "GET", path, reply.status_code, started,
                             reply.headers.get("X-Request-ID", ""),
                             reply.read().decode()[:300] if reply.status_code >= 500 else "")
                if reply.is_success:
                    for line in reply.iter_lines():
                        if not keep(line) or time.monotonic() > deadline:
                            break
                return reply.status_code
        except httpx.HTTPError as error:
            self._record(label, "GET", path, 0, started, "", f"{type(error).__name__}: {error}")
            return 0

    def _record(self, label: str, method: str, url: str, status: int, started: float,
                request_id: str, body: str) -> None:
        self.recorder.add(Call(self.recorder.phase, self.who, label, method, url, status,
                               (time.perf_counter() - started) * 1000, request_id, body))

    def sign_up(self, email: str, name: str) -> None:
        signed_in = self.json("POST", "/api/auth/register", "POST register", json={
            "email": email, "password": PASSWORD, "confirm_password": PASSWORD, "name": name})
        if signed_in is None:  # registering signs in, as /login does
            raise RuntimeError(f"{email} could not sign up")
        self.http.headers["X-CSRF-Token"] = signed_in["csrf_token"]

    def close(self) -> None:
        self.http.close()


@dataclass
class Workspace:
    """The ids a user works with in one project."""

    project_id: int
    dataset_id: int
    big_dataset_id: int  # for runs that get cancelled while they are in flight
    model_id: int
    manual_scorer_id: int
    manual_version_id: int
    check_scorer_id: int
    runs: list[int] = field(default_factory=list)  # finished, for review and export


def make_workspace(user: Browser, fake_url: str, name: str) -> Workspace:
    """A project with what the SPA's setup pages create: a fake-provider credential and
    model, two datasets, a manual scorer and an automatic one."""
    def made(path: str, body: dict[str, Any]) -> Any:
        found = user.json("POST", path, f"POST {path.rsplit('/', 1)[-1]}", json=body)
        if found is None:
            raise RuntimeError(f"{user.who} could not POST {path} {body}")
        return found

    project = made("/api/projects", {"name": name})["id"]
    base = f"/api/projects/{project}"
    credential = made(f"{base}/credentials", {"kind": "fake", "label": "Fake",
                                              "base_url": fake_url})["id"]
    model = made(f"{base}/models", {
        "name": "Fake fast", "credential_id": credential, "model": "fake-fast",
        "input_price_per_mtok_micros": 150_000, "output_price_per_mtok_micros": 600_000})["id"]
    small = made(f"{base}/datasets", {"name": "Questions", "kind": "questions", "cases": [
        {"input": {"question": q}} for q in QUESTIONS[:8]]})["id"]
    big = made(f"{base}/datasets", {"name": "Many questions", "kind": "questions", "cases": [
        {"input": {"question": q}} for q in QUESTIONS]})["id"]
    manual = made(f"{base}/scorers", {"kind": "manual", "name": "Reviewer rating",
                                      "params": {"scale": "1-5"}})
    check = made(f"{base}/scorers", {"kind": "icontains", "name": "Says question",
                                     "params": {"value": "question"}})["id"]
    return Workspace(project, small, big, model, manual["id"], manual["latest"]["id"], check)


class SimulatedUser(threading.Thread):
    """Works in `workspace` until `stop` is set, one action after another with a short
    think time between them."""

    def __init__(self, user: Browser, workspace: Workspace, stop: threading.Event,
                 seed: int, lock: threading.Lock):
        super().__init__(name=f"soak-{user.who}", daemon=True)
        self.user, self.ws, self.stop_event = user, workspace, stop
        self.random = random.Random(seed)
        self.lock = lock  # a shared workspace's run list is shared
        self.actions: dict[str, int] = {}
        self.errors: list[str] = []  # exceptions of the simulation itself

    # method names and weights (`run` is the thread's own: starting a run is `run_one`)
    ACTIONS = (("browse", 4), ("run_one", 2), ("review", 2), ("export", 4), ("cancel", 1))

    def run(self) -> None:
        names = [name for name, _ in self.ACTIONS]
        weights = [weight for _, weight in self.ACTIONS]
        # each action once first (in an order of this user's), so that a short soak on a
        # loaded machine still does them all; then as the weights say
        first = self.random.sample(names, len(names))
        while not self.stop_event.is_set():
            action = first.pop() if first else self.random.choices(names, weights)[0]
            try:
                getattr(self, action)()
            except Exception as error:  # a body the simulation did not expect: say so
                self.errors.append(f"{action}: {type(error).__name__}: {error}")
            self.actions[action] = self.actions.get(action, 0) + 1
            self.stop_event.wait(self.random.uniform(0.1, 0.6))

    @property
    def base(self) -> str:
        return f"/api/projects/{self.ws.project_id}"

    def _a_run(self) -> int | None:
        with self.lock:
            return self.random.choice(self.ws.runs) if self.ws.runs else None

    def browse(self) -> None:
        u, base = self.user, self.base
        u.call("GET", "/api/auth/me", "GET me")
        u.call("GET", "/api/projects", "GET projects")
        u.call("GET", base, "GET project")
        u.call("GET", f"{base}/runs", "GET runs")
        u.call("GET", f"{base}/datasets", "GET datasets")
        u.call("GET", f"{base}/models", "GET models")
        u.call("GET", f"{base}/scorers", "GET scorers")
        u.call("GET", f"{base}/reports/costs", "GET costs")
        run = self._a_run()
        if run is not None:
            u.call("GET", f"{base}/runs/{run}", "GET run")
            u.call("GET", f"{base}/runs/{run}/summary", "GET summary")
            u.call("GET", f"{base}/runs/{run}/grid?offset=0&limit=50", "GET grid")
            u.call("GET", f"{base}/reports/runs/{run}/dashboard", "GET dashboard")

    def _start_run(self, dataset_id: int, concurrency: int) -> int | None:
        found = self.user.json("POST", f"{self.base}/runs", "POST run", json={
            "dataset_id": dataset_id, "targets": [{"model_id": self.ws.model_id}],
            "scorer_ids": [self.ws.check_scorer_id, self.ws.manual_scorer_id],
            "concurrency": concurrency, "cache": False})
        return None if found is None else int(found["id"])

    def _wait_terminal(self, run: int, timeout_s: float) -> str | None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline and not self.stop_event.is_set():
            found = self.user.json("GET", f"{self.base}/runs/{run}/progress", "GET progress")
            if found is not None and found.get("status") in TERMINAL:
                return str(found["status"])
            time.sleep(0.5)
        return None

    def run_one(self) -> None:
        run = self._start_run(self.ws.dataset_id, 4)
        if run is None:
            return
        # the run page follows the event stream until the run's finish (or it is left)
        # (or the soak's end: the page is left then)
        self.user.stream(f"{self.base}/runs/{run}/events", "GET events",
                         lambda line: not line.startswith("event: run.finished")
                         and not self.stop_event.is_set(), 30)
        if self._wait_terminal(run, 60) is not None:
            with self.lock:
                self.ws.runs.append(run)

    def review(self) -> None:
        run = self._a_run()
        if run is None:
            return self.run_one()
        u, path = self.user, f"{self.base}/runs/{run}"
        page = u.json("GET", f"{path}/outputs?page=1&page_size=50", "GET outputs")
        items = (page or {}).get("items") or []
        if not items:
            return None
        output = self.random.choice(items)["id"]
        u.call("GET", f"{path}/outputs/{output}", "GET output")
        u.call("PUT", f"{path}/scores/{self.ws.manual_version_id}", "PUT review score",
               json={"rating": self.random.randint(1, 5), "output_ids": [output],
                     "comment": "soak review"})
        u.call("GET", f"{path}/grid?offset=0&limit=50&sort=score", "GET grid")
        return None

    def export(self) -> None:
        kinds = [f"datasets/{self.ws.dataset_id}/export?format=csv",
                 f"datasets/{self.ws.big_dataset_id}/export?format=jsonl"]
        run = self._a_run()
        if run is not None:
            kinds += [f"runs/{run}/export?format={f}" for f in ("json", "csv", "junit")]
        for kind in self.random.sample(kinds, min(3, len(kinds))):  # CSV, JSON, JUnit
            path = f"{self.base}/{kind}"
            label = "GET export " + path.split("/export?format=")[1]
            if self.random.random() < 0.3:  # the download is abandoned after its first bytes
                self.user.stream(path, label + " abandoned", lambda _line: False, 5)
            else:
                self.user.call("GET", path, label)

    def cancel(self) -> None:
        run = self._start_run(self.ws.big_dataset_id, 2)
        if run is None:
            return
        self.stop_event.wait(self.random.uniform(0.3, 1.5))  # some cells in flight
        self.user.call("POST", f"{self.base}/runs/{run}/cancel", "POST cancel")
        self._wait_terminal(run, 30)


def new_email(tag: str) -> str:
    return f"soak-{tag}-{uuid.uuid4().hex[:8]}@example.com"


def close_all(users: list[Browser]) -> None:
    for user in users:
        with contextlib.suppress(Exception):
            user.close()
