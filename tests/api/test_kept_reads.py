"""What an API process keeps between reads (api/kept_reads.py), through HTTP: a stopped
run's reads are answered from memory and their numbers are never stale; names from other
rows and revocations show at once where they were made and in every process that hears of
the write over Redis (forget_everywhere.py), and within the TTL in one that did not; a
process that lost Redis forgets everything when it hears again; nothing else is kept. Sets
of cache objects stand for gunicorn workers: the app looks them up per request."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import delete, event, select, update

from assay.api import forget_everywhere
from assay.api.kept_reads import (
    ALONE_ENDPOINTS,
    KEPT_ENDPOINTS,
    KEPT_LISTS,
    LISTS,
    MEMBERSHIPS,
    READS,
    RUN_VIEWS,
    RUNS_LIST,
    KeptReadsDoor,
)
from assay.api.security import CREDENTIALS
from assay.api.slow_lane import SlowLane
from assay.core.auth.cache import CredentialCache
from assay.core.auth.models import User
from assay.core.projects.models import Project, Role
from assay.core.runs.models import Output, Run, RunStatus
from assay.core.ttl_cache import TTLCache
from assay.extensions import db
from tests.factories import Factory, Session, succeed

TTL_S = 1.5


@contextmanager
def process(app: Flask, caches: dict[str, TTLCache[Any]]) -> Iterator[None]:
    """Requests inside are served as by the worker owning `caches`."""
    previous = {name: app.extensions[name] for name in caches}
    app.extensions.update(caches)
    try:
        yield
    finally:
        app.extensions.update(previous)


def worker() -> dict[str, TTLCache[Any]]:
    return {MEMBERSHIPS: TTLCache[Role](TTL_S), READS: TTLCache[Any](TTL_S),
            LISTS: TTLCache[Any](TTL_S)}


@contextmanager
def statements() -> Iterator[list[str]]:
    """The SQL statements run inside."""
    seen: list[str] = []

    def record(*args: Any) -> None:
        seen.append(args[2])

    engines = {db.engine, db.autocommit_engine}  # PostgreSQL's reads run on the second
    for engine in engines:
        event.listen(engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        for engine in engines:
            event.remove(engine, "before_cursor_execute", record)


@pytest.fixture
def owner(factory: Factory) -> User:
    return factory.user()


@pytest.fixture
def project(factory: Factory, owner: User) -> Project:
    return factory.project(owner)


@pytest.fixture
def browser(factory: Factory, owner: User) -> Session:
    return factory.login(owner)


@pytest.fixture
def stopped(factory: Factory, owner: User, project: Project) -> int:
    planned = factory.planned_run(owner, project, cases=3, targets=2)
    with db.factory() as session:
        outputs = session.scalars(select(Output.id).where(Output.run_id == planned.run_id)).all()
    for output_id in outputs:
        succeed(output_id)
    with db.factory() as session:
        session.execute(update(Run).where(Run.id == planned.run_id).values(
            status=RunStatus.completed, succeeded=len(outputs)))
        session.commit()
    return planned.run_id


def _reads(project: Project, run_id: int) -> list[str]:
    base = f"/api/projects/{project.id}/runs/{run_id}"
    return [base, f"{base}/progress", f"{base}/summary", f"{base}/statistics",
            f"{base}/outputs?page=1&page_size=2", f"{base}/grid?offset=0&limit=2"]


def test_the_named_endpoints_exist(app: Flask) -> None:
    assert KEPT_LISTS <= ALONE_ENDPOINTS
    assert {rule.endpoint for rule in app.url_map.iter_rules()} >= ALONE_ENDPOINTS


def test_every_kept_read_is_answered_from_memory_the_second_time_and_alike(
        app: Flask, browser: Session, project: Project, stopped: int) -> None:
    assert len(_reads(project, stopped)) == len(KEPT_ENDPOINTS)
    with process(app, worker()):
        for url in _reads(project, stopped):
            first = browser.get(url)
            assert first.status_code == 200, (url, first.json)
            with statements() as seen:
                again = browser.get(url)
            assert again.status_code == 200
            assert again.data == first.data and again.content_type == first.content_type
            # the run's row (its key) and nothing else: access and credential are kept
            assert len(seen) == 1 and "FROM runs" in seen[0], (url, seen)


def test_a_stopped_runs_numbers_are_never_stale(
        app: Flask, browser: Session, project: Project, stopped: int) -> None:
    url = f"/api/projects/{project.id}/runs/{stopped}"
    with process(app, worker()):
        assert browser.get(url).json["failed"] == 0
        with db.factory() as session:  # another process records a change of the run
            session.execute(update(Run).where(Run.id == stopped).values(failed=1))
            session.commit()
        assert browser.get(url).json["failed"] == 1  # at once: the run's row is the key


def test_a_running_run_and_refused_reads_are_not_kept(
        app: Flask, factory: Factory, browser: Session, owner: User, project: Project) -> None:
    running = factory.planned_run(owner, project, cases=2, targets=1).run_id
    caches = worker()
    with process(app, caches):
        assert browser.get(f"/api/projects/{project.id}/runs/{running}").status_code == 200
        bad = browser.get(f"/api/projects/{project.id}/runs/{running}/outputs?page=0")
        assert bad.status_code == 422
        stranger = factory.signed_in()
        assert stranger.get(f"/api/projects/{project.id}/runs/{running}").status_code == 404
    assert caches[READS]._entries == {}


def test_a_rename_shows_at_once_here_and_within_the_ttl_elsewhere(
        app: Flask, browser: Session, project: Project, stopped: int) -> None:
    url = f"/api/projects/{project.id}/runs/{stopped}"
    here, there = worker(), worker()
    with process(app, there):
        model_id = browser.get(url).json["targets"][0]["model_id"]
    with process(app, here):
        browser.get(url)
        reply = browser.patch(f"/api/projects/{project.id}/models/{model_id}",
                              json={"name": "Renamed model"})
        assert reply.status_code == 200, reply.json
        assert browser.get(url).json["targets"][0]["model_name"] == "Renamed model"
    waited = _until(app, there, lambda: browser.get(url).json["targets"][0]["model_name"]
                    == "Renamed model")
    assert waited <= TTL_S + 0.5


def test_a_removed_member_is_refused_at_once_here_and_within_the_ttl_elsewhere(
        app: Flask, factory: Factory, browser: Session, project: Project,
        stopped: int) -> None:
    member = factory.member(project, Role.viewer)
    reader = factory.login(member)
    url = f"/api/projects/{project.id}/runs/{stopped}/progress"
    here, there = worker(), worker()
    with process(app, there):
        assert reader.get(url).status_code == 200
    with process(app, here):
        assert reader.get(url).status_code == 200
        removed = browser.delete(f"/api/projects/{project.id}/members/{member.id}")
        assert removed.status_code == 204, removed.json
        assert reader.get(url).status_code == 404  # at once, here
    waited = _until(app, there, lambda: reader.get(url).status_code == 404)
    assert waited <= TTL_S + 0.5


def test_a_write_always_asks_the_database(
        app: Flask, factory: Factory, browser: Session, project: Project) -> None:
    member = factory.member(project, Role.editor)
    editor = factory.login(member)
    caches = worker()
    with process(app, caches):
        assert editor.get(f"/api/projects/{project.id}/runs").status_code == 200
        with db.factory() as session:  # lowered in another process
            session.execute(update(Project).where(Project.id == project.id).values(
                name="Renamed elsewhere"))
            from assay.core.projects.models import Membership

            session.execute(update(Membership).where(Membership.user_id == member.id)
                            .values(role=Role.viewer))
            session.commit()
        # a read may still pass on what this process knows, and shows fresh columns
        assert editor.get(f"/api/projects/{project.id}").json["name"] == "Renamed elsewhere"
        refused = editor.post(f"/api/projects/{project.id}/datasets",
                              json={"name": "Nope", "kind": "questions"})
        assert refused.status_code == 403, refused.json


def _until(app: Flask, caches: dict[str, TTLCache[Any]], check: Callable[[], bool],
           seconds: float = TTL_S + 1.0) -> float:
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        with process(app, caches):
            if check():
                return time.monotonic() - started
        time.sleep(0.05)
    raise AssertionError(f"still the old answer {seconds} s later")


def test_a_runs_page_with_a_run_going_keeps_the_stopped_runs_views_and_follows_their_rows(
        app: Flask, factory: Factory, browser: Session, owner: User, project: Project,
        stopped: int) -> None:
    factory.planned_run(owner, project, cases=1, targets=1)  # pending: the page is made
    url = f"/api/projects/{project.id}/runs"
    caches = worker() | {RUN_VIEWS: TTLCache[Any](TTL_S)}
    with process(app, caches):
        first = browser.get(url).json
        with statements() as seen:
            assert browser.get(url).json == first
        assert sum("run_targets" in s for s in seen) == 1, seen  # the stopped run's was kept
        with db.factory() as session:
            session.execute(update(Run).where(Run.id == stopped).values(failed=1))
            session.commit()
        assert browser.get(url).json["items"][1]["failed"] == 1
    assert not any(key.startswith(RUNS_LIST) for key in caches[READS]._entries)


def test_a_page_of_stopped_runs_is_kept_and_follows_its_rows_and_their_count(
        app: Flask, factory: Factory, browser: Session, owner: User, project: Project,
        stopped: int) -> None:
    """Answered by the door the second time with one statement; a run's row changed, a run
    started, a run deleted (retention, say) past the page: each shows at once; a filter and
    bad arguments are read as the view reads them."""
    older = factory.finished_run(owner, project)
    url = f"/api/projects/{project.id}/runs"

    def change(*statements_: Any) -> None:
        with db.factory() as session:
            for statement in statements_:
                session.execute(statement)
            session.commit()

    with process(app, worker()):
        first = browser.get(f"{url}?page_size=1").json
        assert [r["id"] for r in first["items"]] == [older] and first["total"] == 2
        with statements() as seen:
            assert browser.get(f"{url}?page_size=1").json == first
        one = db.engine.dialect.name == "postgresql"  # SQLite: the page's rows, their count
        assert len(seen) == (1 if one else 2) and all("FROM runs" in s for s in seen), seen
        change(update(Run).where(Run.id == older).values(failed=7))
        assert browser.get(f"{url}?page_size=1").json["items"][0]["failed"] == 7
        assert browser.get(f"{url}?page_size=1&page=2").json["items"][0]["id"] == stopped
        change(delete(Output).where(Output.run_id == stopped),
               delete(Run).where(Run.id == stopped))
        assert browser.get(f"{url}?page_size=1").json["total"] == 1  # past the page
        assert browser.get(f"{url}?page_size=1&page=2").json["items"] == []
        started = factory.planned_run(owner, project, cases=1, targets=1).run_id
        for _ in range(2):
            assert browser.get(f"{url}?page_size=1").json["items"][0]["id"] == started
        assert [r["id"] for r in browser.get(f"{url}?status=completed").json["items"]] == [
            older]
        for bad in ("status=", "status=finished", "page=0", "page_size=101"):
            for _ in range(2):
                assert browser.get(f"{url}?{bad}").status_code == 422, bad


def test_the_door_answers_a_kept_read_as_flask_does(
        app: Flask, browser: Session, project: Project, stopped: int,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The second read is the door's (no request context, no view): the same body and
    headers, the caller's request id echoed, and its latency in the route's metric."""
    from assay.observability import metrics

    url = f"/api/projects/{project.id}/runs/{stopped}/grid?offset=0&limit=2"
    route = "/api/projects/<int:project_id>/runs/<int:run_id>/grid"
    latency = metrics.HTTP_LATENCY.labels("GET", route, "200")
    lane = app.wsgi_app
    assert isinstance(lane, SlowLane)  # the slow lane is in front of the door
    door = lane.wsgi_app
    assert isinstance(door, KeptReadsDoor)
    flask_app, to_flask = door.wsgi_app, []
    monkeypatch.setattr(door, "wsgi_app", lambda *args: to_flask.append(1) or flask_app(*args))
    with process(app, worker()):
        first = browser.get(url)
        counted = sum(bucket.get() for bucket in latency._buckets)
        with statements() as seen:
            again = browser.get(url, headers={"X-Request-ID": "proxy-42"})
    assert len(to_flask) == 1 and len(seen) == 1  # the run's row: the door answered
    assert again.status_code == 200 and again.data == first.data
    assert again.headers["X-Request-ID"] == "proxy-42"
    assert (sorted((k, v) for k, v in again.headers.items() if k != "X-Request-ID")
            == sorted((k, v) for k, v in first.headers.items() if k != "X-Request-ID"))
    assert sum(bucket.get() for bucket in latency._buckets) == counted + 1


def test_the_door_makes_an_output_in_full_as_flask_does_and_never_keeps_it(
        app: Flask, factory: Factory, browser: Session, owner: User, project: Project,
        stopped: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """An output is read by the door in one statement, scores and their authors included,
    byte for byte as the view writes it; a change shows at once; what it cannot find goes
    on to Flask, which says why."""
    base = f"/api/projects/{project.id}/runs/{stopped}/outputs"
    with db.factory() as session:
        first, other = session.scalars(select(Output.id).where(
            Output.run_id == stopped).order_by(Output.id).limit(2)).all()
    _, version_id = factory.scorer(project, "Helpfulness", params={"scale": "1-5"})
    _, second_id = factory.scorer(project, "Accuracy", params={"scale": "1-5"})
    for version, value in ((version_id, 4), (second_id, 2)):
        assert browser.request("PUT", f"{base}/{first}/scores/{version}",
                               json={"rating": value}).status_code == 200
    stranger = factory.signed_in()
    lane = app.wsgi_app
    assert isinstance(lane, SlowLane)  # the slow lane is in front of the door
    door = lane.wsgi_app
    assert isinstance(door, KeptReadsDoor)
    flask_app, to_flask = door.wsgi_app, []
    monkeypatch.setattr(door, "wsgi_app", lambda *args: to_flask.append(1) or flask_app(*args))
    with process(app, worker()):
        by_flask = browser.get(f"{base}/{first}")  # the credential and role not yet kept
        assert by_flask.status_code == 200 and len(to_flask) == 1
        assert [s["scorer_name"] for s in by_flask.json["scores"]] == ["Accuracy",
                                                                       "Helpfulness"]
        assert {s["author_name"] for s in by_flask.json["scores"]} == {owner.name or owner.email}
        with statements() as seen:
            by_door = browser.get(f"{base}/{first}")
        assert len(to_flask) == 1 and len(seen) == 1 and "FROM outputs" in seen[0], seen
        assert by_door.data == by_flask.data
        assert (sorted((k, v) for k, v in by_door.headers.items() if k != "X-Request-ID")
                == sorted((k, v) for k, v in by_flask.headers.items() if k != "X-Request-ID"))
        unscored = browser.get(f"{base}/{other}")
        assert len(to_flask) == 1 and unscored.json["scores"] == []
        succeed(other, "Changed since")  # by a worker, say: no write through the API
        assert browser.get(f"{base}/{other}").json["text"] == "Changed since"
        for url in (f"{base}/{other + 10_000}",
                    f"/api/projects/{project.id}/runs/{stopped + 10_000}/outputs/{other}"):
            missing = browser.get(url)
            assert missing.status_code == 404 and missing.json["code"] == "NOT_FOUND", url
        assert "Output" in browser.get(f"{base}/{other + 10_000}").json["message"]
        for _ in range(2):
            assert stranger.get(f"{base}/{first}").status_code == 404
    assert len(to_flask) == 1 + 2 + 1 + 2  # the 404s and the stranger's went on to Flask


def test_a_deleted_token_is_refused_at_the_door_here_at_once_and_elsewhere_within_the_ttl(
        app: Flask, factory: Factory, owner: User, project: Project, stopped: int) -> None:
    client = app.test_client()
    auth = {"Authorization": f"Bearer {factory.api_token(owner)}"}
    url = f"/api/projects/{project.id}/runs/{stopped}/progress"
    here = {**worker(), CREDENTIALS: CredentialCache(TTL_S)}
    there = {**worker(), CREDENTIALS: CredentialCache(TTL_S)}
    for caches in (there, here):
        with process(app, caches):
            for _ in range(2):  # kept, then answered by the door
                assert client.get(url, headers=auth).status_code == 200
    with process(app, here):
        token_id = client.get("/api/auth/tokens", headers=auth).json["items"][0]["id"]
        assert client.delete(f"/api/auth/tokens/{token_id}", headers=auth).status_code == 204
        assert client.get(url, headers=auth).status_code == 401  # at once, here
    waited = _until(app, there, lambda: client.get(url, headers=auth).status_code == 401)
    assert waited <= TTL_S + 0.5


def test_what_the_door_cannot_check_goes_on_to_flask(
        app: Flask, factory: Factory, browser: Session, project: Project,
        stopped: int) -> None:
    base = f"/api/projects/{project.id}/runs/{stopped}"
    stranger = factory.signed_in()
    with process(app, worker()):
        for _ in range(2):
            assert browser.get(f"{base}/progress").status_code == 200
        assert app.test_client().get(f"{base}/progress").status_code == 401  # no credential
        for _ in range(2):  # not a member: refused in the view's words, and never kept
            refused = stranger.get(f"{base}/progress")
            assert refused.status_code == 404 and refused.json["code"] == "NOT_FOUND"
        assert browser.get(f"/api/projects/{project.id}/runs/99999999999999/progress"
                           ).status_code == 404  # beyond the ids' range: no query
        assert browser.get(f"{base}/outputs?page=0").status_code == 422


@contextmanager
def hearing(caches: dict[str, TTLCache[Any]]) -> Iterator[forget_everywhere.Listener]:
    """`caches` as held by a serving process that hears the others' writes (real Redis)."""
    listener = forget_everywhere.listen(lambda: [cache.clear() for cache in caches.values()])
    try:
        assert listener.hearing.wait(10), "never subscribed"
        yield listener
    finally:
        listener.stop()


def long_lived() -> dict[str, TTLCache[Any]]:
    """A worker whose entries outlive the test: only a write heard can clear them."""
    return {MEMBERSHIPS: TTLCache[Role](600), READS: TTLCache[Any](600),
            LISTS: TTLCache[Any](600), CREDENTIALS: CredentialCache(600)}


def test_a_rename_and_a_revocation_show_at_once_in_every_process_that_hears(
        app: Flask, factory: Factory, owner: User, browser: Session, project: Project,
        stopped: int) -> None:
    url = f"/api/projects/{project.id}/runs/{stopped}"
    client = app.test_client()
    auth = {"Authorization": f"Bearer {factory.api_token(owner)}"}
    here, there = long_lived(), long_lived()
    with hearing(there):
        with process(app, there):
            for _ in range(2):  # kept, then answered from memory
                model_id = client.get(url, headers=auth).json["targets"][0]["model_id"]
            assert there[READS]._entries and there[CREDENTIALS]._entries
        with process(app, here):
            renamed = browser.patch(f"/api/projects/{project.id}/models/{model_id}",
                                    json={"name": "Renamed model"})
            assert renamed.status_code == 200, renamed.json
        waited = _until(app, there, lambda: client.get(url, headers=auth).json[
            "targets"][0]["model_name"] == "Renamed model", seconds=5)
        assert waited < 2  # not the 600 s the entries would otherwise live
        with process(app, here):
            token_id = client.get("/api/auth/tokens", headers=auth).json["items"][0]["id"]
            assert client.delete(f"/api/auth/tokens/{token_id}",
                                 headers=auth).status_code == 204
        waited = _until(app, there, lambda: client.get(url, headers=auth).status_code == 401,
                        seconds=5)
        assert waited < 2


def test_a_process_that_stopped_hearing_forgets_everything_when_it_hears_again(
        app: Flask, browser: Session, project: Project, stopped: int,
        redis_conn: Any) -> None:
    """Writes announced while its connection was down are lost to it: it clears what it
    keeps once subscribed again, and goes on hearing."""
    url = f"/api/projects/{project.id}/runs/{stopped}/progress"
    there = long_lived()
    with hearing(there) as listener:
        with process(app, there):
            assert browser.get(url).status_code == 200
        assert there[READS]._entries
        listener.hearing.clear()
        name = listener.redis.get_connection_kwargs()["client_name"]
        ours = [c for c in redis_conn.client_list(_type="pubsub") if c["name"] == name]
        assert len(ours) == 1, ours
        redis_conn.client_kill_filter(_id=ours[0]["id"])
        assert listener.hearing.wait(10), "never heard again"
        assert not there[READS]._entries and not there[MEMBERSHIPS]._entries
        with process(app, there):
            assert browser.get(url).status_code == 200
        assert there[READS]._entries
        forget_everywhere.announce()
        _until(app, there, lambda: not there[READS]._entries, seconds=5)


def test_a_sign_in_and_an_estimate_leave_what_every_process_keeps(
        app: Flask, factory: Factory, browser: Session, owner: User, project: Project,
        stopped: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Writes in FORGETS_NOTHING are answered without clearing or telling anyone; a write
    that changes something still does both."""
    from assay.runtime import current

    told: list[Any] = []
    monkeypatch.setattr(current().redis, "publish", lambda *args: told.append(args))
    here = long_lived()
    run = f"/api/projects/{project.id}/runs/{stopped}"
    with process(app, here):
        view = browser.get(run).json
        assert here[READS]._entries
        factory.login(owner)
        estimate = browser.post(f"/api/projects/{project.id}/runs/estimate", json={
            "dataset_id": view["dataset_id"],
            "targets": [{"model_id": view["targets"][0]["model_id"]}]})
        assert estimate.status_code == 200, estimate.json
        assert here[READS]._entries and here[CREDENTIALS]._entries and told == []
        assert browser.patch(f"/api/projects/{project.id}", json={
            "name": "Renamed"}).status_code == 200
        assert not here[READS]._entries and len(told) == 1


def test_a_write_succeeds_when_no_process_can_be_told(
        app: Flask, browser: Session, project: Project, stopped: int,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Redis unreachable: the write stands, this process forgets, the others follow within
    their entries' lifetimes."""
    from redis import ConnectionError as RedisDown

    from assay.runtime import current

    def down(*_args: Any) -> None:
        raise RedisDown("Connection refused")

    monkeypatch.setattr(current().redis, "publish", down)
    here = long_lived()
    with process(app, here):
        model_id = browser.get(f"/api/projects/{project.id}/runs/{stopped}").json[
            "targets"][0]["model_id"]
        assert here[READS]._entries
        renamed = browser.patch(f"/api/projects/{project.id}/models/{model_id}",
                                json={"name": "Renamed model"})
        assert renamed.status_code == 200, renamed.json
        assert not here[READS]._entries
        assert browser.get(f"/api/projects/{project.id}/models/{model_id}").json[
            "name"] == "Renamed model"


def _lists(project: Project) -> list[str]:
    base = f"/api/projects/{project.id}"
    return ["/api/projects", f"{base}/datasets", f"{base}/models?include_archived=true"]


def test_the_projects_lists_are_kept_and_a_write_through_the_api_shows_at_once(
        app: Flask, browser: Session, project: Project, stopped: int) -> None:
    base = f"/api/projects/{project.id}"
    with process(app, long_lived()):
        first = [browser.get(url).json for url in _lists(project)]
        with statements() as seen:
            assert [browser.get(url).json for url in _lists(project)] == first
        assert seen == []  # answered by the door from memory
        model = first[2]["items"][0]
        writes = [
            browser.patch(base, json={"name": "Renamed project"}),
            browser.post(f"{base}/datasets", json={
                "name": "Added", "kind": "questions",
                "cases": [{"input": {"question": "Why?"}}]}),
            browser.patch(f"{base}/models/{model['id']}", json={"name": "Renamed model"}),
        ]
        assert [w.status_code for w in writes] == [200, 201, 200], [w.json for w in writes]
        projects, datasets, models = [browser.get(url).json for url in _lists(project)]
    assert projects["items"][0]["name"] == "Renamed project"
    assert datasets["total"] == first[1]["total"] + 1 and datasets["items"][0]["name"] == "Added"
    assert {m["name"] for m in models["items"]} >= {"Renamed model"}


def test_a_list_is_kept_per_user_and_refused_to_a_stranger(
        app: Flask, factory: Factory, browser: Session, project: Project) -> None:
    stranger = factory.signed_in()
    with process(app, long_lived()):
        for _ in range(2):
            mine = browser.get("/api/projects").json
            theirs = stranger.get("/api/projects").json
            refused = stranger.get(f"/api/projects/{project.id}/datasets")
            assert [p["id"] for p in mine["items"]] == [project.id]
            assert theirs["items"] == []
            assert refused.status_code == 404 and refused.json["code"] == "NOT_FOUND"


def test_a_list_changed_outside_the_api_shows_within_its_ttl(
        app: Flask, factory: Factory, owner: User, browser: Session, project: Project) -> None:
    url = "/api/projects"
    caches = worker()
    with process(app, caches):
        assert browser.get(url).json["total"] == 1
    factory.project(owner, "Made by a seed")  # no API write: no process hears of it
    waited = _until(app, caches, lambda: browser.get(url).json["total"] == 2)
    assert waited <= TTL_S + 0.5
