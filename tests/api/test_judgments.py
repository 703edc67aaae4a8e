"""Judge mode over HTTP: starting it (validation, roles, the run it makes, the scorer it
versions), the judgments of a run (ratings side by side, means per judge, agreement per
criterion against core/stats), and question quality by generator model.

Ratings are written as the scoring job writes them (apply.score_row), so each test states
exactly what every judge said; tests/engine/test_judge_mode_engine.py runs the job."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from rq import Queue
from sqlalchemy import func, select, update

from assay.core.base import utcnow
from assay.core.datasets.service import create_dataset, latest_version
from assay.core.llm.models import ModelConfig
from assay.core.projects.models import Project, Role
from assay.core.runs.models import Output
from assay.core.scoring.apply import CellScore, insert_scores, score_row
from assay.core.scoring.judge_mode import question_text, scorer_version
from assay.core.scoring.models import RunScorer, ScorerConfig, ScorerVersion
from assay.core.scoring.service import create_scorer
from assay.core.stats import krippendorff_alpha, mean_ci
from assay.extensions import db
from assay.scorers.base import ScoreResult
from tests.api.test_generation import finished_job
from tests.factories import Factory, Session

THE_JUDGES = "the world's judges"  # a placeholder in request bodies
QUESTIONS = ["Why is the sky blue?", "What is 2 + 2?", "Name a prime above 100."]


@dataclass
class World:
    factory: Factory
    project: Project
    browser: Session
    dataset_id: int
    judges: list[int]  # Fake Fast, Fake Smart

    @property
    def base(self) -> str:
        return f"/api/projects/{self.project.id}"

    def start(self, body: dict[str, Any] | None = None, dataset_id: int | None = None,
              browser: Session | None = None) -> Any:
        body = body if body is not None else {"judges": self.judges,
                                              "criteria": ["clarity", "difficulty"]}
        return (browser or self.browser).post(
            f"{self.base}/datasets/{dataset_id or self.dataset_id}/judgments", json=body)

    def judgments(self, run_id: int, **query: Any) -> dict[str, Any]:
        reply = self.browser.get(f"{self.base}/runs/{run_id}/judgments", query_string=query)
        assert reply.status_code == 200, reply.json
        return dict(reply.json)


@pytest.fixture
def world(factory: Factory) -> World:
    owner = factory.user()
    project = factory.project(owner, "Judging")
    factory.finished_run(owner, project)  # brings the two fake-provider models
    with db.factory() as session:
        judges = list(session.scalars(select(ModelConfig.id).where(
            ModelConfig.project_id == project.id).order_by(ModelConfig.id)))
        dataset = create_dataset(session, None, session.merge(project), "Quiz", "questions",
                                 [{"input": {"question": q}} for q in QUESTIONS])
        session.commit()
        dataset_id = dataset.id
    return World(factory, project, factory.login(owner), dataset_id, judges)


def rate(run_id: int, ratings: dict[int, list[dict[str, float] | str]]) -> None:
    """Write each judge's ratings (1-10 per criterion, or an error) of the run's
    questions, in order, as the scoring job does."""
    with db.factory() as session:
        version_id = session.scalar(select(RunScorer.scorer_version_id).where(
            RunScorer.run_id == run_id))
        assert version_id is not None
        outputs = session.execute(select(Output.id, Output.target_id, Output.case_id)
                                  .where(Output.run_id == run_id).order_by(Output.id)).all()
        rows = []
        for judge, per_question in ratings.items():
            for output, given in zip(outputs, per_question, strict=False):
                if isinstance(given, str):
                    result = ScoreResult.failed(given, judge_model=str(judge))
                else:
                    normalised = {k: (v - 1) / 9 for k, v in given.items()}
                    result = ScoreResult(
                        sum(normalised.values()) / len(normalised), criteria=normalised,
                        rationale=f"Judge {judge} says so.", judge_model=str(judge),
                        details={"scores": given, "usage": {"cost_micros": 5},
                                 "rationales": {k: f"{k} reason" for k in given}})
                rows.append(score_row(run_id, output.id, output.target_id, output.case_id,
                                      CellScore(version_id, "question_quality", result)))
        insert_scores(session, rows)
        session.commit()


def counts() -> dict[str, int]:
    with db.factory() as session:
        return {table.name: session.scalar(select(func.count()).select_from(table)) or 0
                for table in db.metadata.sorted_tables}


def test_start_answers_202_with_a_complete_run_whose_outputs_are_the_questions(
        world: World, settings: Any, redis_conn: Any) -> None:
    reply = world.start()
    assert reply.status_code == 202, reply.json
    run = reply.json
    assert run["status"] == "completed" and run["dataset_id"] == world.dataset_id
    assert (run["total"], run["succeeded"], run["spent_micros"]) == (3, 3, 0)
    assert [(t["label"], t["model_id"]) for t in run["targets"]] == \
        [("Dataset questions", None)]
    outputs = world.browser.get(f"{world.base}/runs/{run['id']}/outputs").json
    assert [o["text"] for o in outputs["items"]] == QUESTIONS
    jobs = Queue(settings.runs_queue, connection=redis_conn).jobs
    assert [(j.func_name, j.args) for j in jobs] == \
        [("assay.jobs.scoring.score_run", (run["id"],))]

    result = world.judgments(run["id"])
    assert result["criteria"] == ["clarity", "difficulty"] and result["instruction"] is None
    assert [j["name"] for j in result["judges"]] == ["Fake Fast", "Fake Smart"]
    assert [j["model_id"] for j in result["judges"]] == world.judges
    assert result["progress"] == {"questions": 3, "expected": 6, "scored": 0, "failed": 0,
                                  "done": False}
    assert [i["question"] for i in result["items"]] == QUESTIONS
    assert {r["status"] for i in result["items"] for r in i["ratings"]} == {"pending"}
    assert [a["alpha"] for a in result["agreement"]] == [None, None]


def test_the_scorer_is_reused_versioned_or_named_apart(world: World) -> None:
    first = world.judgments(world.start().json["id"])["scorer_version_id"]
    again = world.judgments(world.start().json["id"])["scorer_version_id"]
    assert again == first  # same judges and criteria: the same version
    changed = world.start({"judges": world.judges[:1], "criteria": ["overall"],
                           "instruction": "Be strict about ambiguity."})
    result = world.judgments(changed.json["id"])
    assert result["instruction"] == "Be strict about ambiguity."
    with db.factory() as session:
        versions = session.execute(select(ScorerConfig.name, ScorerVersion.number).join(
            ScorerVersion, ScorerVersion.scorer_id == ScorerConfig.id).where(
            ScorerVersion.id.in_([first, result["scorer_version_id"]]))).all()
    assert sorted(versions) == [("Question quality", 1), ("Question quality", 2)]
    # Another kind holds the name in a fresh project: judge mode picks a free one.
    with db.factory() as session:
        project = world.factory.project(world.factory.user(), "Named")
        create_scorer(session, None, session.merge(project), {
            "name": "Question quality", "kind": "icontains", "params": {"value": "x"}})
        session.commit()
    with db.factory() as session:
        made = scorer_version(session, None, session.merge(project),
                              {"judges": ["1"], "criteria": ["clarity"]})
        config = session.get(ScorerConfig, made.scorer_id)
        assert config is not None and config.name == "Question quality (2)"


@pytest.mark.parametrize(("body", "field"), [
    ({"criteria": ["clarity"]}, "judges"),
    ({"judges": [], "criteria": ["clarity"]}, "judges"),
    ({"judges": [1, 2, 3, 4, 5, 6], "criteria": ["clarity"]}, "judges"),
    ({"judges": [2**31 - 1], "criteria": ["clarity"]}, "judges"),
    ({"judges": "all", "criteria": ["clarity"]}, "judges"),
    ({"judges": THE_JUDGES, "criteria": ["beauty"]}, "criteria"),
    ({"judges": THE_JUDGES}, "criteria"),  # neither a criterion nor an instruction
    ({"judges": THE_JUDGES, "criteria": [], "instruction": "  "}, "criteria"),
    ({"judges": THE_JUDGES, "criteria": ["clarity", "clarity"]}, "criteria"),
    ({"judges": THE_JUDGES, "instruction": "x" * 4001}, "instruction"),
    ({"judges": THE_JUDGES, "criteria": ["clarity"], "dataset_version_id": 2**31 - 1},
     "dataset_version_id"),
    ({"judges": THE_JUDGES, "criteria": ["clarity"], "weights": [1]}, "weights"),
])
def test_bad_input_is_422_naming_the_field_and_writes_nothing(
        world: World, body: dict[str, Any], field: str) -> None:
    if body.get("judges") == THE_JUDGES:
        body = {**body, "judges": world.judges}
    before = counts()
    reply = world.start(body)
    assert reply.status_code == 422, reply.json
    assert field in reply.json["errors"]["json"], reply.json
    assert counts() == before


def test_unknown_archived_repeated_and_foreign_judges_are_named(world: World,
                                                                factory: Factory) -> None:
    other = factory.project(factory.user(), "Other")
    factory.finished_run(factory.user(), other)
    with db.factory() as session:
        foreign = session.scalar(select(ModelConfig.id).where(
            ModelConfig.project_id == other.id))
        session.execute(update(ModelConfig).where(ModelConfig.id == world.judges[1])
                        .values(archived_at=utcnow()))
        session.commit()
    before = counts()
    reply = world.start({"judges": [world.judges[0], foreign, world.judges[1],
                                    world.judges[0]], "criteria": ["clarity"]})
    assert reply.status_code == 422
    problems = reply.json["errors"]["json"]["judges"]
    assert problems["1"] == [f"No model {foreign} in this project"]
    assert "archived" in problems["2"][0] and "listed twice" in problems["3"][0]
    assert "0" not in problems
    assert counts() == before


def test_an_empty_dataset_or_another_datasets_version_is_422(world: World) -> None:
    with db.factory() as session:
        empty = create_dataset(session, None, session.merge(world.project), "Empty",
                               "questions", [])
        session.commit()
        empty_id = empty.id
        other_version = latest_version(session, empty_id).id
    reply = world.start(dataset_id=empty_id)
    assert reply.status_code == 422
    assert "no questions to judge" in reply.json["errors"]["json"]["dataset_id"][0]
    reply = world.start({"judges": world.judges, "criteria": ["clarity"],
                         "dataset_version_id": other_version})
    assert reply.status_code == 422 and "dataset_version_id" in reply.json["errors"]["json"]


def test_editors_start_viewers_read_strangers_see_nothing(world: World,
                                                          factory: Factory) -> None:
    viewer = factory.login(factory.member(world.project, Role.viewer))
    editor = factory.login(factory.member(world.project, Role.editor))
    stranger = factory.signed_in()
    assert world.start(browser=viewer).status_code == 403
    assert world.start(browser=stranger).status_code == 404
    run_id = world.start(browser=editor).json["id"]
    for browser, status in ((viewer, 200), (stranger, 404)):
        for path in (f"/runs/{run_id}/judgments", f"/datasets/{world.dataset_id}/judgments",
                     "/reports/question-quality"):
            assert browser.get(world.base + path).status_code == status, (path, status)


def test_a_run_that_is_not_judge_mode_has_no_judgments(world: World) -> None:
    runs = world.browser.get(f"{world.base}/runs").json["items"]
    reply = world.browser.get(f"{world.base}/runs/{runs[0]['id']}/judgments")
    assert reply.status_code == 404 and "judge mode" in reply.json["message"]


def test_ratings_side_by_side_with_means_and_agreement_from_core_stats(world: World) -> None:
    run_id = world.start().json["id"]
    fast, smart = world.judges
    rate(run_id, {
        fast: [{"clarity": 9, "difficulty": 3}, {"clarity": 10, "difficulty": 1},
               {"clarity": 6, "difficulty": 8}],
        smart: [{"clarity": 8, "difficulty": 4}, "Judge reply rejected: not JSON",
                {"clarity": 5, "difficulty": 9}]})
    result = world.judgments(run_id)
    assert result["progress"] == {"questions": 3, "expected": 6, "scored": 5, "failed": 1,
                                  "done": True}
    first, second, _ = result["items"]
    assert [i["number"] for i in result["items"]] == [1, 2, 3]
    a, b = first["ratings"]
    assert (a["judge"], a["status"], a["scores"], a["overall"]) == \
        (str(fast), "scored", {"clarity": 9.0, "difficulty": 3.0}, 6.0)
    assert a["justification"] == f"Judge {fast} says so."
    assert a["rationales"] == {"clarity": "clarity reason", "difficulty": "difficulty reason"}
    assert (b["scores"], b["overall"]) == ({"clarity": 8.0, "difficulty": 4.0}, 6.0)
    failed = second["ratings"][1]
    assert (failed["status"], failed["scores"], failed["overall"]) == ("failed", {}, None)
    assert failed["error"] == "Judge reply rejected: not JSON"

    expected_alpha = {
        "clarity": krippendorff_alpha([[9, 10, 6], [8, None, 5]], level="interval"),
        "difficulty": krippendorff_alpha([[3, 1, 8], [4, None, 9]], level="interval")}
    for entry in result["agreement"]:
        reference = expected_alpha[entry["criterion"]]
        assert entry["alpha"] == pytest.approx(reference.alpha)
        assert (entry["n_units"], entry["n_values"]) == (2, 4)
    overall = krippendorff_alpha([[6, 5.5, 7], [6, None, 7]], level="interval")
    assert result["overall_agreement"]["criterion"] == "overall"
    assert result["overall_agreement"]["alpha"] == pytest.approx(overall.alpha)

    summary = {j["ref"]: j for j in result["judges"]}
    fast_clarity = mean_ci({0: [9.0], 1: [10.0], 2: [6.0]}, n_resamples=1000)
    assert summary[str(fast)]["means"]["clarity"] == pytest.approx({
        "mean": fast_clarity.mean, "low": fast_clarity.low, "high": fast_clarity.high,
        "n": 3})
    assert summary[str(smart)]["overall"]["mean"] == pytest.approx(6.5)
    assert summary[str(smart)]["overall"]["n"] == 2
    assert (summary[str(smart)]["scored"], summary[str(smart)]["failed"]) == (2, 1)
    assert summary[str(fast)]["cost_micros"] == 15

    page = world.judgments(run_id, page=2, page_size=2)
    assert (page["total"], page["page"], len(page["items"])) == (3, 2, 1)
    assert page["items"][0]["number"] == 3 and page["items"][0]["question"] == QUESTIONS[2]


def test_a_datasets_judgings_are_listed_newest_first(world: World) -> None:
    first = world.start().json["id"]
    second = world.start().json["id"]
    listed = world.browser.get(f"{world.base}/datasets/{world.dataset_id}/judgments").json
    assert [r["id"] for r in listed["items"]] == [second, first] and listed["total"] == 2
    assert world.browser.get(f"{world.base}/datasets/999999/judgments").status_code == 404


def test_question_quality_by_generator_model(world: World) -> None:
    owner_id = world.browser.user_id
    fast = world.judges[0]
    job = finished_job(owner_id, world.project.id, fast, ["Generated one?", "Generated two?"])
    accepted = world.browser.post(f"{world.base}/generation/{job}/accept",
                                  json={"dataset_name": "Generated"})
    assert accepted.status_code == 201, accepted.json
    generated = accepted.json["dataset_id"]
    cases = world.browser.get(f"{world.base}/datasets/{generated}/cases").json["items"]
    assert cases[0]["metadata"]["generation"] == {"model_id": fast, "model_name": "Fake Fast",
                                                  "job_id": job}
    assert world.browser.get(f"{world.base}/reports/question-quality").json == {"items": []}

    judged = world.start({"judges": world.judges, "criteria": ["overall"]},
                         dataset_id=generated).json["id"]
    rate(judged, {world.judges[0]: [{"overall": 8}, {"overall": 6}],
                  world.judges[1]: [{"overall": 9}, "failed"]})
    written = world.start({"judges": world.judges[:1], "criteria": ["clarity", "relevance"]})
    rate(written.json["id"], {world.judges[0]: [{"clarity": 4, "relevance": 2}] * 3})
    with db.factory() as session:  # renamed since: the report names the model as it is now
        session.execute(update(ModelConfig).where(ModelConfig.id == fast)
                        .values(name="Fast, renamed"))
        session.commit()

    rows = world.browser.get(f"{world.base}/reports/question-quality").json["items"]
    assert [(r["model_id"], r["name"]) for r in rows] == \
        [(fast, "Fast, renamed"), (None, "Not generated (written or imported)")]
    reference = mean_ci({0: [8.0, 9.0], 1: [6.0]}, n_resamples=2000)
    assert rows[0] == pytest.approx({
        "model_id": fast, "name": "Fast, renamed", "mean": reference.mean,
        "low": reference.low, "high": reference.high, "questions": 2, "ratings": 3,
        "datasets": 1})
    assert (rows[1]["mean"], rows[1]["questions"], rows[1]["datasets"]) == (3.0, 3, 1)


@pytest.mark.parametrize(("kind", "data", "trace", "expected"), [
    ("questions", {"question": "Why?"}, None, "Why?"),
    ("conversations", {"messages": [{"role": "system", "content": "Be kind"},
                                    {"role": "user", "content": "First?"},
                                    {"role": "assistant", "content": "Yes"},
                                    {"role": "user", "content": "Second?"}]}, None, "First?"),
    ("cases", {"city": "Paris", "topic": "food"}, None, "city: Paris\ntopic: food"),
    ("traces", {}, {"messages": [{"role": "assistant", "content": "Hi"},
                                 {"role": "user", "content": "Refund me"}]}, "Refund me"),
    ("traces", {}, {"messages": [{"role": "assistant", "content": "Hi"}]}, ""),
])
def test_the_question_of_each_kind_of_case(kind: str, data: dict[str, Any],
                                           trace: dict[str, Any] | None,
                                           expected: str) -> None:
    assert question_text(kind, data, trace) == expected


def test_the_leaderboard_leaves_judge_mode_questions_out(world: World) -> None:
    """A judge-mode run's outputs are the dataset's questions: no model's answers, so no row
    of the model leaderboard (they are in its question-quality section)."""
    before = world.browser.get(f"{world.base}/reports/leaderboard").json["items"]
    assert world.start().status_code == 202
    after = world.browser.get(f"{world.base}/reports/leaderboard").json["items"]
    assert [(r["model_id"], r["outputs"]) for r in after] == \
        [(r["model_id"], r["outputs"]) for r in before]
    assert all(r["model_id"] is not None for r in after)
