"""First contentful paint of the EvalArena workspace of the largest seeded challenge
(issue 17: under 1 s).

In a process of its own (`python -m tests.bench.arena_fcp`, one JSON line out; `--report`
for the printed lines), like tests/bench/fcp.py: builds frontend/dist, seeds the challenges
into an SQLite instance, serves the API (a threaded WSGI server in this process) behind
`vite preview`, and drives /usr/bin/chromium from frontend/scripts/arena-fcp.mjs: the
workspace of the challenge with the most dev-trace text, each sample in a fresh browser
context (cold cache). When the transcript was first painted is printed beside the FCP.
"""

from __future__ import annotations

import json
import statistics
import sys
from typing import Any

from tests.bench.fcp import BAR_MS, SAMPLES, built_app, in_browser

EMAIL = "arena-fcp@example.com"
PASSWORD = "Bench-password-1!"


def measure() -> dict[str, Any]:
    app = built_app("assay-bench-arena-")
    from sqlalchemy import select

    from assay.core.auth.service import register
    from assay.core.challenges.models import ChallengeTrace
    from assay.core.challenges.seeding import seed_challenges
    from assay.extensions import db

    with app.app_context(), db.factory() as session:
        seed_challenges(session)
        register(session, EMAIL, PASSWORD, None, 4)
        session.commit()
        sizes: dict[str, int] = {}
        for trace in session.scalars(select(ChallengeTrace).where(
                ChallengeTrace.split == "dev")):
            sizes[trace.challenge_id] = sizes.get(trace.challenge_id, 0) + \
                len(json.dumps(trace.messages))
        largest = max(sizes, key=lambda cid: sizes[cid])
    figures = in_browser(app, "arena-fcp.mjs", EMAIL, PASSWORD, largest, str(SAMPLES))
    return {**figures, "challenge": largest, "dev_trace_bytes": sizes[largest]}


def report(figures: dict[str, Any]) -> list[str]:
    values, content = figures["fcp_ms"], figures["content_ms"]
    worst = max(values)
    return [f"first contentful paint, EvalArena workspace of the largest challenge "
            f"({figures['challenge']}, {figures['dev_trace_bytes'] / 1024:.0f} kB of dev "
            f"traces; built bundle, Chromium, cold cache, {len(values)} samples): median "
            f"{statistics.median(values):.0f} ms, worst {worst} ms = {worst / BAR_MS:.3f} of "
            f"the {BAR_MS / 1000:.0f} s bar; the transcript painted at median "
            f"{statistics.median(content):.0f} ms, worst {max(content)} ms"]


if __name__ == "__main__":
    import logging

    logging.disable(logging.WARNING)
    result = measure()
    if sys.argv[1:2] == ["--report"]:
        print("\n".join(report(result)))
    else:
        print(json.dumps(result))
