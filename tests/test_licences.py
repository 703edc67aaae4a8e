"""Assay is Apache-2.0: every dependency it ships or installs must allow that.

Python: the runtime closure of assay's own requirements (extras such as dev tools are not
shipped), read from the installed distributions' metadata. Frontend: the production
packages of package-lock.json (not "dev"), which end up in the bundle. Run this file as a
script to print the table: `.venv/bin/python tests/test_licences.py`.
"""

from __future__ import annotations

import importlib.metadata as md
import json
import re
import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
PERMISSIVE = {"Apache-2.0", "MIT", "MIT-0", "BSD-2-Clause", "BSD-3-Clause", "0BSD", "ISC",
              "PSF-2.0", "Python-2.0", "CNRI-Python", "Zlib", "CC0-1.0", "Unlicense",
              "BlueOak-1.0.0", "MIT-CMU"}  # MIT-CMU: Pillow's (HPND family, permissive)
# Weak copyleft is fine for Python libraries: they are installed unmodified beside Assay,
# not copied into it, and the user may replace them. Never for the bundled SPA.
PYTHON_ONLY = {"MPL-2.0", "LGPL-2.1-only", "LGPL-2.1-or-later", "LGPL-3.0-only",
               "LGPL-3.0-or-later"}
# Packages whose metadata is wrong or missing, reviewed by hand: name -> (licence, why).
EXCEPTIONS: dict[str, tuple[str, str]] = {
    # bm25s' dependency; its metadata names no licence. Its LICENCE file: MPL-2.0 for most
    # of the code, MIT for the rest; a Python library installed unmodified.
    "tqdm": ("MPL-2.0", "LICENCE file: MPL-2.0 AND MIT; metadata has no License field"),
}
# Old-style License fields and trove classifiers, as SPDX ids.
LEGACY = {"apache 2.0": "Apache-2.0", "apache software license": "Apache-2.0",
          "apache license 2.0": "Apache-2.0", "mit license": "MIT", "mit": "MIT",
          "bsd license": "BSD-3-Clause", "bsd": "BSD-3-Clause",
          "python software foundation license": "PSF-2.0",
          "mozilla public license 2.0 (mpl 2.0)": "MPL-2.0"}
TOKEN = re.compile(r"\(|\)|[A-Za-z0-9.+-]+")


def allowed(expression: str, ok: set[str]) -> bool:
    """Whether an SPDX expression is satisfiable with licences in `ok` (OR: one side;
    AND: both sides; WITH exceptions are kept with their licence and must be listed)."""
    tokens = TOKEN.findall(expression.replace(" WITH ", "-WITH-"))

    def term(i: int) -> tuple[bool, int]:
        if tokens[i] == "(":
            value, i = either(i + 1)
            return value, i + 1
        return tokens[i] in ok, i + 1

    def both(i: int) -> tuple[bool, int]:
        value, i = term(i)
        while i < len(tokens) and tokens[i] == "AND":
            right, i = term(i + 1)
            value = value and right
        return value, i

    def either(i: int) -> tuple[bool, int]:
        value, i = both(i)
        while i < len(tokens) and tokens[i] == "OR":
            right, i = both(i + 1)
            value = value or right
        return value, i

    if not tokens:
        return False
    value, end = either(0)
    return value and end == len(tokens)  # anything left over is not a licence we know


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def python_licence(dist: md.Distribution) -> str:
    """The SPDX expression of a distribution: License-Expression, else a short License
    field, else its trove classifiers; "unknown" when none says."""
    meta = dist.metadata
    if meta.get("License-Expression"):
        return str(meta["License-Expression"])
    first = (meta.get("License") or "").strip().splitlines()[:1]
    if first and (first[0].lower() in LEGACY or first[0] in PERMISSIVE | PYTHON_ONLY):
        return LEGACY.get(first[0].lower(), first[0])
    found = [LEGACY.get(c.rsplit(" :: ", 1)[-1].lower(), c)
             for c in meta.get_all("Classifier") or [] if c.startswith("License ::")]
    return " OR ".join(sorted(set(found))) if found else "unknown"


def python_licences() -> dict[str, str]:
    """name -> licence of everything `pip install assay` brings, assay excluded."""
    out: dict[str, str] = {}
    todo, seen = ["assay"], set()
    while todo:
        name = _normal(todo.pop())
        if name in seen:
            continue
        seen.add(name)
        dist = md.distribution(name)
        for line in dist.requires or []:
            req = Requirement(line)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(req.name)
        if name != "assay":
            out[name] = EXCEPTIONS.get(name, (python_licence(dist), ""))[0]
    return out


def frontend_licences() -> dict[str, str]:
    """name -> licence of the SPA's production packages (package-lock.json)."""
    lock = json.loads((ROOT / "frontend/package-lock.json").read_text())
    out = {}
    for path, entry in lock["packages"].items():
        if not path or entry.get("dev"):
            continue
        name = path.rsplit("node_modules/", 1)[-1]
        licence = entry.get("license")
        if not licence:  # older lock entries: the installed package says
            manifest = ROOT / "frontend" / path / "package.json"
            licence = (json.loads(manifest.read_text()).get("license")
                       if manifest.exists() else None)
        out[name] = EXCEPTIONS.get(name, (licence or "unknown", ""))[0]
    return out


def refused(licences: dict[str, str], ok: set[str]) -> dict[str, str]:
    return {name: lic for name, lic in sorted(licences.items()) if not allowed(lic, ok)}


def test_assay_declares_apache_2() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "Apache-2.0"
    assert json.loads((ROOT / "frontend/package.json").read_text())["license"] == "Apache-2.0"
    text = (ROOT / "LICENSE").read_text()
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert "END OF TERMS AND CONDITIONS" in text  # the full text, not a notice


def test_python_dependencies_allow_apache_2() -> None:
    found = python_licences()
    assert {"flask", "sqlalchemy", "psycopg"} <= set(found)  # the closure was walked
    assert refused(found, PERMISSIVE | PYTHON_ONLY) == {}


def test_frontend_production_dependencies_allow_apache_2() -> None:
    found = frontend_licences()
    assert {"react", "react-dom"} <= set(found)
    assert "vite" not in found  # a dev tool, not in the bundle
    assert refused(found, PERMISSIVE) == {}


def test_licence_expressions() -> None:
    assert allowed("MIT", PERMISSIVE)
    assert allowed("MPL-2.0 AND (Apache-2.0 OR MIT)", PERMISSIVE | PYTHON_ONLY)
    assert not allowed("MPL-2.0 AND (Apache-2.0 OR MIT)", PERMISSIVE)
    assert allowed("GPL-3.0-only OR MIT", PERMISSIVE)
    for bad in ("GPL-3.0-only", "AGPL-3.0-or-later", "SSPL-1.0", "unknown",
                "MIT AND GPL-2.0-only", "GPL-2.0-only WITH Classpath-exception-2.0"):
        assert not allowed(bad, PERMISSIVE | PYTHON_ONLY), bad
    assert not allowed("LGPL-3.0-only", PERMISSIVE)  # never bundled into the SPA


if __name__ == "__main__":
    for title, table in (("Python", python_licences()), ("Frontend", frontend_licences())):
        print(f"# {title}")
        for name, lic in sorted(table.items()):
            print(f"{name:32} {lic}")
    sys.exit(1 if refused(python_licences(), PERMISSIVE | PYTHON_ONLY)
             or refused(frontend_licences(), PERMISSIVE) else 0)
