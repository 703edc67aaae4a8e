"""`assay eval --server URL`: the config's credentials, models, dataset, prompts, scorers
and run created on an Assay server through its HTTP API (token in ASSAY_TOKEN), progress
from the run's SSE stream, the run's URL printed, then the results table from the server's
statistics and summary. Exit codes as locally, from the run's status and summary."""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click
import httpx
from rich.table import Table

from assay.cli.common import interval, money, out
from assay.core.evalcli import outcome
from assay.core.evalcli.config import EvalConfig
from assay.core.evalcli.runfiles import RunData

TERMINAL = {"completed", "partial", "failed", "cancelled", "budget_exceeded"}
TOKEN_ENV = "ASSAY_TOKEN"


class ServerError(click.ClickException):
    exit_code = outcome.USAGE


class Api:
    def __init__(self, server: str, project: int, token: str) -> None:
        self.base = server.rstrip("/")
        self.project = project
        self.http = httpx.Client(base_url=f"{self.base}/api/projects/{project}",
                                 headers={"Authorization": f"Bearer {token}"}, timeout=60)

    def call(self, method: str, path: str, body: dict[str, Any] | None = None,
             ok: tuple[int, ...] = (200, 201, 202)) -> Any:
        try:
            reply = self.http.request(method, path, json=body)
        except httpx.HTTPError as exc:
            raise ServerError(f"{method} {path}: {exc}") from exc
        if reply.status_code not in ok:
            raise ServerError(f"{method} {path}: {reply.status_code} {reply.text[:500]}")
        return reply.json() if reply.content else None

    def find(self, path: str, key: str, value: str) -> dict[str, Any] | None:
        page = 1
        while True:
            body = self.call("GET", f"{path}?page={page}&page_size=100")
            for item in body["items"]:
                if item.get(key) == value:
                    return dict(item)
            if page * body["page_size"] >= body["total"]:
                return None
            page += 1

    def create_or_reuse(self, path: str, key: str, body: dict[str, Any]) -> dict[str, Any]:
        """Credentials and models are reused by name: a second eval does not pile them up."""
        found = self.find(path, key, body[key])
        return found if found is not None else dict(self.call("POST", path, body))


def _tag(body: dict[str, Any]) -> str:
    """A short digest of what a credential or model is: reused only when it is the same."""
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:8]


def _setup(api: Api, cfg: EvalConfig, stamp: str) -> dict[str, Any]:
    credentials = {}
    for name, p in cfg.providers.items():
        body: dict[str, Any] = {"kind": p.kind, "base_url": p.base_url,
                                "secret_env": p.api_key_env, "config": p.config}
        credentials[name] = api.create_or_reuse("/credentials", "label", {
            **body, "label": f"assay eval: {name} {_tag(body)}"})["id"]
    models, names = {}, {}  # names: as on the server -> as in the config (the table's)
    for m in cfg.models:
        body = {"credential_id": credentials[m.provider], "model": m.model,
                "params": m.params,
                "input_price_per_mtok_micros": None if m.input_price_per_mtok is None
                else round(m.input_price_per_mtok * 1e6),
                "output_price_per_mtok_micros": None if m.output_price_per_mtok is None
                else round(m.output_price_per_mtok * 1e6)}
        names[f"{m.name} {_tag(body)}"] = m.name
        models[m.name] = api.create_or_reuse("/models", "name", {
            **body, "name": f"{m.name} {_tag(body)}"})["id"]
    names.update({f"{x['name']} {stamp}": x["name"] for x in cfg.prompts})
    names.update({f"{x.name} {stamp}": x.name for x in cfg.scorers})
    run_name = f"{Path(cfg.file).stem} {stamp}"
    dataset = api.call("POST", "/datasets", {
        "name": run_name, "kind": "cases",
        "cases": [{"input": c["vars"], "expected": c["expected"], "tags": c["tags"],
                   "metadata": c["metadata"]} for c in cfg.cases]})
    prompts = [api.call("POST", "/prompts", {"name": f"{p['name']} {stamp}",
                                             "template": p["template"],
                                             "system": p["system"]})["latest"]["id"]
               for p in cfg.prompts]
    scorers = [api.call("POST", "/scorers", {"name": f"{s.name} {stamp}", "kind": s.kind,
                                             "params": s.params})["id"] for s in cfg.scorers]
    return {"dataset_id": dataset["id"], "name": run_name,
            "targets": [{"model_id": models[m.name], "prompt_version_id": p}
                        for m in cfg.models for p in prompts],
            "scorer_ids": scorers, "names": names}


def _follow(api: Api, run_id: int, quiet: bool) -> dict[str, Any]:
    """Progress from the SSE stream until the run ends (the run read again at the end)."""
    url = f"/runs/{run_id}/events"
    deadline = time.monotonic() + 24 * 3600
    while time.monotonic() < deadline:
        run = api.call("GET", f"/runs/{run_id}")
        if run["status"] in TERMINAL:
            return dict(run)
        try:
            with api.http.stream("GET", url, timeout=httpx.Timeout(60, read=30)) as reply:
                for line in reply.iter_lines():
                    if not line.startswith("data:"):
                        continue
                    data = json.loads(line[5:])
                    if not quiet and isinstance(data, dict) and "total" in data:
                        done = sum(int(data.get(k) or 0) for k in ("succeeded", "failed",
                                                                  "skipped"))
                        click.echo(f"\r{done}/{data['total']} calls, {data.get('failed', 0)} "
                                   "failed", nl=False, err=True)
                    if isinstance(data, dict) and data.get("status") in TERMINAL:
                        break
        except httpx.HTTPError:
            time.sleep(1)  # the stream dropped: read the run, then listen again
    return dict(api.call("GET", f"/runs/{run_id}"))


def eval_on_server(cfg: EvalConfig, server: str, project: int | None, *, quiet: bool,
                   fail_under: float | None, max_cost_micros: int | None,
                   cache: bool) -> int:
    token = os.environ.get(TOKEN_ENV)
    if not token:
        raise ServerError(f"--server needs an API token in {TOKEN_ENV}")
    if project is None:
        raise ServerError("--server needs --project (the project id)")
    api = Api(server, project, token)
    # the random tail keeps two evals started in the same second (a CI matrix) apart:
    # dataset, prompt and scorer names are unique per project
    stamp = f"{datetime.now(UTC):%Y%m%d-%H%M%S}-{secrets.token_hex(2)}"
    body = _setup(api, cfg, stamp)
    names = body.pop("names")
    max_cost = max_cost_micros if max_cost_micros is not None else cfg.max_cost_micros
    run = api.call("POST", "/runs", {
        **body, "repeats": cfg.repeats, "concurrency": cfg.concurrency, "cache": cache,
        **({"budget_micros": max_cost} if max_cost is not None else {}),
        **({"max_retries": cfg.max_retries} if cfg.max_retries is not None else {}),
        **({"timeout_s": cfg.timeout_s} if cfg.timeout_s is not None else {})})
    url = f"{api.base}/projects/{project}/runs/{run['id']}"
    click.echo(url)
    run = _follow(api, run["id"], quiet)
    summary = api.call("GET", f"/runs/{run['id']}/summary")
    if not quiet:
        click.echo(f"\n{run['status']}: {run['succeeded']} succeeded, {run['failed']} failed, "
                   f"{run['skipped']} skipped", err=True)
        statistics = api.call("GET", f"/runs/{run['id']}/statistics")
        out().print(results_table(run, summary, statistics, names))
    if run["status"] == "budget_exceeded":
        return outcome.BUDGET
    if run["failed"]:
        return outcome.PROVIDER_ERRORS
    return _thresholds(summary, fail_under if fail_under is not None else cfg.fail_under)


def results_table(run: dict[str, Any], summary: dict[str, Any], statistics: dict[str, Any],
                  names: dict[str, str]) -> Table:
    """The local table's columns from the server's numbers: per target and scorer the mean
    with its interval and the pass rate (the run's statistics), then the target's calls,
    cost and latency (its summary); models, prompts and scorers as the config names them
    (`names`: the server's names, which carry a digest or the eval's time, to those)."""
    table = Table(title=f"run {run['id']}: {run['status']}",
                  caption="score: the mean with its 95% interval; p50, p95: latency in ms")
    for column in COLUMNS:
        # a narrow terminal (a CI log's 80 columns) wraps names and intervals, not numbers
        table.add_column(column, justify="left" if column in ("target", "scorer") else "right",
                         no_wrap=column not in ("target", "scorer", "score"))
    scorers = {s["scorer_version_id"]: _plain(s["name"], names) for s in statistics["scorers"]}
    scored: dict[int, list[dict[str, Any]]] = {}
    for item in statistics["items"]:
        scored.setdefault(item["target_id"], []).append(item)
    for target in summary["targets"]:
        calls = (f"{target['succeeded']}/{target['failed']}", money(target["spent_micros"]),
                 _ms(target["latency_p50_ms"]), _ms(target["latency_p95_ms"]))
        if target["target_id"] not in scored:
            table.add_row(_plain(target["label"], names), "-", "-", "-", *calls)
        for item in scored.get(target["target_id"], []):
            mean, rate = item["mean"], item["pass_rate"]
            table.add_row(_plain(target["label"], names),
                          scorers.get(item["scorer_version_id"], "-"),
                          "-" if mean["mean"] is None else interval(mean),
                          "-" if rate["estimate"] is None else
                          f"{rate['estimate']:.1%} ({rate['k']}/{rate['n']})", *calls)
    return table


COLUMNS = ("target", "scorer", "score", "pass rate", "ok/failed", "cost", "p50", "p95")


def _plain(label: str, names: dict[str, str]) -> str:
    for server, mine in names.items():
        label = label.replace(server, mine)
    return label


def _ms(value: int | None) -> str:
    return "-" if value is None else str(value)


def _thresholds(summary: dict[str, Any], fail_under: float | None) -> int:
    """Exit 1 when a scorer failed an output (with fail_under: when its pass rate over
    the run is below it), from the run's summary."""
    failed = False
    for scorer in summary.get("scoring") or []:
        judged = scorer["passed"] + scorer["failed"]
        if fail_under is None:
            failed |= scorer["failed"] > 0
        elif judged:
            failed |= scorer["passed"] / judged < fail_under
    return outcome.FAILED_CHECKS if failed else outcome.OK


def _trace(run: RunData, response: dict[str, Any]) -> dict[str, Any]:
    """One local output as a recorded trace: the prompt as sent, the reply as received,
    and what the run measured of it in the case's metadata."""
    from assay.core.prompts.service import render

    prompt = next(p for p in run.prompt["prompts"] if p["name"] == response["prompt"])
    case = next(c for c in run.cases if c["index"] == response["case_index"])
    messages = [{"role": "system", "content": render(prompt["system"], case["vars"])}
                if prompt["system"] else None,
                {"role": "user", "content": render(prompt["template"], case["vars"])},
                {"role": "assistant", "content": response["text"] or ""}]
    return {"trace": {"messages": [m for m in messages if m]}, "expected": case["expected"],
            "tags": case["tags"],
            "metadata": {"local_run": run.id, "case_id": case["id"],
                         "prompt": response["prompt"], "repeat": response["repeat"],
                         **{k: response[k] for k in ("tokens", "cost_micros", "latency_ms",
                                                     "cached")}}}


def push_run(run: RunData, server: str, project: int) -> list[str]:
    """A local run on a server: per model, its succeeded outputs as a traces dataset and a
    run over it with the run's scorers (the server scores them again with the same kinds
    and params), so the outputs land in the team's reports. Returns the runs' URLs."""
    token = os.environ.get(TOKEN_ENV)
    if not token:
        raise ServerError(f"push needs an API token in {TOKEN_ENV}")
    api = Api(server, project, token)
    scorers = [api.call("POST", "/scorers", {"name": f"{s['name']} {run.id}",
                                             "kind": s["kind"], "params": s["params"]})["id"]
               for s in run.prompt["scorers"]]
    urls = []
    for model in run.prompt["models"]:
        done = [r for r in run.responses
                if r["model"] == model["name"] and r["status"] == "succeeded"]
        if not done:
            continue
        dataset = api.call("POST", "/datasets", {
            "name": f"{run.id} {model['name']}", "kind": "traces",
            "description": f"Pushed by assay push: {model['name']} ({model['kind']} "
                           f"{model['model']}), local run {run.id}",
            "cases": [_trace(run, r) for r in done]})
        created = api.call("POST", "/runs", {"dataset_id": dataset["id"], "targets": [],
                                             "scorer_ids": scorers,
                                             "name": f"{run.id} · {model['name']}"})
        urls.append(f"{api.base}/projects/{project}/runs/{created['id']}")
    return urls
