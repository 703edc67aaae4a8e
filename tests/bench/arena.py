"""EvalArena bar (DESIGN.md section 9): a rules run over 50 dev traces answers in < 300 ms
p95 through HTTP. In a process of its own (`python -m tests.bench.arena`): a SQLite
instance, the seeded refund challenge widened to 50 dev traces, the API on a real HTTP
server, and one client posting the reference rules as attempts. Prints one JSON line."""

from __future__ import annotations

import copy
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import yaml
from werkzeug.serving import make_server

from assay.app import create_app
from assay.core.auth.service import create_api_token, register
from assay.core.challenges.seeding import CHALLENGES_DIR, seed_challenges
from assay.extensions import db
from assay.settings import Settings

CID = "refund-verification"
TRACES = 50
RUNS = 60
WARMUP = 5
BAR_MS = 300.0
RULES = Path(__file__).resolve().parent.parent / "fixtures" / "challenges" / CID / \
    "reference.rules.yaml"


def _wide_challenge(folder: Path) -> None:
    data = yaml.safe_load((CHALLENGES_DIR / f"{CID}.yaml").read_text())
    base = data["dev_set"]
    wide = []
    for i in range(TRACES):
        trace = copy.deepcopy(base[i % len(base)])
        trace["id"] = f"dev-{i + 1:03d}"
        first = trace["messages"][0]
        first["content"] = f"{first['content']} (ticket {i + 1})"  # no two traces alike
        wide.append(trace)
    data["dev_set"] = wide
    (folder / f"{CID}.yaml").write_text(yaml.safe_dump(data, sort_keys=False))


def measure() -> dict[str, Any]:
    from flask_migrate import upgrade

    instance = tempfile.mkdtemp(prefix="assay-bench-arena-")
    os.environ.update({"ASSAY_INSTANCE_PATH": instance, "ASSAY_BCRYPT_ROUNDS": "4"})
    os.environ.pop("DATABASE_URL", None)
    app = create_app(Settings.from_env())
    with app.app_context():
        upgrade()
    folder = Path(instance) / "challenges"
    folder.mkdir()
    _wide_challenge(folder)
    with app.app_context(), db.factory() as session:
        seed_challenges(session, folder)
        user = register(session, "arena@example.com", "Bench-password-1!", None, 4)
        _, token = create_api_token(session, user, "bench")
        session.commit()
    server = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_port}/api/arena/challenges/{CID}/attempts"
    body = {"tab": "rules", "text": RULES.read_text(), "set": "dev"}
    times = []
    cpu_started = time.process_time()  # client and server share this process
    with httpx.Client(headers={"Authorization": f"Bearer {token}"}, timeout=30) as client:
        for i in range(RUNS + WARMUP):
            started = time.perf_counter()
            reply = client.post(url, json=body)
            elapsed = (time.perf_counter() - started) * 1000
            assert reply.status_code == 201, reply.text
            assert reply.json()["summary"]["total"] == TRACES
            if i >= WARMUP:
                times.append(elapsed)
    cpu_ms = (time.process_time() - cpu_started) * 1000 / (RUNS + WARMUP)
    server.shutdown()
    p95 = statistics.quantiles(times, n=20)[18]
    return {"traces": TRACES, "runs": RUNS, "p50_ms": round(statistics.median(times), 1),
            "p95_ms": round(p95, 1), "cpu_ms": round(cpu_ms, 1), "bar_ms": BAR_MS,
            "ratio_to_bar": round(p95 / BAR_MS, 3)}


def report(figures: dict[str, Any]) -> list[str]:
    return [f"EvalArena rules run over {figures['traces']} dev traces through HTTP "
            f"(SQLite, {figures['runs']} runs): p50 {figures['p50_ms']} ms, p95 "
            f"{figures['p95_ms']} ms = {figures['ratio_to_bar']:.3f} of the "
            f"{figures['bar_ms']:.0f} ms bar; {figures['cpu_ms']} ms CPU per run (client "
            "included)"]


if __name__ == "__main__":
    import logging

    logging.disable(logging.WARNING)
    figures = measure()
    print(json.dumps(figures))
    if sys.argv[1:2] == ["--print"]:
        print("\n".join(report(figures)))
