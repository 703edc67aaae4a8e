"""The RAG summary per model (GET /reports/rag): each metric's mean of case means with its
bootstrap interval, the judges' average, the share of judgements with metrics and the
judged answers' latency percentiles, equal to the numbers worked out from the rows."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import update

from assay.core.reports.uncertainty import mean_ci
from assay.core.scoring.models import Score
from assay.extensions import db
from tests.api import report_data as rd
from tests.api.test_reports import REPORTS, check_rate, get, query_error
from tests.factories import Factory


def _details(g: int, r: int, latency: int) -> dict[str, Any]:
    scores = {"groundedness": g, "relevance": r, "coherence": 4, "fluency": 5}
    return {"metrics": {**scores, "latency_ms": latency,
                        "average_score": sum(scores.values()) / 4}}


def test_rag_summary_per_model(factory: Factory) -> None:
    owner = factory.user()
    project = factory.project(owner, "RAG")
    browser = factory.login(owner)
    url = REPORTS.format(project.id) + "/rag"
    empty = get(browser, url)
    assert (empty["scorer"], empty["items"]) == (None, [])
    assert empty["metrics"] == ["groundedness", "relevance", "coherence", "fluency"]

    fast, smart = rd.models(owner, project)
    data = rd.dataset(project, rd.questions(3))
    check, _ = rd.scorer(project, "Exact", kind="exact_match")
    rag, (version,) = rd.scorer(project, "RAG", kind="rag_metrics")
    run = rd.run(project, data.version_id, [(fast, "Fast"), (smart, "Smart")])
    c0, c1, c2 = data.case_ids
    # Fast: three cases judged, one judgement failed (no metrics); Smart: one case
    rows = [(c0, 0, 5, 3, 100), (c1, 0, 3, 3, 300), (c2, 0, None, None, 200),
            (c0, 1, 4, 4, 50)]
    for case_id, target, g, r, latency in rows:
        output_id = rd.output(run, case_id, target, latency_ms=latency)
        details = {} if g is None else _details(g, r, latency)
        rd.score(output_id, version, None if g is None else 0.75, None, source="judge",
                 kind="rag_metrics", error="reply rejected" if g is None else None)
        _set_details(output_id, details)

    body = get(browser, url)
    assert body["scorer"] == {"id": rag, "name": "RAG", "kind": "rag_metrics", "versions": [1]}
    by_name = {m["model_name"]: m for m in body["items"]}
    fast_row = by_name["Fake Fast"]
    assert (fast_row["judgements"], fast_row["outputs"]) == (3, 2)
    check_rate(fast_row["success_rate"], 2, 3)
    grounded = next(m for m in fast_row["metrics"] if m["name"] == "groundedness")
    expected = mean_ci({c0: 5.0, c1: 3.0}, 2)
    assert grounded["mean"] == pytest.approx(4.0)
    assert (grounded["low"], grounded["high"]) == (pytest.approx(expected["low"]),
                                                   pytest.approx(expected["high"]))
    assert fast_row["average"]["mean"] == pytest.approx(((5 + 3 + 4 + 5) / 4
                                                         + (3 + 3 + 4 + 5) / 4) / 2)
    assert (fast_row["latency_p50_ms"], fast_row["latency_p95_ms"]) == (100, 300)
    smart_row = by_name["Fake Smart"]
    assert smart_row["average"]["mean"] == pytest.approx(4.25)
    assert smart_row["average"]["low"] is None  # one case: no interval
    assert [m["model_name"] for m in body["items"]] == ["Fake Smart", "Fake Fast"]  # best first

    query_error(browser, url, "scorer_id", scorer_id=check)  # not a RAG scorer
    assert get(browser, url, dataset_id=rd.dataset(project, rd.questions(1), "Other")
               .dataset_id)["items"] == []


def _set_details(output_id: int, details: dict[str, Any]) -> None:
    with db.factory() as session:
        session.execute(update(Score).where(Score.output_id == output_id)
                        .values(details=details))
        session.commit()
