"""Final report PDF of an experiment, 10 iterations x 500 cases (DESIGN §9: < 5 s).

In a process of its own (`python -m tests.bench.experiment_report`, one JSON line out): an
SQLite instance with an experiment seeded straight into the tables (tests/experiment_seed:
10 iterations, 500 cases, 2 models, a rubric-judge score per output = 10,000 scores, each
iteration aggregated as the loop does), then the report built from the tables and rendered
to PDF, timed together (the export's whole server-side work), best of REPEATS.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
import time
from typing import Any

from assay.app import create_app
from assay.core.auth.service import register
from assay.core.experiments import exports, report
from assay.core.experiments.models import Experiment
from assay.core.projects.service import create_project
from assay.extensions import db
from assay.settings import Settings
from tests.experiment_seed import seed

ITERATIONS, CASES, REPEATS, BAR_S = 10, 500, 3, 5.0


def measure() -> dict[str, Any]:
    os.environ.update({"ASSAY_INSTANCE_PATH": tempfile.mkdtemp(prefix="assay-bench-"),
                       "ASSAY_BCRYPT_ROUNDS": "4"})
    os.environ.pop("DATABASE_URL", None)
    app = create_app(Settings.from_env())
    with app.app_context():
        from flask_migrate import upgrade

        upgrade()
        with db.factory() as session:
            user = register(session, "report@example.com", "Bench-password-1!", None, 4)
            project = create_project(session, user, "Report bench")
            started = time.perf_counter()
            seeded = seed(session, user, project, "http://127.0.0.1:9", ITERATIONS, CASES, 4)
            session.commit()
            seed_s = time.perf_counter() - started
        times, size = [], 0
        for _ in range(REPEATS):
            with db.factory() as session:
                experiment = session.get(Experiment, seeded.experiment_id)
                assert experiment is not None
                started = time.perf_counter()
                size = len(exports.pdf(report.build(session, experiment)))
                times.append(time.perf_counter() - started)
    return {"seconds": times, "bytes": size, "seed_s": round(seed_s, 2)}


def report_lines(figures: dict[str, Any]) -> list[str]:
    best = min(figures["seconds"])
    return [f"experiment report PDF, {ITERATIONS} iterations x {CASES} cases (SQLite): "
            f"{best:.2f} s best of {REPEATS} = {best / BAR_S:.3f} of the {BAR_S:.0f} s bar "
            f"({figures['bytes']:,} bytes; all {', '.join(f'{t:.2f}' for t in figures['seconds'])}"
            f" s; seed {figures['seed_s']} s)"]


if __name__ == "__main__":
    logging.disable(logging.WARNING)
    print(json.dumps(measure()))
