"""`assay eval` locally (DESIGN.md section 9): 1,000 cases x 2 models, concurrency 200, the
fake provider at 100 ms, one `contains` scorer, cache off.

The command runs as users run it: `python -m tests.bench.evalcli URL DIR` is a process of its
own that invokes the `assay` click entry point (`assay eval bench.yaml -q --no-cache`). Three
figures come out of each such process, the widest span last:
- the run (the bar's figure): from the run's creation to its end, as DESIGN.md section 9
  measures run throughput for the server (the run row's created_at and finished_at, in the
  run files' metadata);
- in the command: from invoking `assay eval` (the config is then read and checked, the
  dataset, models and run created, the run executed, scored and written out as run files)
  to its exit, the modules it needs already imported;
- the whole process: interpreter start, imports (bytecode cached, as installed), the command
  and the exit, as the parent saw it, which is what promptfoo's figure (promptfoo.py) is
  compared with.
A 2,000-call run lasts about a second, so one run's figures vary by several percent: the bench
runs the command ROUNDS times and reports the round whose run figure is the median.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any

CASES, MODELS, CONCURRENCY, LATENCY_S = 1000, 2, 200, 0.1
ROUNDS = 3
CALLS = CASES * MODELS
LIMIT = CONCURRENCY / LATENCY_S  # calls per second with every slot always busy
SCORER = "says"
# what `assay eval` imports on its way (from the `assay` command to the engine and scorers)
IMPORTED = ("assay.cli.evalcmd", "assay.observability.boot", "assay.core.evalcli.config",
            "assay.core.evalcli.prices", "assay.core.evalcli.service", "assay.core.evalcli.local",
            "assay.core.evalcli.export", "assay.core.evalcli.summary", "assay.jobs.runs",
            "assay.scorers.registry", "assay.core.llm.secrets")


def questions(cases: int = CASES) -> list[str]:
    return [f"question {i}" for i in range(cases)]


def write_config(fake_url: str, folder: Path, cases: int = CASES) -> Path:
    """The bench's config (also the local-engine tests', on fewer cases)."""
    models = "".join(f"  - name: fake-{i}\n    provider: fake\n    model: fake-fast\n"
                     f"    params: {{temperature: 0, max_tokens: 32}}\n"
                     f"    input_price_per_mtok: 0.1\n    output_price_per_mtok: 0.1\n"
                     for i in range(MODELS))
    (folder / "cases.jsonl").write_text(
        "".join(json.dumps({"question": q}) + "\n" for q in questions(cases)))
    path = folder / "bench.yaml"
    path.write_text(f"""\
prompts:
  - name: ask
    template: "{{{{question}}}}"
providers:
  - name: fake
    kind: fake
    base_url: {fake_url}
models:
{models}tests: cases.jsonl
scorers:
  - name: {SCORER}
    kind: contains
    params: {{value: question}}
settings:
  concurrency: {CONCURRENCY}
""")
    return path


def bench_cache() -> Path:
    """Kept between bench runs: promptfoo's install, the bytecode of Assay's modules."""
    return Path(os.environ.get("ASSAY_BENCH_CACHE") or Path.home() / ".cache" / "assay-bench")


def ratio(seconds: float) -> float:
    return round(CALLS / seconds / LIMIT, 3)


def import_all() -> None:
    """What `assay eval` imports, in the order it does: the `assay` group's setup first."""
    import importlib

    from assay.observability import boot
    from assay.scorers import registry

    boot.start("eval")
    for module in IMPORTED:
        importlib.import_module(module)
    registry.kinds()  # the scorer modules, imported on first use


def in_command(fake_url: str, folder: Path, runs: Path) -> dict[str, Any]:
    """This process: `assay eval` through its click entry point, timed around the call."""
    from assay.cli import main
    from assay.core.evalcli import runfiles

    import_all()  # imports count in the whole process's figure

    config = write_config(fake_url, folder)
    args = ["eval", str(config), "-q", "--no-cache", "--runs-dir", str(runs)]
    started = time.perf_counter()
    try:
        main.main(args=args, prog_name="assay", standalone_mode=False)
        code = 0
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    elapsed = time.perf_counter() - started
    run = runfiles.read_run(runfiles.resolve(runs, "latest"))
    totals = run.metadata["totals"]
    if code != 0 or totals["succeeded"] != CALLS:
        raise RuntimeError(f"assay eval exited {code} with {totals['succeeded']} of {CALLS} "
                           f"calls succeeded ({run.metadata['status']})")
    attempts = Counter(r["attempts"] for r in run.responses)
    runfiles.remove_run(runs, run.id)  # the folder's template stays (evalcli/schema.py)
    created, finished = (datetime.fromisoformat(run.metadata[k].replace("Z", "+00:00"))
                         for k in ("created_at", "finished_at"))
    run_seconds = (finished - created).total_seconds()
    return {"run_seconds": round(run_seconds, 3), "run_ratio": ratio(run_seconds),
            "seconds": round(elapsed, 3), "ratio": ratio(elapsed),
            "engine_seconds": round((run.metadata["duration_ms"] or 0) / 1000, 3),
            "scored": sum(e["scorer"] == SCORER for e in run.evaluations),
            "attempts": sum(n * count for n, count in attempts.items())}


def eval_throughput(fake_url: str) -> dict[str, Any]:
    """`assay eval` in a process of its own, ROUNDS times: the median round's figures (by the
    run's), with every round's run figure."""
    # bytecode written once and reused, as an installed package has it (pip compiles it at
    # install; without it every start compiles every module again, seconds on this code)
    env = {**os.environ, "ASSAY_FAKE_PROVIDER_URL": "",
           "PYTHONPYCACHEPREFIX": str(bench_cache() / "pycache")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run([sys.executable, "-m", "tests.bench.evalcli", "--compile"], env=env,
                   check=True)
    rounds = sorted((_one_round(fake_url, env) for _ in range(ROUNDS)),
                    key=lambda figures: figures["run_ratio"])
    median = rounds[len(rounds) // 2]
    median["rounds"] = [figures["run_ratio"] for figures in rounds]
    return median


def _one_round(fake_url: str, env: dict[str, str]) -> dict[str, Any]:
    # a runs folder used before, as a user's is after their first run: it holds the empty
    # database template each run copies (evalcli/schema.py); the first bench makes it
    runs = bench_cache() / "eval-runs"
    with tempfile.TemporaryDirectory(prefix="assay-bench-eval-") as folder:
        started = time.perf_counter()
        out = subprocess.run([sys.executable, "-m", "tests.bench.evalcli", fake_url, folder,
                              str(runs)], capture_output=True, text=True, env=env)
        whole = time.perf_counter() - started
    if out.returncode != 0:
        raise RuntimeError(f"the bench's assay eval failed:\n{out.stderr[-3000:]}")
    figures: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    figures.update(calls=CALLS, limit=round(LIMIT), process_seconds=round(whole, 2),
                   process_ratio=ratio(whole))
    return figures


def report(figures: dict[str, Any]) -> str:
    rounds = ", ".join(f"{r:.3f}" for r in figures["rounds"])
    return (f"assay eval locally, {CASES} cases x {MODELS} models, concurrency {CONCURRENCY}, "
            f"cache off, median of {ROUNDS} rounds ({rounds}): the run {figures['run_ratio']:.3f} "
            f"of the limit from its creation to its end (bar 0.75; {figures['calls']} calls in "
            f"{figures['run_seconds']} s, {figures['engine_seconds']} s of it executing); in the "
            f"command {figures['ratio']:.3f} ({figures['seconds']} s from invoking it to run "
            f"files written; a runs folder used before); whole process "
            f"{figures['process_seconds']} s = {figures['process_ratio']:.3f} of the limit; "
            f"{figures['scored']} scores, {figures['attempts']} attempts")


if __name__ == "__main__":  # python -m tests.bench.evalcli FAKE_URL FOLDER RUNS | --compile
    import logging

    logging.disable(logging.WARNING)
    if sys.argv[1:] == ["--compile"]:
        from assay.cli import main  # noqa: F401

        import_all()
    else:
        print(json.dumps(in_command(sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]))))
