"""What cells send, seen in the raw request each output records: a template case through
its target's prompt version, and each user turn of a conversation with its history cut to
the run's max_history_pairs."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from assay.core.datasets.service import create_dataset
from assay.core.projects.models import Project
from assay.core.prompts.service import create_prompt
from assay.core.runs.models import Output, RunStatus
from assay.core.runs.planning import RunSpec, TargetSpec, plan_run
from assay.extensions import db
from assay.jobs.runs import execute_run
from assay.providers.fake import FakeProviderThread
from assay.settings import Settings
from tests.engine.test_providers_engine import configure, fake, setup  # noqa: F401
from tests.factories import Factory


def _sent(run_id: int) -> list[tuple[int, list[dict[str, Any]]]]:
    with db.factory() as session:
        rows = session.execute(select(Output.turn, Output.raw_request, Output.status)
                               .where(Output.run_id == run_id).order_by(Output.turn)).all()
    assert {status for _, _, status in rows} == {"succeeded"}
    return [(turn, raw["json"]["messages"]) for turn, raw, _ in rows]


def _run(project_id: int, spec: RunSpec) -> int:
    with db.factory() as session:
        project = session.get(Project, project_id)
        assert project is not None
        run = plan_run(session, None, project, spec)
        session.commit()
        run_id = run.id
    execute_run(run_id)
    with db.factory() as session:
        from assay.core.runs.models import Run

        found = session.get(Run, run_id)
        assert found is not None and found.status == RunStatus.completed
    return run_id


def test_a_template_case_sends_its_prompt_version_rendered(
        factory: Factory, settings: Settings, fake: FakeProviderThread) -> None:  # noqa: F811
    configure(fake, latency_ms=0)
    s = setup(factory, settings, fake, cases=1)
    with db.factory() as session:
        project = session.get(Project, s.project.id)
        assert project is not None
        dataset = create_dataset(session, None, project, "tpl", "cases", [
            {"input": {"text": "bonjour", "lang": "English"}, "expected": {"output": "hello"}}])
        _, version = create_prompt(session, None, project, {
            "name": "Translate", "template": "Translate {{ text }} into {{lang}}.",
            "system": "You translate into {{lang}}.",
            "few_shots": [{"input": "merci", "output": "thank you"}]})
        session.commit()
        dataset_id, version_id = dataset.id, version.id
    run_id = _run(s.project.id, RunSpec(dataset_id=dataset_id, targets=(
        TargetSpec(s.model_ids[0], prompt_version_id=version_id),), cache=False))
    [(_, messages)] = _sent(run_id)
    assert messages == [
        {"role": "system", "content": "You translate into English."},
        {"role": "user", "content": "merci"}, {"role": "assistant", "content": "thank you"},
        {"role": "user", "content": "Translate bonjour into English."}]


def test_each_conversation_turn_sends_its_history_up_to_the_limit(
        factory: Factory, settings: Settings, fake: FakeProviderThread) -> None:  # noqa: F811
    configure(fake, latency_ms=0)
    s = setup(factory, settings, fake, cases=1)
    talk = [{"role": "system", "content": "Be brief."},
            {"role": "user", "content": "u0"}, {"role": "assistant", "content": "a0"},
            {"role": "user", "content": "u1"}, {"role": "assistant", "content": "a1"},
            {"role": "user", "content": "u2"}]
    with db.factory() as session:
        project = session.get(Project, s.project.id)
        assert project is not None
        dataset = create_dataset(session, None, project, "talk", "conversations", [
            {"input": {"messages": talk}, "expected": {"turns": ["t0", "t1", "t2"]}}])
        session.commit()
        dataset_id = dataset.id
    run_id = _run(s.project.id, RunSpec(dataset_id=dataset_id, cache=False,
                                        targets=(TargetSpec(s.model_ids[0]),),
                                        max_history_pairs=1))
    sent = _sent(run_id)
    assert [turn for turn, _ in sent] == [0, 1, 2]
    contents = [[m["content"] for m in messages] for _, messages in sent]
    assert contents == [["Be brief.", "u0"], ["Be brief.", "u0", "a0", "u1"],
                        ["Be brief.", "u1", "a1", "u2"]]
