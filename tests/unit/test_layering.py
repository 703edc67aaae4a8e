"""core/ is the domain: it must not depend on the web framework or the job queue."""

from __future__ import annotations

import ast
from pathlib import Path

CORE = Path(__file__).resolve().parents[2] / "backend" / "assay" / "core"
FORBIDDEN = {"flask", "flask_smorest", "flask_migrate", "rq", "werkzeug"}


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_core_imports_neither_flask_nor_rq() -> None:
    files = list(CORE.rglob("*.py"))
    assert len(files) > 10
    offenders = {str(f.relative_to(CORE)): _imports(f) & FORBIDDEN for f in files}
    assert {f: bad for f, bad in offenders.items() if bad} == {}
