"""The README and docs/ say only what is true of the checkout: every link resolves, every
`make` target and `assay` command they name exists, and configuration.md lists every
environment variable the backend reads."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
MAKE = re.compile(r"`make ([a-z0-9][a-z0-9-]*)|^make ([a-z0-9][a-z0-9-]*)", re.M)
COMMAND = re.compile(r"`assay ([a-z][a-z-]*)|^\s*(?:[A-Z_]+=\S+ )*assay ([a-z][a-z-]*)", re.M)
ENV_NAME = re.compile(
    r"""["'](ASSAY_[A-Z0-9_]*[A-Z0-9]|DATABASE_URL|REDIS_URL|SECRET_KEY|JWT_SECRET)["']""")


def _text(page: Path) -> str:
    return page.read_text()


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_link_resolves(page: Path) -> None:
    broken = []
    for target in LINK.findall(_text(page)):
        if target.startswith(("http://", "https://", "mailto:")):
            continue
        path = target.split("#", 1)[0]
        if path and not (page.parent / path).exists():
            broken.append(target)
    assert broken == []


def test_every_make_target_named_exists() -> None:
    makefile = _text(ROOT / "Makefile")
    targets = set(re.findall(r"^([a-z0-9][a-z0-9-]*):", makefile, re.M))
    named = {a or b for page in PAGES for a, b in MAKE.findall(_text(page))}
    assert named, "the docs name no make target"
    assert named - targets == set()


def test_every_assay_command_named_exists() -> None:
    named = sorted({a or b for page in PAGES for a, b in COMMAND.findall(_text(page))})
    assert {"eval", "up", "serve"} <= set(named)
    # In a process of its own: Flask's commands (`db`) build the app, which configures
    # process-wide state the rest of the session relies on.
    probe = ("import json, sys\nfrom click.testing import CliRunner\nfrom assay.cli import main\n"
             f"names = {named!r}\n"
             "print(json.dumps([n for n in names\n"
             "                  if CliRunner().invoke(main, [n, '--help']).exit_code != 0]))")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                            timeout=120, check=True)
    assert json.loads(result.stdout.strip().splitlines()[-1]) == []


def test_configuration_lists_every_setting() -> None:
    documented = _text(ROOT / "docs" / "configuration.md")
    read = {name for path in (ROOT / "backend" / "assay").rglob("*.py")
            for name in ENV_NAME.findall(path.read_text())}
    assert len(read) > 40
    assert sorted(name for name in read if f"`{name}`" not in documented) == []


def test_the_readme_stays_short() -> None:
    assert len(_text(ROOT / "README.md").splitlines()) <= 200
