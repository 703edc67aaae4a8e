"""Run files: written, indexed, read back, and valid against their JSON schema."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.core.evalcli import runfiles
from assay.core.evalcli.fixture import write_fixture_run


def test_fixture_run_is_valid_and_indexed(tmp_path: Path) -> None:
    folder = write_fixture_run(tmp_path, outputs=60, models=3, seed=1)
    assert runfiles.validate_run(folder) == []
    index = json.loads((tmp_path / "index.json").read_text())
    assert runfiles.problems("index", index) == []
    [entry] = index["runs"]
    assert entry["id"] == folder.name and entry["outputs"] == 60
    run = runfiles.read_run(folder)
    assert len(run.responses) == 60 and {r["model"] for r in run.responses} == {
        "gpt-4o-mini", "claude-haiku", "llama3"}
    # the summary counts what the files hold
    for row in run.metadata["summary"]:
        mine = [r for r in run.responses if r["model"] == row["model"]]
        assert row["outputs"] == len(mine)
        assert row["cost_micros"] == sum(r["cost_micros"] for r in mine)
    composite = [e for e in run.evaluations if e["scorer"] == runfiles.COMPOSITE]
    assert len(composite) == run.metadata["totals"]["succeeded"]


def test_schema_catches_a_broken_file(tmp_path: Path) -> None:
    folder = write_fixture_run(tmp_path, outputs=6, models=2)
    lines = (folder / "responses.jsonl").read_text().splitlines()
    row = json.loads(lines[1])
    row["cost_micros"] = -5
    del row["tokens"]
    lines[1] = json.dumps(row)
    (folder / "responses.jsonl").write_text("\n".join(lines) + "\n")
    found = runfiles.validate_run(folder)
    assert any(p.startswith("responses.jsonl:2 cost_micros") for p in found), found
    assert any("tokens" in p for p in found), found


def test_ids_do_not_collide_and_rm_updates_the_index(tmp_path: Path) -> None:
    a = write_fixture_run(tmp_path, outputs=4, models=2)
    b = write_fixture_run(tmp_path, outputs=4, models=2)  # same start second
    assert a.name != b.name and b.name.endswith("_2")
    assert [r["id"] for r in runfiles.read_index(tmp_path)["runs"]] == [a.name, b.name]
    assert runfiles.resolve(tmp_path, "latest") == b
    runfiles.remove_run(tmp_path, a.name)
    assert not a.exists()
    assert [r["id"] for r in runfiles.read_index(tmp_path)["runs"]] == [b.name]
    (tmp_path / "index.json").unlink()
    assert [r["id"] for r in runfiles.rebuild_index(tmp_path)["runs"]] == [b.name]


def test_unknown_schema_version_is_refused(tmp_path: Path) -> None:
    folder = write_fixture_run(tmp_path, outputs=4, models=2)
    meta = json.loads((folder / "metadata.json").read_text())
    meta["schema_version"] = 99
    (folder / "metadata.json").write_text(json.dumps(meta))
    with pytest.raises(runfiles.RunFileError, match="schema_version 99"):
        runfiles.read_run(folder)
    with pytest.raises(runfiles.RunFileError, match="no run"):
        runfiles.resolve(tmp_path, "run_19990101_000000")


def _as_version_1(root: Path, folder: Path) -> None:
    """Rewrite a run as Assay wrote it before the judges' confidence (schema version 1)."""
    meta = json.loads((folder / "metadata.json").read_text())
    for row in meta["summary"]:
        del row["confidence"]
        row.pop("prompt", None)  # version 3
        for scorer in row["scorers"].values():
            del scorer["confidence"]
    for name, doc in (("metadata.json", meta),
                      ("prompt.json", json.loads((folder / "prompt.json").read_text())),
                      ("../index.json", json.loads((root / "index.json").read_text()))):
        doc["schema_version"] = 1
        (folder / name).write_text(json.dumps(doc))


def test_version_2_carries_the_judges_confidence(tmp_path: Path) -> None:
    folder = write_fixture_run(tmp_path, outputs=12, models=2, seed=3)
    run = runfiles.read_run(folder)
    assert run.metadata["schema_version"] == runfiles.SCHEMA_VERSION == 3
    for row in run.metadata["summary"]:
        judged = [e["confidence"] for e in run.evaluations
                  if e["model"] == row["model"] and e["scorer"] == "rubric"]
        assert row["confidence"] == {"mean": round(sum(judged) / len(judged), 6),
                                     "n": len(judged)}
        assert row["scorers"]["mentions-answer"]["confidence"] is None
    # a confidence outside 0..1, or a summary without one, is not version 2 (nor 3)
    meta = json.loads((folder / "metadata.json").read_text())
    del meta["summary"][0]["confidence"]
    (folder / "metadata.json").write_text(json.dumps(meta))
    lines = (folder / "evaluations.jsonl").read_text().splitlines()
    rows = [json.loads(line) for line in lines]
    judged_at = next(i for i, r in enumerate(rows) if r["scorer"] == "rubric")
    rows[judged_at]["confidence"] = 7
    (folder / "evaluations.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    found = runfiles.validate_run(folder)
    assert any(p.startswith(f"evaluations.jsonl:{judged_at + 1} confidence") for p in found)
    assert any(p.startswith("metadata.json summary/0") and "confidence" in p for p in found)


def test_version_1_runs_still_read_validate_and_show(tmp_path: Path) -> None:
    from rich.console import Console

    from assay.cli.tables import results_table

    old = write_fixture_run(tmp_path, outputs=6, models=2)
    _as_version_1(tmp_path, old)
    assert runfiles.validate_run(old) == []  # against run-v1.schema.json
    run = runfiles.read_run(old)
    assert run.metadata["schema_version"] == 1
    console = Console(width=120, record=True)
    console.print(results_table(run))
    assert "conf." not in console.export_text()  # no confidence in a version 1 run
    # the index is read in version 1 and written in the newest with the next run
    assert runfiles.read_index(tmp_path)["runs"][0]["id"] == old.name
    new = write_fixture_run(tmp_path, outputs=6, models=2)
    index = json.loads((tmp_path / "index.json").read_text())
    assert index["schema_version"] == 3 and [r["id"] for r in index["runs"]] == [
        old.name, new.name]
    assert runfiles.problems("index", index) == []
    console.print(results_table(runfiles.read_run(new)))
    assert "conf." in console.export_text()
