"""What a stopped run's reads keep (core/runs/cache.py) follows its scores: a reviewer's
score, its removal and a rescoring job each change the statistics, the score trend and the
date-range leaderboard read next, exactly as a read with nothing kept gives them; the
results grid's kept total is the count. And the kept entries are really used."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import delete, select, update

from assay.api.kept_reads import READS
from assay.api.runs import scores as score_routes
from assay.core.base import utcnow
from assay.core.projects.models import Project
from assay.core.reports import rollups
from assay.core.runs import warm
from assay.core.runs.cache import RunCache
from assay.core.runs.models import Output, Run, RunStatus
from assay.core.ttl_cache import TTLCache
from assay.extensions import db
from assay.jobs import scoring as scoring_jobs
from assay.jobs.scoring import score_run
from tests.api.stats_data import make_scorer, pin
from tests.factories import Factory, PlannedRun, Session, succeed

TEXTS = ["An answer", "Nope", "Another answer"]


@pytest.fixture(autouse=True)
def no_warm_job(monkeypatch: pytest.MonkeyPatch) -> None:
    """What the readers keep on their own: no warm job (tests/engine/test_run_warm.py) fills
    anything meanwhile, even with another test's worker alive."""
    monkeypatch.setattr(scoring_jobs, "enqueue_warm", lambda _rt, _run_id: False)
    monkeypatch.setattr(score_routes, "enqueue_warm", lambda _rt, _run_id: False)


@pytest.fixture(autouse=True)
def no_kept_bodies(app: Flask, monkeypatch: pytest.MonkeyPatch) -> None:
    """The entries under study are the database's (run_caches): the API process's memory
    of its answers (api/kept_reads.py) would answer before them."""
    monkeypatch.setitem(app.extensions, READS, TTLCache[Any](0))


@pytest.fixture
def owner(factory: Factory) -> Any:
    return factory.user()


@pytest.fixture
def project(factory: Factory, owner: Any) -> Project:
    return factory.project(owner)


@pytest.fixture
def browser(factory: Factory, owner: Any) -> Session:
    return factory.login(owner)


@pytest.fixture
def finished(factory: Factory, owner: Any, project: Project) -> PlannedRun:
    """Three cases on two targets, every output succeeded, scored by a reference check,
    the run completed."""
    planned = factory.planned_run(owner, project, cases=3, targets=2)
    with db.factory() as session:
        outputs = session.scalars(select(Output.id).where(Output.run_id == planned.run_id)
                                  .order_by(Output.id)).all()
    for i, output_id in enumerate(outputs):
        succeed(output_id, TEXTS[i % len(TEXTS)])
    with db.factory() as session:
        session.execute(update(Run).where(Run.id == planned.run_id).values(
            status=RunStatus.completed, succeeded=len(outputs)))
        rollups.rebuild(session)  # the outputs were written around the engine
        session.commit()
    pin(planned.run_id, make_scorer(project.id, "icontains", name="Says answer"))
    assert score_run(planned.run_id) == 6
    return planned


def _get(browser: Session, url: str, **query: Any) -> dict[str, Any]:
    reply = browser.get(url, query_string=query)
    assert reply.status_code == 200, reply.json
    body: dict[str, Any] = reply.json
    return body


def _kept(run_id: int) -> dict[str, str]:
    with db.factory() as session:
        return dict(session.execute(select(RunCache.key, RunCache.stamp)
                                    .where(RunCache.run_id == run_id)).all())


def _forget(run_id: int) -> None:
    with db.factory() as session:
        session.execute(delete(RunCache).where(RunCache.run_id == run_id))
        session.commit()


def _outputs(run_id: int) -> list[int]:
    with db.factory() as session:
        return list(session.scalars(select(Output.id).where(Output.run_id == run_id)
                                    .order_by(Output.id)))


def _reads(browser: Session, project: Project, run_id: int, scorer_id: int
           ) -> dict[str, Any]:
    base = f"/api/projects/{project.id}"
    today = utcnow().date().isoformat()
    return {
        "statistics": _get(browser, f"{base}/runs/{run_id}/statistics"),
        "trend": _get(browser, f"{base}/reports/trend", scorer_id=scorer_id),
        "leaderboard": _get(browser, f"{base}/reports/leaderboard", scorer_id=scorer_id,
                            date_from=today),
    }


def _scorer_id(project: Project) -> int:
    from assay.core.scoring.models import ScorerConfig

    with db.factory() as session:
        return int(session.scalar(select(ScorerConfig.id).where(
            ScorerConfig.project_id == project.id, ScorerConfig.kind == "manual")
            .order_by(ScorerConfig.id)) or 0)


def test_a_reviewers_score_and_its_removal_change_what_is_read_next(
        browser: Session, project: Project, finished: PlannedRun) -> None:
    manual = make_scorer(project.id, "manual", name="Reviewer")
    pin(finished.run_id, manual)
    scorer_id = _scorer_id(project)
    before = _reads(browser, project, finished.run_id, scorer_id)
    kept = _kept(finished.run_id)
    assert before["trend"]["runs"] == []  # nobody has scored by hand yet
    assert {key.split(":")[0] for key in kept} == {"statistics", "range-sums"}
    assert _reads(browser, project, finished.run_id, scorer_id) == before  # read back

    first = _outputs(finished.run_id)[0]
    url = (f"/api/projects/{project.id}/runs/{finished.run_id}/outputs/{first}"
           f"/scores/{manual}")
    assert browser.request("PUT", url, json={"rating": 5}).status_code == 200
    after = _reads(browser, project, finished.run_id, scorer_id)
    assert after != before
    stats = [i for i in after["statistics"]["items"] if i["scorer_version_id"] == manual]
    assert sum(i["n_scored"] for i in stats) == 1
    [point] = after["trend"]["runs"]
    assert point["score"]["mean"] == pytest.approx(1.0)  # a 5 of 1-5
    [row] = [r for r in after["leaderboard"]["items"] if r["scores"]]
    assert row["scores"] == 1 and row["score"]["mean"] == pytest.approx(1.0)
    assert all(stamp != kept[key] for key, stamp in _kept(finished.run_id).items()
               if key in kept)
    _forget(finished.run_id)  # nothing kept: the same numbers from the scores
    assert _reads(browser, project, finished.run_id, scorer_id) == after

    assert browser.request("DELETE", url).status_code == 204
    removed = _reads(browser, project, finished.run_id, scorer_id)
    assert removed["statistics"] == before["statistics"]
    assert removed["trend"]["runs"] == [] and removed["leaderboard"] == before["leaderboard"]


def test_a_rescoring_job_changes_the_statistics_read_next(
        browser: Session, project: Project, finished: PlannedRun) -> None:
    url = f"/api/projects/{project.id}/runs/{finished.run_id}/statistics"
    check = make_scorer(project.id, "icontains", name="Says nope")
    pin(finished.run_id, check)  # pinned, not scored yet: its numbers are empty
    before = _get(browser, url, scorer_version_id=check)
    assert [i["n_scored"] for i in before["items"]] == [0, 0]
    assert any(key.startswith("statistics:") for key in _kept(finished.run_id))
    assert score_run(finished.run_id) == 6
    after = _get(browser, url, scorer_version_id=check)
    assert [i["n_scored"] for i in after["items"]] == [3, 3]
    _forget(finished.run_id)
    assert _get(browser, url, scorer_version_id=check) == after


def test_a_running_run_keeps_nothing_and_a_stopped_one_is_read_from_what_it_kept(
        browser: Session, project: Project, finished: PlannedRun) -> None:
    url = f"/api/projects/{project.id}/runs/{finished.run_id}/statistics"
    with db.factory() as session:
        session.execute(update(Run).where(Run.id == finished.run_id).values(
            status=RunStatus.running))
        session.commit()
    running = _get(browser, url)
    assert _kept(finished.run_id) == {}
    with db.factory() as session:
        session.execute(update(Run).where(Run.id == finished.run_id).values(
            status=RunStatus.completed))
        session.commit()
    assert _get(browser, url) == running
    [key] = _kept(finished.run_id)
    with db.factory() as session:  # the kept entry is what is served while it is valid
        entry = session.get(RunCache, (finished.run_id, key))
        assert entry is not None
        entry.payload = b"[]"
        session.commit()
    assert _get(browser, url)["items"] == []


def test_the_grid_total_kept_is_the_count(
        browser: Session, project: Project, finished: PlannedRun) -> None:
    url = f"/api/projects/{project.id}/runs/{finished.run_id}/grid"
    # unfiltered in dataset order: the version's cases, counted on their index, not kept
    assert _get(browser, url, limit=2)["total"] == 3
    page = _get(browser, url, limit=2, offset=2)
    assert (page["total"], [r["number"] for r in page["rows"]]) == (3, [3])
    assert _kept(finished.run_id) == {}
    # unfiltered but sorted by a measure: the outputs' distinct cases, kept once stopped
    assert _get(browser, url, sort="latency")["total"] == 3
    assert list(_kept(finished.run_id)) == ["grid-rows:"]
    failed = _get(browser, url, status="failed")  # filtered: counted, not kept
    assert failed["total"] == 0 and len(_kept(finished.run_id)) == 1


def test_a_date_range_cutting_a_run_reads_its_sums_of_the_days_in_the_range(
        browser: Session, project: Project, finished: PlannedRun) -> None:
    """One output finished yesterday: a range from today cuts the run, which is read from
    its sums per day with the other five outputs' scores, and a range to yesterday with
    that one. The sums per day are kept (not the whole run's), and the warm job fills them
    for a run that spans days; read back from either, the reports are the same."""
    first = _outputs(finished.run_id)[0]
    with db.factory() as session:
        session.execute(update(Output).where(Output.id == first).values(
            finished_at=utcnow() - timedelta(days=1)))
        rollups.rebuild(session)
        session.commit()
    with db.factory() as session:
        from assay.core.scoring.models import ScorerConfig

        scorer_id = session.scalar(select(ScorerConfig.id).where(
            ScorerConfig.project_id == project.id))
    base = f"/api/projects/{project.id}/reports"
    today = utcnow().date()
    ranges = ({"date_from": today.isoformat()},
              {"date_to": (today - timedelta(days=1)).isoformat()})

    def reads() -> list[Any]:
        return [(_get(browser, f"{base}/leaderboard", scorer_id=scorer_id, **days),
                 _get(browser, f"{base}/trend", scorer_id=scorer_id, **days))
                for days in ranges]

    computed = reads()
    counts = [(sum(r["scores"] for r in board["items"]), trend["runs"][0]["score"]["n_values"])
              for board, trend in computed]
    assert counts == [(5, 5), (1, 1)]
    assert {key.split(":")[0] for key in _kept(finished.run_id)} == {"range-days",
                                                                      "trend-days"}
    assert reads() == computed  # from what was kept
    _forget(finished.run_id)
    with db.factory() as session:
        assert warm.warm(session, finished.run_id)
        session.commit()
    assert {"range-days", "trend-days"} <= {key.split(":")[0] for key in _kept(finished.run_id)}
    assert reads() == computed


def test_a_range_over_every_day_reads_as_the_rollup_without_one(
        browser: Session, project: Project, finished: PlannedRun) -> None:
    """The per-run sums a range adds up (kept or live) give the leaderboard the per-case
    score rollup gives without a range, before and after a reviewer's score."""
    manual = make_scorer(project.id, "manual", name="Reviewer")
    pin(finished.run_id, manual)
    base = f"/api/projects/{project.id}/reports/leaderboard"
    outputs = _outputs(finished.run_id)
    with db.factory() as session:
        from assay.core.scoring.models import ScorerConfig

        scorers = list(session.scalars(select(ScorerConfig.id).where(
            ScorerConfig.project_id == project.id).order_by(ScorerConfig.id)))

    def same() -> None:
        for scorer_id in scorers:
            rollup = _get(browser, base, scorer_id=scorer_id)
            for kept in (False, True):  # computed, then read from what was kept
                ranged = _get(browser, base, scorer_id=scorer_id, date_from="2000-01-01")
                assert ranged == rollup, (scorer_id, kept)

    same()
    for output_id, rating in zip(outputs[:3], (5, 2, 4), strict=True):
        url = (f"/api/projects/{project.id}/runs/{finished.run_id}/outputs/{output_id}"
               f"/scores/{manual}")
        assert browser.request("PUT", url, json={"rating": rating}).status_code == 200
    same()
