"""Run files: what `assay eval` keeps of every run, readable without Assay (RUNFILES.md).

    runs/index.json                 every run, newest last (rebuilt from the folders if lost)
    runs/run_YYYYMMDD_HHMMSS/
        prompt.json                 prompts, models (no secrets), scorers, settings
        cases.jsonl                 one test case a line
        responses.jsonl             one output a line: text, error, tokens, cost, timings
        evaluations.jsonl           one score a line (scorer x output), and the composite
        metadata.json               status, timings, totals, the per-model summary
        assay.db                    the engine's SQLite state (local mode; not needed to read)

Every file validates against one `$defs` entry of schema/run-v<N>.schema.json, N its
`schema_version`: runs are written in the newest version and read in every version this
Assay knows (version 2 added the judges' confidence, a version 1 run reads with none;
version 3 summarises per model and prompt, an older run's rows name no prompt).
JSONL keeps 10,000 outputs streamable and appendable.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema_rs

from assay import jsonio
from assay.core.errors import DomainError

SCHEMA_VERSION = 3  # what runs are written in
KNOWN_VERSIONS = (1, 2, 3)  # what runs are read in (each has its schema file)
INDEX, PROMPT, CASES, RESPONSES, EVALUATIONS, METADATA = (
    "index.json", "prompt.json", "cases.jsonl", "responses.jsonl", "evaluations.jsonl",
    "metadata.json")
FILE_DEFS = {PROMPT: "prompt", CASES: "case", RESPONSES: "response",
             EVALUATIONS: "evaluation", METADATA: "metadata"}
COMPOSITE = "composite"  # the scorer name of the weighted composite's evaluation rows


class RunFileError(DomainError):
    status = 400
    code = "RUN_FILE_ERROR"


@dataclass
class RunData:
    """A run folder read back: everything a report or a comparison needs."""
    path: Path
    prompt: dict[str, Any]
    cases: list[dict[str, Any]]
    responses: list[dict[str, Any]]
    evaluations: list[dict[str, Any]]
    metadata: dict[str, Any]

    @property
    def id(self) -> str:
        return str(self.metadata["run_id"])


@dataclass
class RunWrite:
    """What a finished run writes (the runner fills it; `write_run` lays it out)."""
    run_id: str
    prompt: dict[str, Any]
    cases: list[dict[str, Any]]
    responses: list[dict[str, Any]]
    evaluations: list[dict[str, Any]]
    metadata: dict[str, Any]
    extra: dict[str, bytes] = field(default_factory=dict)


def iso(moment: datetime | None) -> str | None:
    if moment is None:
        return None
    if moment.tzinfo is None:  # SQLite hands back naive UTC (a run file has thousands)
        return moment.isoformat() + "Z"
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def new_run_id(root: Path, now: datetime | None = None) -> str:
    """run_YYYYMMDD_HHMMSS, with _2, _3... when that second is taken."""
    stamp = (now or datetime.now(UTC)).strftime("run_%Y%m%d_%H%M%S")
    candidate, n = stamp, 1
    while (root / candidate).exists():
        n += 1
        candidate = f"{stamp}_{n}"
    return candidate


@cache
def schema(version: int = SCHEMA_VERSION) -> dict[str, Any]:
    text = resources.files("assay.core.evalcli").joinpath(
        f"schema/run-v{version}.schema.json").read_text()
    return dict(json.loads(text))


@cache
def _validator(definition: str, version: int) -> Any:
    return jsonschema_rs.validator_for({**schema(version), "$ref": f"#/$defs/{definition}"})


def problems(definition: str, document: Any, version: int = SCHEMA_VERSION) -> list[str]:
    """Schema violations of one document (`definition`: index, prompt, case, ...) against
    the schema of `version`."""
    return [f"{'/'.join(map(str, e.instance_path)) or '(root)'}: {e.message}"
            for e in _validator(definition, version).iter_errors(document)]


def check_version(found: Any, where: Path) -> int:
    """`found` when this Assay reads that schema version, else RunFileError."""
    if found not in KNOWN_VERSIONS:
        raise RunFileError(f"{where}: schema_version {found!r} is not "
                           f"{' or '.join(map(str, KNOWN_VERSIONS))}; upgrade Assay to read it")
    return int(found)


def validate_run(path: Path) -> list[str]:
    """Every schema violation in a run folder, as `file[:line] path: message`, against the
    schema of the version its metadata names (the newest when that is unreadable)."""
    try:
        version = json.loads((path / METADATA).read_text()).get("schema_version")
    except (OSError, ValueError, AttributeError):
        version = SCHEMA_VERSION
    if version not in KNOWN_VERSIONS:
        return [f"{METADATA} schema_version: {version!r} is not "
                f"{' or '.join(map(str, KNOWN_VERSIONS))}"]
    found: list[str] = []
    for name, definition in FILE_DEFS.items():
        file = path / name
        if not file.exists():
            found.append(f"{name}: missing")
            continue
        if name.endswith(".jsonl"):
            for number, line in enumerate(file.read_text().splitlines(), 1):
                found += [f"{name}:{number} {p}"
                          for p in problems(definition, json.loads(line), version)]
        else:
            found += [f"{name} {p}"
                      for p in problems(definition, json.loads(file.read_text()), version)]
    return found


def _atomic_write(path: Path, data: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "w") as out:
        out.write(data)
    os.replace(tmp, path)


def _jsonl(rows: Iterable[dict[str, Any]]) -> str:
    # orjson: compact UTF-8 as json.dumps(ensure_ascii=False, separators=(",", ":")) writes
    # it, several times faster over 10,000 rows
    return b"".join(jsonio.dumps_bytes(row) + b"\n" for row in rows).decode()


def write_run(root: Path, run: RunWrite) -> Path:
    """Lay a run out under `root` and add it to the index; returns its folder."""
    folder = root / run.run_id
    folder.mkdir(parents=True, exist_ok=True)
    _atomic_write(folder / PROMPT, json.dumps(run.prompt, indent=2, ensure_ascii=False))
    _atomic_write(folder / CASES, _jsonl(run.cases))
    _atomic_write(folder / RESPONSES, _jsonl(run.responses))
    _atomic_write(folder / EVALUATIONS, _jsonl(run.evaluations))
    for name, data in run.extra.items():
        (folder / name).write_bytes(data)
    _atomic_write(folder / METADATA, json.dumps(run.metadata, indent=2, ensure_ascii=False))
    upsert_index(root, index_entry(run.prompt, run.metadata, run.evaluations))
    return folder


def index_entry(prompt: dict[str, Any], metadata: dict[str, Any],
                evaluations: list[dict[str, Any]]) -> dict[str, Any]:
    composite = [e["value"] for e in evaluations
                 if e["scorer"] == COMPOSITE and e["value"] is not None]
    first = prompt["prompts"][0]["template"] if prompt["prompts"] else ""
    return {"id": metadata["run_id"], "timestamp": metadata["created_at"],
            "name": metadata["name"], "prompt": first[:200],
            "models": [m["name"] for m in prompt["models"]],
            "outputs": metadata["totals"]["outputs"], "status": metadata["status"],
            "average_score": round(sum(composite) / len(composite), 6) if composite else None,
            "cost_micros": metadata["totals"]["cost_micros"] + metadata["totals"][
                "judge_cost_micros"],
            "server_run_url": metadata.get("server_run_url")}


def read_index(root: Path) -> dict[str, Any]:
    path = root / INDEX
    if not path.exists():
        return {"schema_version": SCHEMA_VERSION, "runs": []}
    index = json.loads(path.read_text())
    check_version(index.get("schema_version"), path)
    # entries are alike in every version: the index is rewritten in the newest
    return {**index, "schema_version": SCHEMA_VERSION}


def upsert_index(root: Path, entry: dict[str, Any]) -> None:
    index = read_index(root)
    index["runs"] = [r for r in index["runs"] if r["id"] != entry["id"]] + [entry]
    index["runs"].sort(key=lambda r: (r["timestamp"], r["id"]))
    root.mkdir(parents=True, exist_ok=True)
    _atomic_write(root / INDEX, json.dumps(index, indent=2, ensure_ascii=False))


def rebuild_index(root: Path) -> dict[str, Any]:
    """The index from the run folders (after a folder was copied in or deleted by hand)."""
    runs = []
    for folder in sorted(root.glob("run_*")):
        if (folder / METADATA).exists():
            run = read_run(folder)
            runs.append(index_entry(run.prompt, run.metadata, run.evaluations))
    index = {"schema_version": SCHEMA_VERSION,
             "runs": sorted(runs, key=lambda r: (r["timestamp"], r["id"]))}
    root.mkdir(parents=True, exist_ok=True)
    _atomic_write(root / INDEX, json.dumps(index, indent=2, ensure_ascii=False))
    return index


def _read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    with path.open() as lines:
        for line in lines:
            if line.strip():
                yield json.loads(line)


def resolve(root: Path, ref: str) -> Path:
    """A run folder from a path, a run id under `root`, or `latest`."""
    given = Path(ref)
    if (given / METADATA).exists():
        return given
    if ref == "latest":
        runs = read_index(root)["runs"]
        if not runs:
            raise RunFileError(f"no runs in {root}")
        ref = runs[-1]["id"]
    folder = root / ref
    if (folder / METADATA).exists():
        return folder
    raise RunFileError(f"no run {ref!r} (looked in {given} and {folder})")


def read_run(path: Path) -> RunData:
    try:
        metadata = json.loads((path / METADATA).read_text())
        check_version(metadata.get("schema_version"), path / METADATA)
        return RunData(path, json.loads((path / PROMPT).read_text()),
                       list(_read_jsonl(path / CASES)), list(_read_jsonl(path / RESPONSES)),
                       list(_read_jsonl(path / EVALUATIONS)), metadata)
    except (OSError, ValueError) as exc:
        raise RunFileError(f"{path}: not a readable run folder ({exc})") from exc


def remove_run(root: Path, ref: str) -> str:
    folder = resolve(root, ref)
    run_id = folder.name
    shutil.rmtree(folder)
    index = read_index(root)
    index["runs"] = [r for r in index["runs"] if r["id"] != run_id]
    _atomic_write(root / INDEX, json.dumps(index, indent=2, ensure_ascii=False))
    return run_id
