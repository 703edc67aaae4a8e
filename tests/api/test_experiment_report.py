"""The final report from the tables, and every export: the PDF read back with pdftotext
(Unicode included), Markdown, the best prompt, the results CSV, and a bundle that imports
back into a new draft; a file that is not a bundle is refused and nothing is written."""

from __future__ import annotations

import base64
import csv
import io
import subprocess
import zipfile
from typing import Any

import pytest
from sqlalchemy import func, select

from assay.core.experiments.models import Experiment
from assay.core.projects.models import Role
from assay.extensions import db
from tests.experiment_seed import Seeded, seed
from tests.factories import Factory, Session


@pytest.fixture
def seeded(factory: Factory) -> tuple[Session, int, Seeded, Any]:
    owner = factory.user()
    project = factory.project(owner, "Reports")
    with db.factory() as session:
        found = seed(session, session.merge(owner), session.merge(project),
                     factory.settings.fake_provider_url, iterations=4, cases=20, peak=2)
        session.commit()
    return factory.login(owner), project.id, found, project


def _url(pid: int, seeded: Seeded, tail: str) -> str:
    return f"/api/projects/{pid}/experiments/{seeded.experiment_id}{tail}"


def test_the_report_picks_the_best_version_on_held_out_cases(
        seeded: tuple[Session, int, Seeded, Any]) -> None:
    browser, pid, found, _ = seeded
    reply = browser.get(_url(pid, found, "/report"))
    assert reply.status_code == 200, reply.json
    report = reply.json
    rows = report["iterations"]
    assert [r["number"] for r in rows] == [1, 2, 3, 4]
    # held-out cases stop improving after iteration 2: 3 and 4 gained only on refinement
    assert [r["likely_overfitting"] for r in rows] == [False, False, True, True]
    assert report["best"]["iteration"] == 2 and report["best"]["chosen_on"] == "holdout"
    for row in rows:
        assert row["holdout"]["n"] == len(found.holdout)
        assert row["all"]["low"] <= row["all"]["mean"] <= row["all"]["high"]
    first_last = report["first_vs_last"]
    assert first_last["all"]["verdict"] == "B better"
    assert first_last["holdout"]["n"] == len(found.holdout)
    gain = (len(found.refinement) * 0.15 + len(found.holdout) * 0.05) / 20
    assert first_last["all"]["mean_difference"] == pytest.approx(gain, abs=1e-6)
    assert first_last["holdout"]["mean_difference"] == pytest.approx(0.05, abs=1e-6)
    assert report["cost"] == {"execution_micros": 1_200_000, "judging_micros": 800_000,
                              "refinement_micros": 90_000, "assist_micros": 5_000,
                              "total_micros": 2_095_000}
    assert report["tokens"] == {"input": 123_456, "output": 65_432}
    assert report["recommended_model"]["model_id"] == report["models"][0]["model_id"]
    assert report["models"][0]["score"]["mean"] > report["models"][1]["score"]["mean"]
    assert report["weak_criteria"][0]["name"] == "Tone"
    assert any("overfitting" not in s and "Tone" in s for s in report["next_steps"])
    assert report["best_prompt"]["number"] == 2


def _download(browser: Session, url: str) -> bytes:
    reply = browser.get(url)
    assert reply.status_code == 200, reply.data[:300]
    assert "attachment" in reply.headers["Content-Disposition"]
    return bytes(reply.data)


def test_every_export(seeded: tuple[Session, int, Seeded, Any], tmp_path: Any) -> None:
    browser, pid, found, _ = seeded
    base = _url(pid, found, "/report/export?format=")
    pdf = _download(browser, base + "pdf")
    assert pdf.startswith(b"%PDF")
    (tmp_path / "r.pdf").write_bytes(pdf)
    text = subprocess.run(["pdftotext", "-enc", "UTF-8", str(tmp_path / "r.pdf"), "-"],
                          capture_output=True, text=True, check=True).stdout
    assert "EXPERIMENT REPORT" in text and "Seeded — support answers" in text
    assert "Best version" in text
    assert "Held-out cases" in text and "Cost by phase" in text
    # DejaVu has no CJK glyphs: the PDF still renders (those characters draw as blanks)
    assert "$2.0950" in text and "ünïcödé" in text and "✓" in text
    md = _download(browser, base + "md").decode()
    assert md.startswith("# Experiment report") and "| 3 | v3 |" in md
    assert "likely overfitting" in md
    txt = _download(browser, base + "prompt-txt").decode()
    assert "Step 2: be specific." in txt and "Step 3" not in txt
    assert "## Prompt" in _download(browser, base + "prompt-md").decode()
    rows = list(csv.reader(io.StringIO(_download(browser, base + "csv").decode())))
    assert rows[0][:4] == ["iteration", "prompt_version_id", "split", "case_id"]
    assert len(rows) == 1 + 4 * 20 * 2
    assert {r[2] for r in rows[1:]} == {"holdout", "refinement"}
    assert browser.get(base + "docx").status_code == 422


def test_a_bundle_imports_back_into_a_new_draft(
        seeded: tuple[Session, int, Seeded, Any], factory: Factory) -> None:
    browser, pid, found, project = seeded
    raw = _download(browser, _url(pid, found, "/report/export?format=bundle"))
    with zipfile.ZipFile(io.BytesIO(raw)) as z:
        names = set(z.namelist())
        assert {"experiment.yaml", "prompts.yaml", "cases.jsonl", "results.csv",
                "report.md", "prompts/v1.txt", "prompts/v4.txt"} <= names
    url = f"/api/projects/{pid}/experiments/import"
    reply = browser.post(url, data={"file": (io.BytesIO(raw), "bundle.zip")},
                         content_type="multipart/form-data")
    assert reply.status_code == 201, reply.json
    draft = reply.json
    assert draft["status"] == "draft" and draft["name"].endswith("(imported)")
    assert draft["config"]["rubric"]["criteria"][1]["name"] == "Tone"
    version = draft["config"]["data"]["dataset_version_id"]
    cases = browser.get(f"/api/projects/{pid}/datasets").json["items"]
    assert any(d["case_count"] == 20 for d in cases) and version is not None
    again = browser.post(url, json={"content": base64.b64encode(raw).decode()})
    assert again.status_code == 201
    viewer = factory.login(factory.member(project, Role.viewer))
    assert viewer.post(url, json={"content": base64.b64encode(raw).decode()}
                       ).status_code == 403


@pytest.mark.parametrize("body", [b"not a zip", b"PK\x03\x04broken"])
def test_a_file_that_is_not_a_bundle_writes_nothing(
        seeded: tuple[Session, int, Seeded, Any], body: bytes) -> None:
    browser, pid, _, _ = seeded
    url = f"/api/projects/{pid}/experiments/import"
    before = _experiments()
    reply = browser.post(url, data={"file": (io.BytesIO(body), "x.zip")},
                         content_type="multipart/form-data")
    assert reply.status_code == 422 and "file" in reply.json["errors"]["files"], reply.json
    reply = browser.post(url, json={"content": base64.b64encode(body).decode()})
    assert reply.status_code == 422 and "content" in reply.json["errors"]["json"]
    assert browser.post(url, json={"content": "%%%"}).status_code == 422
    empty = io.BytesIO()
    with zipfile.ZipFile(empty, "w") as z:
        z.writestr("experiment.yaml", "format: other/1\nconfig: {}\n")
    reply = browser.post(url, json={"content": base64.b64encode(empty.getvalue()).decode()})
    assert reply.status_code == 422 and "format" in reply.json["message"]
    assert _experiments() == before


def _experiments() -> int:
    with db.factory() as session:
        return session.scalar(select(func.count()).select_from(Experiment)) or 0


def test_without_a_unicode_font_the_pdf_falls_back_to_latin_1(
        seeded: tuple[Session, int, Seeded, Any], monkeypatch: pytest.MonkeyPatch,
        tmp_path: Any) -> None:
    monkeypatch.setattr("assay.core.experiments.report_pdf.FONT_PATHS", ())
    monkeypatch.delenv("ASSAY_PDF_FONT", raising=False)
    browser, pid, found, _ = seeded
    pdf = _download(browser, _url(pid, found, "/report/export?format=pdf"))
    (tmp_path / "r.pdf").write_bytes(pdf)
    text = subprocess.run(["pdftotext", "-enc", "UTF-8", str(tmp_path / "r.pdf"), "-"],
                          capture_output=True, text=True, check=True).stdout
    assert "Seeded ? support answers ?" in text and "ünïcödé" in text  # Latin-1 kept


def test_the_report_says_what_the_loops_aggregate_says(
        seeded: tuple[Session, int, Seeded, Any]) -> None:
    """A judge whose own score is the plain mean of its criteria: the report's composites
    are still the rubric's weighted ones, the very numbers the iteration stored (and the
    dashboard shows), with their intervals."""
    from assay.core.experiments.aggregate import criterion_means
    from assay.core.scoring.models import Score

    browser, pid, found, _ = seeded
    with db.factory() as session:
        for score in session.scalars(select(Score)):
            score.value = sum(score.criteria.values()) / len(score.criteria)
        session.commit()
    report = browser.get(_url(pid, found, "/report")).json
    stored = [browser.get(_url(pid, found, f"/iterations/{n}")).json for n in range(1, 5)]
    assert len(stored) == len(report["iterations"]) == 4
    for row, it in zip(report["iterations"], stored, strict=True):
        best = it["aggregate"]["best_model"]
        assert row["model"] == best
        for split in ("all", "refinement", "holdout"):
            assert row[split] == it["aggregate"]["models"][best][split]["composite"]
            assert row[split]["low"] < row[split]["mean"] < row[split]["high"]
        assert row["all"]["mean"] == it["composite"]
        assert row["holdout"]["mean"] == it["holdout_composite"]
        plain = [s for s in _plain_means(it["run_id"]) if s is not None]
        assert abs(row["all"]["mean"] - sum(plain) / len(plain)) > 0.01  # not the judge's
    chosen = stored[report["best"]["iteration"] - 1]["aggregate"]
    assert {m["name"]: m["score"] for m in report["models"]} == {
        name: entry["all"]["composite"] for name, entry in chosen["models"].items()}
    means = criterion_means(chosen["models"], "all")
    assert {w["name"]: w["mean"] for w in report["weak_criteria"]} == {
        n: means[n] for n in sorted(means, key=means.__getitem__)[:2]}
    first, last = stored[0]["aggregate"], stored[-1]["aggregate"]
    target = last["best_model"]
    a, b = first["cases"][target], last["cases"][target]
    gain = sum(b[c] - a[c] for c in a) / len(a)
    assert report["first_vs_last"]["all"]["mean_difference"] == pytest.approx(gain)


def _plain_means(run_id: int) -> list[float | None]:
    from assay.core.scoring.models import Score

    with db.factory() as session:
        return list(session.scalars(select(Score.value).where(Score.run_id == run_id)))


def _words(pdf: Any) -> list[tuple[str, float]]:
    """Each word of the PDF with its right edge, in points."""
    import re

    html = subprocess.run(["pdftotext", "-bbox", str(pdf), "-"], capture_output=True,
                          text=True, check=True).stdout
    return [(w, float(x)) for x, w in re.findall(r'xMax="([\d.]+)"[^>]*>([^<]*)<', html)]


def test_long_prompt_lines_wrap_inside_the_page(
        seeded: tuple[Session, int, Seeded, Any], tmp_path: Any) -> None:
    """A best prompt with an unbroken 300-character token and a 60-word line: every
    character is printed, and no word reaches past the right margin (15 mm)."""
    from assay.core.experiments.models import Iteration
    from assay.core.prompts.models import PromptVersion

    browser, pid, found, _ = seeded
    token = "x" * 300
    prose = " ".join(f"word{i}" for i in range(60))
    with db.factory() as session:
        best = session.scalar(select(Iteration.prompt_version_id).where(
            Iteration.experiment_id == found.experiment_id, Iteration.number == 2))
        version = session.get(PromptVersion, best)
        assert version is not None
        version.template = f"{token}\n{prose}\nAnswer: {{{{question}}}}"
        session.commit()
    (tmp_path / "r.pdf").write_bytes(_download(browser, _url(pid, found,
                                                             "/report/export?format=pdf")))
    words = _words(tmp_path / "r.pdf")
    assert max(x for _, x in words) <= (210 - 15) / 25.4 * 72 + 1
    text = "".join(w for w, _ in words)
    assert token in text and "word59" in text
    assert "+xxxx" in text  # the diff from the seed marks the added lines


def test_an_experiment_without_iterations_still_has_a_report(
        factory: Factory, tmp_path: Any) -> None:
    owner = factory.user()
    project = factory.project(owner, "Empty")
    with db.factory() as session:
        found = seed(session, session.merge(owner), session.merge(project),
                     factory.settings.fake_provider_url, iterations=0, cases=6)
        session.commit()
    browser = factory.login(owner)
    pdf = _download(browser, _url(project.id, found, "/report/export?format=pdf"))
    (tmp_path / "r.pdf").write_bytes(pdf)
    text = subprocess.run(["pdftotext", "-enc", "UTF-8", str(tmp_path / "r.pdf"), "-"],
                          capture_output=True, text=True, check=True).stdout
    assert "No iteration has scores yet." in text and "No iterations ran." in text
    assert "Page 1 of 3" in text
