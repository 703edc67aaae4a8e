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


# The layering contract (docs/contributing.md): processes -> core -> providers/scorers ->
# platform, with function-local imports counted. What is listed here is what the code still
# breaks; the test fails on anything new and on an entry that is gone, so the list only shrinks.
KNOWN_UPWARD: set[tuple[str, str]] = {
    ("assay.core.evalcli.local", "assay.jobs.runs"),
    ("assay.db", "assay.core.models"),
    ("assay.events.experiments", "assay.core.experiments.models"),
    ("assay.events.experiments", "assay.core.experiments.progress"),
    ("assay.events.publish", "assay.core.base"),
    ("assay.providers.cache", "assay.core.bulk"),
    ("assay.providers.cache", "assay.core.llm.models"),
    ("assay.providers.client", "assay.core.errors"),
    ("assay.providers.pinning", "assay.core.errors"),
    ("assay.providers.ssrf", "assay.core.errors"),
    ("assay.ratelimit", "assay.core.errors"),
    ("assay.runtime", "assay.core.reports.uncertainty"),
    ("assay.settings", "assay.core.challenges.ship_judges"),
    ("assay.settings", "assay.core.llm.env_keys"),
    ("assay.settings", "assay.core.retention.policy"),
    ("assay.settings", "assay.providers.ssrf"),
}
KNOWN_CYCLES: set[tuple[str, ...]] = {
    ("assay.api.base", "assay.api.kept_reads", "assay.api.runs.results_schemas",
     "assay.api.runs.schemas"),
    ("assay.core.experiments.loop", "assay.core.experiments.pairwise"),
    ("assay.core.generation.service", "assay.core.generation.spend"),
    ("assay.core.runs.control", "assay.core.runs.service"),
    ("assay.core.runs.planning", "assay.core.runs.validation"),
}


def test_imports_point_down() -> None:
    from tests.unit import import_graph

    edges = import_graph.graph()
    assert len(edges) > 300
    assert import_graph.upward(edges) == KNOWN_UPWARD


def test_no_new_module_cycle() -> None:
    from tests.unit import import_graph

    assert set(import_graph.cycles(import_graph.graph())) == KNOWN_CYCLES


def test_the_graph_sees_function_local_imports() -> None:
    from tests.unit import import_graph

    edges = import_graph.graph()
    # db imports the table metadata only inside a function: that edge still counts.
    assert "assay.core.models" in edges["assay.db"]
    assert import_graph.layer_of("assay.core.runs.service") > import_graph.layer_of("assay.db")
