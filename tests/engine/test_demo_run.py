"""The demo run end to end: API -> RQ -> a real worker process -> fake provider -> DB -> SSE."""

from __future__ import annotations

import json
import subprocess
from typing import Any

import httpx
import pytest

from assay.core.runs.models import Output, Run
from assay.extensions import db
from tests.factories import Factory

Event = tuple[str, str, dict[str, Any]]


def read_events(url: str, token: str, last_id: str | None = None,
                limit: int | None = None) -> list[Event]:
    """Read SSE frames until the server ends the stream (or `limit` events)."""
    headers = {"Authorization": f"Bearer {token}"}
    if last_id:
        headers["Last-Event-ID"] = last_id
    events: list[Event] = []
    frame: dict[str, str] = {}
    with httpx.stream("GET", url, headers=headers, timeout=30) as reply:
        assert reply.status_code == 200
        assert reply.headers["content-type"].startswith("text/event-stream")
        assert reply.headers["x-accel-buffering"] == "no"
        for line in reply.iter_lines():
            if line:
                key, _, value = line.partition(": ")
                frame[key] = value
                continue
            if "event" in frame:
                events.append((frame["id"], frame["event"], json.loads(frame["data"])))
                if limit and len(events) >= limit:
                    break
            frame = {}
    return events


def stream_id(value: str) -> tuple[int, int]:
    ms, seq = value.split("-")
    return int(ms), int(seq)


@pytest.fixture
def demo(factory: Factory, live_url: str, worker: subprocess.Popen[bytes]) -> dict[str, Any]:
    owner = factory.user()
    project = factory.project(owner, "Engine")
    token = factory.api_token(owner)
    reply = httpx.post(f"{live_url}/api/projects/{project.id}/runs/demo",
                       headers={"Authorization": f"Bearer {token}"})
    assert reply.status_code == 202, reply.text
    run = reply.json()
    events_url = f"{live_url}/api/projects/{project.id}/runs/{run['id']}/events"
    return {"run": run, "token": token, "events_url": events_url}


def test_demo_run_completes_and_streams_every_event_in_order(demo: dict[str, Any]) -> None:
    events = read_events(demo["events_url"], demo["token"])
    types = [kind for _, kind, _ in events]
    assert types[0] == "run.started" and types[-1] == "run.finished"
    assert set(types[1:-1]) == {"run.progress"}
    ids = [stream_id(event_id) for event_id, _, _ in events]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    done = [data["succeeded"] + data["failed"] for _, _, data in events]
    assert done == sorted(done), "progress never goes backwards"
    assert any(0 < count < 24 for count in done), "progress moves while the run goes"
    final = events[-1][2]
    assert final["status"] == "completed"
    assert final["succeeded"] == final["total"] == demo["run"]["total"] == 24

    with db.factory() as session:
        run = session.get(Run, demo["run"]["id"])
        assert run is not None and run.status == "completed" and run.finished_at is not None
        outputs = session.query(Output).filter_by(run_id=run.id).all()
        assert len(outputs) == 24
        assert all(o.status == "succeeded" and o.text and o.tokens_out for o in outputs)
        assert all(o.cost_micros is not None and o.cost_micros > 0 for o in outputs)


def test_reconnect_with_last_event_id_loses_nothing(demo: dict[str, Any]) -> None:
    first = read_events(demo["events_url"], demo["token"], limit=1)
    rest = read_events(demo["events_url"], demo["token"], last_id=first[0][0])
    full = read_events(demo["events_url"], demo["token"])
    assert first + rest == full
    for index, (event_id, _, _) in enumerate(full[:-1]):
        resumed = read_events(demo["events_url"], demo["token"], last_id=event_id)
        assert resumed == full[index + 1:]


def test_idle_stream_sends_heartbeats(factory: Factory, live_url: str) -> None:
    from assay.core.datasets.service import ensure_demo_dataset
    from assay.core.llm.service import ensure_demo_models
    from assay.core.runs.planning import RunSpec, TargetSpec, plan_run
    from assay.seeds import demo_cases

    owner = factory.user()
    project = factory.project(owner, "Idle")
    token = factory.api_token(owner)
    with db.factory() as session:  # planned but never enqueued: nothing will happen
        models = ensure_demo_models(session, None, project, "http://127.0.0.1:9")
        dataset = ensure_demo_dataset(session, None, project, demo_cases())
        run = plan_run(session, None, project, RunSpec(
            dataset_id=dataset.id, targets=tuple(TargetSpec(m.id) for m in models)))
        session.commit()
    url = f"{live_url}/api/projects/{project.id}/runs/{run.id}/events"
    with httpx.stream("GET", url, headers={"Authorization": f"Bearer {token}"},
                      timeout=10) as reply:
        lines = []
        for line in reply.iter_lines():
            lines.append(line)
            if line == ": heartbeat":
                break
    assert ": heartbeat" in lines
