"""The seeded demo tour, made by the real engine over the fake provider: a dataset
generated from the PDF in seeds/, two scored runs over three fake models, manual scores,
judge mode; seeding again changes nothing."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select

from assay.core.datasets.models import Dataset, Document
from assay.core.experiments.models import Iteration
from assay.core.llm.models import ModelConfig
from assay.core.runs.models import Run, RunStatus, RunTarget
from assay.core.scoring.models import Score, ScorerConfig, ScorerVersion
from assay.demo_tour import BASELINE, DATASET, WITH_FAQ
from assay.extensions import db
from assay.runtime import current
from assay.seeds import DEMO_PASSWORD, seed_demo
from tests.factories import Factory


def counts() -> dict[str, Any]:
    with db.factory() as session:
        return {table.__name__: session.scalar(select(func.count()).select_from(table))
                for table in (Dataset, Document, ModelConfig, Run, Score, ScorerConfig)}


def means(run_name: str, scorer: str) -> dict[str, float]:
    with db.factory() as session:
        rows = session.execute(
            select(func.coalesce(ModelConfig.name, RunTarget.label), func.avg(Score.value),
                   func.count(Score.error))
            .join(Run, Run.id == Score.run_id).join(RunTarget, RunTarget.id == Score.target_id)
            .outerjoin(ModelConfig, ModelConfig.id == RunTarget.model_id)
            .join(ScorerVersion, ScorerVersion.id == Score.scorer_version_id)
            .join(ScorerConfig, ScorerConfig.id == ScorerVersion.scorer_id)
            .where(Run.name == run_name, ScorerConfig.name == scorer)
            .group_by(func.coalesce(ModelConfig.name, RunTarget.label))).all()
    assert all(errors == 0 for _, _, errors in rows), rows
    return {label: float(mean) for label, mean, _ in rows}


def test_the_demo_tour_is_seeded_once_with_everything_scored(factory: Factory) -> None:
    with db.factory() as session:
        demo, project = seed_demo(session, factory.settings, current())
        demo_id, project_id = demo.id, project.id
    with db.factory() as session:
        dataset = session.scalars(select(Dataset).where(Dataset.name == DATASET)).one()
        assert dataset.kind == "conversations" and dataset.project_id == project_id
        document = session.scalars(select(Document)).one()
        assert (document.name, document.pages) == ("acme-cloud-faq.pdf", 1)
        runs = {r.name: r for r in session.scalars(select(Run).where(  # not the experiment's
            Run.id.not_in(select(Iteration.run_id).where(Iteration.run_id.is_not(None)))))}
        assert set(runs) >= {BASELINE, WITH_FAQ} and len(runs) == 3
        assert all(r.status == RunStatus.completed for r in runs.values())
        assert (runs[BASELINE].total, runs[BASELINE].succeeded) == (36, 36)

    rubric = means(BASELINE, "Answer quality (rubric)")
    assert set(rubric) == {"Fake Fast", "Fake Smart", "Fake Mini"}
    assert rubric["Fake Mini"] < rubric["Fake Fast"] < rubric["Fake Smart"]  # models differ
    assert len(means(BASELINE, "RAG metrics")) == 3
    assert len(means(BASELINE, "Close to the FAQ answer")) == 3
    grounded = means(WITH_FAQ, "RAG metrics")  # the smart model quotes the FAQ it is given
    assert grounded["Fake Smart"] > means(BASELINE, "RAG metrics")["Fake Smart"]
    assert grounded["Fake Smart"] > grounded["Fake Fast"]
    assert means(f"Judge questions: {DATASET} v1", "Question quality")
    with db.factory() as session:
        manual = session.scalar(select(func.count()).select_from(Score).where(
            Score.source == f"user:{demo_id}"))
    assert manual == 6

    before = counts()
    with db.factory() as session:
        seed_demo(session, factory.settings, current())
    assert counts() == before  # idempotent

    with db.factory() as session:
        demo = session.get(type(demo), demo_id)
        assert demo is not None
        browser = factory.login(demo, DEMO_PASSWORD)
    costs = browser.get(f"/api/projects/{project_id}/reports/costs")
    assert costs.status_code == 200, costs.json
