"""The report PDF of a demo experiment the shipped fake provider ran to convergence (each
suggestion approved over HTTP), downloaded over HTTP: read back with pdftotext, every
section's heading is there and its numbers are the database's (the iterations' composites,
the criteria's means, the cost by phase, the best prompt and its diff from the seed); pages
1 and 2 rendered with pdftoppm show the chart (both series' colours, not a blank box) and
the tables; the same experiment downloads as the same bytes."""

from __future__ import annotations

import difflib
import re
import statistics
import subprocess
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from assay.core.experiments.models import Experiment, Iteration
from assay.core.prompts.models import PromptVersion
from assay.extensions import db
from assay.providers.fake import FakeProviderThread
from assay.settings import Settings
from tests.engine.experiment_setup import experiment, iterations, recorded  # noqa: F401
from tests.engine.test_experiment_fake_refiner import build_demo
from tests.engine.test_experiment_loop import Calls, drive
from tests.engine.test_providers_engine import fake  # noqa: F401
from tests.factories import Factory, Session

BLUE, ORANGE = (37, 99, 235), (234, 88, 12)  # report_chart's refinement, held-out


def _finished(factory: Factory, fake: FakeProviderThread,  # noqa: F811
              recorded: Calls) -> tuple[Session, str, int]:  # noqa: F811
    project, experiment_id, owner = build_demo(factory, fake)
    me = factory.login(owner)
    base = f"/api/projects/{project.id}/experiments/{experiment_id}"
    for number in range(1, 9):
        drive(recorded)
        if experiment(experiment_id).status != "running":
            break
        assert me.post(f"{base}/iterations/{number}/approve", json={}).status_code == 200
    assert experiment(experiment_id).status == "completed"
    return me, base, experiment_id


def _pdftotext(path: Path, *args: str) -> str:
    return subprocess.run(["pdftotext", "-enc", "UTF-8", *args, str(path), "-"],
                          capture_output=True, text=True, check=True).stdout


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def _usd(micros: int) -> str:
    return f"${micros / 1_000_000:,.4f}"


def _near(pixel: tuple[int, ...], colour: tuple[int, int, int]) -> bool:
    return all(abs(a - b) <= 40 for a, b in zip(pixel[:3], colour, strict=True))


@pytest.fixture
def finished(factory: Factory, fake: FakeProviderThread,  # noqa: F811
             recorded: Calls, tmp_path: Path) -> tuple[Session, str, int, Path]:  # noqa: F811
    me, base, experiment_id = _finished(factory, fake, recorded)
    reply = me.get(f"{base}/report/export?format=pdf")
    assert reply.status_code == 200 and reply.content_type == "application/pdf"
    (tmp_path / "report.pdf").write_bytes(reply.data)
    return me, base, experiment_id, tmp_path / "report.pdf"


def test_every_section_says_what_the_database_says(
        finished: tuple[Session, str, int, Path], settings: Settings) -> None:
    me, base, experiment_id, pdf = finished
    text = _flat(_pdftotext(pdf))
    report = me.get(f"{base}/report").json
    with db.factory() as session:
        done = session.get(Experiment, experiment_id)
        assert done is not None
        its = iterations(experiment_id)
        seed = session.get(PromptVersion, done.seed_prompt_version_id)
        best = session.get(PromptVersion, report["best"]["prompt_version_id"])
        assert seed is not None and best is not None and best.id != seed.id
        session.expunge_all()
    pages = int(re.findall(r"Page \d+ of (\d+)", text)[0])
    assert pages >= 3 and all(f"Page {n} of {pages}" in text for n in range(1, pages + 1))
    for heading in ("Composite per iteration", "Findings", "Iterations",
                    "Criteria per iteration", "Cost by phase", "Next steps",
                    f"Best prompt (version {best.number})",
                    f"Changes from the seed prompt (version {seed.number})"):
        assert heading in text, heading
    # summary: the objective, the key figures and the stop reason
    assert done.config["objective"]["goal"][:60] in text
    best_it = next(i for i in its if i.number == report["best"]["iteration"])
    held = report["first_vs_last"]["holdout"]
    assert best_it.holdout_composite is not None
    assert (f"Iterations Best composite Held-out Δ Total cost {len(its)} "
            f"{best_it.holdout_composite:.3f} {held['mean_difference']:+.3f} "
            f"{_usd(done.spent_micros)}") in text
    assert f"{_ci(report['best']['score'])} on held-out cases, iteration {best_it.number}" in text
    # the verdict is the paired rule's (interval and exact test): with a few held-out cases
    # an improvement can be "not distinguishable"
    said = {"B better": "the last is better"}.get(held["verdict"], held["verdict"])
    assert (f"held-out cases: {said}, difference {held['mean_difference']:+.3f} "
            f"[{held['low']:+.3f}, {held['high']:+.3f}] over {held['n']} cases") in text
    assert held["mean_difference"] > 0  # the demo improves on cases the refiner never saw
    assert f"Stop reason: {done.stop_detail}" in text
    # iterations: each composite the loop stored, with its interval
    for it, row in zip(its, report["iterations"], strict=True):
        assert it.refinement_composite is not None and it.holdout_composite is not None
        assert f"{it.refinement_composite:.3f} {_ci(row['refinement'])}" in text
        assert f"{it.holdout_composite:.3f} {_ci(row['holdout'])}" in text
    # criteria: each iteration's means on all and on held-out cases, from its aggregate
    for it in its:
        entry = next(iter((it.aggregate or {})["models"].values()))
        for name, ci in entry["all"]["criteria"].items():
            assert name in text
            held_mean = entry["holdout"]["criteria"][name]["mean"]
            assert f"{ci['mean']:.3f} · {held_mean:.3f}" in text, (it.number, name)
    # cost by phase: the experiment's and each iteration's charges
    for micros in (done.execution_micros, done.judging_micros, done.refinement_micros,
                   done.spent_micros):
        assert _usd(micros) in text
    for it in its:
        assert (f"{it.number} {_usd(it.execution_micros)} {_usd(it.judging_micros)} "
                f"{_usd(it.refinement_micros)}") in text
    # the best prompt, and its changes from the seed marked line by line
    for line in best.template.splitlines():
        assert _flat(line).strip() in text
    changed = [d for d in difflib.ndiff(seed.template.splitlines(),
                                        best.template.splitlines()) if d[:1] in "+-"]
    assert changed
    for line in changed:
        assert _flat(f"{line[0]} {line[2:]}").strip() in text, line


def _ci(score: dict[str, Any]) -> str:
    return f"[{score['low']:.3f}, {score['high']:.3f}]"


def _word_boxes(pdf: Path, page: int) -> list[tuple[str, float, float, float, float]]:
    html = _pdftotext(pdf, "-bbox", "-f", str(page), "-l", str(page))
    return [(w, float(a), float(b), float(c), float(d)) for a, b, c, d, w in re.findall(
        r'<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)<',
        html)]


def test_pages_one_and_two_render_the_chart_and_the_tables(
        finished: tuple[Session, str, int, Path]) -> None:
    me, base, _, pdf = finished
    out = pdf.parent / "page"
    subprocess.run(["pdftoppm", "-r", "72", "-f", "1", "-l", "2", "-png", str(pdf),
                    str(out)], check=True)
    first, second = (Image.open(p).convert("RGB") for p in sorted(pdf.parent.glob("page*.png")))
    # the chart: the box below its heading (at 72 dpi a pixel is a PDF point)
    words = _word_boxes(pdf, 1)
    heading = next(b for i, b in enumerate(words)
                   if b[0] == "Composite" and words[i + 1][0] == "per")
    top = int(heading[4]) + 8
    chart = first.crop((int(15 / 25.4 * 72), top, int(195 / 25.4 * 72),
                        top + int(78 / 25.4 * 72)))
    pixels = list(chart.get_flattened_data())
    assert statistics.pstdev(sum(p) / 3 for p in pixels) > 10  # not a blank box
    blue = sum(_near(p, BLUE) for p in pixels)
    orange = sum(_near(p, ORANGE) for p in pixels)
    assert blue > 100 and orange > 100, (blue, orange)  # both series drawn
    # page 2: the tables, not an empty page
    grey = [sum(p) / 3 for p in second.get_flattened_data()]
    assert sum(v < 128 for v in grey) > 2000
    assert statistics.pstdev(grey) > 10
    again = me.get(f"{base}/report/export?format=pdf")
    assert again.data == pdf.read_bytes()  # the same experiment, the same bytes


def test_iterations_have_criteria_phases_and_the_held_out_delta(
        finished: tuple[Session, str, int, Path]) -> None:
    """The report's iteration rows carry what the PDF prints: the criteria of the headline
    model, the cost of each phase and the paired held-out difference from the previous."""
    me, base, experiment_id, _ = finished
    rows = me.get(f"{base}/report").json["iterations"]
    with db.factory() as session:
        stored = {i.number: i for i in session.query(Iteration).filter_by(
            experiment_id=experiment_id)}
    assert rows[0]["holdout_delta"] is None  # nothing before the first
    for row in rows:
        it = stored[row["number"]]
        assert row["phases"] == {"execution_micros": it.execution_micros,
                                 "judging_micros": it.judging_micros,
                                 "refinement_micros": it.refinement_micros}
        entry = (it.aggregate or {})["models"][row["model"]]
        assert {n: c["all"] for n, c in row["criteria"].items()} == {
            n: c["mean"] for n, c in entry["all"]["criteria"].items()}
        if row["number"] > 1:
            delta = (it.aggregate or {})["delta"][row["model"]]["holdout"]
            assert row["holdout_delta"]["mean_difference"] == delta["mean_difference"]
