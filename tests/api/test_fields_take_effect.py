"""What the user sets in the experiment wizard is what runs (issue 31 item 6): every field
of every step, as the SPA sends it (frontend/src/features/experiments/api.ts toConfig), is
created and started through the API, the loop is driven in this process on the fake
provider, and each field is proved by what the engine then does: the requests the provider
received (model, temperature, max tokens, seed, system prompt, few-shots, tools, which
model refines), the split, the scorers start made, the stop rule that ended the loop; or
it is refused with a clear 422 (stop_if_no_suggestion=false: the loop can only stop).

A field of the API's wizard schemas without a row here fails the coverage test: no field
is stored and ignored unnoticed."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from marshmallow import Schema, fields
from sqlalchemy import select

from assay.api.experiments.schemas import StepsMixin
from assay.core.datasets.service import version_cases
from assay.core.experiments.models import Experiment, Iteration
from assay.core.experiments.split import split_cases
from assay.core.runs.models import Run
from assay.core.scoring.models import ScorerConfig, ScorerVersion
from assay.extensions import db
from tests.api.helpers_experiments import (
    CRITERIA,
    GOAL,
    Lab,
    make_lab,
    priced_model,
    script_fake,
)
from tests.engine.experiment_setup import D1, PROMPT, recorded, reply  # noqa: F401
from tests.engine.test_experiment_loop import drive
from tests.engine.test_providers_engine import fake  # noqa: F401
from tests.factories import Factory

REFINER, JUDGE, TARGET = "fake-refiner", "fake-smart", "fake-fast"
SYSTEM = "You speak as Ada from the shop's support team."
FEW_SHOT = {"input": "Where is my parcel 42?", "output": "It left our depot this morning."}
TOOL = {"name": "lookup_order", "description": "Finds an order by its number",
        "parameters": {"type": "object", "properties": {"number": {"type": "string"}}}}
PARAMS = {"temperature": 0.35, "max_tokens": 321, "seed": 99, "top_p": 0.9}
GRID = {"presence_penalty": [0.1, 0.2]}
RUBRIC = [{**c, "description": f"{c['description']} ({c['name'].lower()}-marker)"}
          for c in CRITERIA]
GOAL_SET = GOAL + " Mention the order number."


@dataclass
class Walk:
    """One experiment started from `config` and driven until it waits or ends."""

    lab: Lab
    config: dict[str, Any]
    experiment: Experiment
    iterations: list[Iteration]
    runs: list[Run]
    scorers: dict[str, dict[str, Any]]  # kind -> the params of the version the run uses
    requests: list[dict[str, Any]]
    ids: dict[str, int] = field(default_factory=dict)

    def of(self, model: str) -> list[dict[str, Any]]:
        return [r for r in self.requests if r.get("model") == model]

    def refiner_calls(self) -> list[dict[str, Any]]:
        return [r for r in self.requests if "Prompt Refinement Task" in _text(r)]

    def scorer(self, kind: str) -> dict[str, Any]:
        return self.scorers[kind]


def _text(request: dict[str, Any]) -> str:
    return json.dumps(request.get("messages") or [])


def _system(request: dict[str, Any]) -> str | None:
    return next((m["content"] for m in request["messages"] if m["role"] == "system"), None)


def the_config(lab: Lab, refiner_id: int) -> dict[str, Any]:
    """Every field set to a value other than its default, as the SPA sends the steps."""
    fast, smart = lab.model_ids[0], lab.model_ids[1]
    return {
        "objective": {"goal": GOAL_SET},
        "rubric": {"criteria": RUBRIC},
        "prompt": {"template": PROMPT, "system": SYSTEM, "few_shots": [FEW_SHOT],
                   "tools": [TOOL]},
        "data": {"dataset_version_id": lab.version_id, "holdout_fraction": 0.4,
                 "split_seed": 11},
        "models": {"targets": [{"model_id": fast, "params": PARAMS, "grid": GRID}]},
        "judges": {"pointwise": [smart], "pairwise": True, "pairwise_judge": smart,
                   "refiner": refiner_id,
                   "safety": {"pii": True, "jailbreak": False, "action": "block"}},
        "stop": {"max_iterations": 5, "min_delta": 0.0, "convergence_window": 1,
                 "max_budget_micros": 50_000_000, "budget_alert_threshold": 0.65,
                 "max_total_tokens": 5_000_000, "stop_if_no_suggestion": True,
                 "max_rejections": 4},
    }


@pytest.fixture
def lab(factory: Factory, fake: Any) -> Lab:  # noqa: F811
    return make_lab(factory, cases=6)


@pytest.fixture
def refiner_id(lab: Lab, fake: Any) -> int:  # noqa: F811
    """A third model, neither target nor judge, whose refinement replies are one diff."""
    script_fake(fake.url, [{"model": REFINER, "pattern": "",
                            "reply": reply(D1)}])
    return priced_model(lab.project_id, REFINER, fake.url)


def walk(lab: Lab, fake_url: str, calls: list[tuple[str, int]], config: dict[str, Any],
         then: Callable[[int], None] | None = None) -> Walk:
    httpx.post(f"{fake_url}/_fake/reset").raise_for_status()
    created = lab.browser.post(lab.url(), json={"name": "Fields", **config})
    assert created.status_code == 201, created.json
    experiment_id = created.json["id"]
    started = lab.browser.post(lab.url(f"/{experiment_id}/start"))
    assert started.status_code == 200, started.json
    drive(calls)
    if then is not None:
        then(experiment_id)
        drive(calls)
    with db.factory() as session:
        experiment = session.get(Experiment, experiment_id)
        assert experiment is not None
        iterations = list(session.scalars(select(Iteration).where(
            Iteration.experiment_id == experiment_id).order_by(Iteration.number)))
        runs = list(session.scalars(select(Run).where(
            Run.id.in_([i.run_id for i in iterations]))))
        scorers = {kind: dict(params) for kind, params in session.execute(
            select(ScorerConfig.kind, ScorerVersion.params)
            .join(ScorerVersion, ScorerVersion.scorer_id == ScorerConfig.id)
            .where(ScorerConfig.id.in_(experiment.scorer_ids or []))
            .order_by(ScorerVersion.number))}
        session.expunge_all()
    received = httpx.get(f"{fake_url}/_fake/requests").json()["requests"]
    return Walk(lab, config, experiment, iterations, runs, scorers, received)


@pytest.fixture
def walked(lab: Lab, refiner_id: int, fake: Any,  # noqa: F811
           recorded: list[tuple[str, int]]) -> Iterator[Walk]:  # noqa: F811
    found = walk(lab, fake.url, recorded, the_config(lab, refiner_id))
    found.ids = {"refiner": refiner_id, "target": lab.model_ids[0], "judge": lab.model_ids[1]}
    yield found


# --- each field of the one walk: what the engine did with it -------------------------------


def _goal(w: Walk) -> None:
    calls = w.refiner_calls()
    assert calls and all("Mention the order number." in _text(r) for r in calls)


def _criteria(w: Walk) -> None:
    judged = [r for r in w.of(JUDGE) if "helpfulness-marker" in _text(r)]
    assert judged and all("tone-marker" in _text(r) for r in judged)
    rubric = w.scorer("llm_judge")["rubric"]["criteria"]
    assert [(c["name"], c["weight"], c["scale"]["max"]) for c in rubric] == [
        (c["name"], c["weight"], c["scale"]["max"]) for c in RUBRIC]


def _template(w: Walk) -> None:
    targets = w.of(TARGET)
    assert targets and all("support agent for Acme routers" in _text(r) for r in targets)


def _system_prompt(w: Walk) -> None:
    assert all(_system(r) == SYSTEM for r in w.of(TARGET))


def _few_shots(w: Walk) -> None:
    for r in w.of(TARGET):
        turns = [(m["role"], m["content"]) for m in r["messages"]]
        assert ("user", FEW_SHOT["input"]) in turns
        assert ("assistant", FEW_SHOT["output"]) in turns


def _tools(w: Walk) -> None:
    for r in w.of(TARGET):
        assert [t["function"]["name"] for t in r["tools"]] == ["lookup_order"]


def _dataset(w: Walk) -> None:
    with db.factory() as session:
        questions = {c.input["question"] for c in version_cases(session, w.lab.version_id)}
    asked = {q for q in questions for r in w.of(TARGET) if q in _text(r)}
    assert asked == questions


def _split(w: Walk) -> None:
    with db.factory() as session:
        cases = [(c.id, c.tags) for c in version_cases(session, w.lab.version_id)]
    refinement, holdout = split_cases(cases, 0.4, 11)
    assert (w.experiment.refinement_case_ids, w.experiment.holdout_case_ids) == (
        refinement, holdout)
    assert len(holdout) == round(0.4 * len(cases))
    shown = [r for r in w.refiner_calls()]
    with db.factory() as session:
        held = {c.input["question"] for c in version_cases(session, w.lab.version_id)
                if c.id in holdout}
    assert shown and not any(q in _text(r) for r in shown for q in held)


def _target_model(w: Walk) -> None:
    per_case = 6 * len(GRID["presence_penalty"])
    assert len(w.of(TARGET)) == per_case


def _params(w: Walk) -> None:
    for r in w.of(TARGET):
        assert (r["temperature"], r["top_p"], r["seed"]) == (0.35, 0.9, 99)
        assert (r.get("max_tokens") or r.get("max_completion_tokens")) == 321


def _grid(w: Walk) -> None:
    assert sorted(r["presence_penalty"] for r in w.of(TARGET)) == [0.1] * 6 + [0.2] * 6


def _pointwise(w: Walk) -> None:
    judged = [r for r in w.of(JUDGE) if "helpfulness-marker" in _text(r)]
    assert len(judged) == len(w.of(TARGET))  # one verdict per output, by the chosen judge


def _pairwise(w: Walk) -> None:
    pair = w.scorer("pairwise_judge")
    assert pair["judges"] == [str(w.ids["judge"])]


def _refiner(w: Walk) -> None:
    calls = w.refiner_calls()
    assert calls and {r["model"] for r in calls} == {REFINER}
    assert w.iterations[0].status == "awaiting_review", (  # its diff is the suggestion
        w.experiment.stop_reason, w.experiment.stop_detail)


def _safety(w: Walk) -> None:
    assert w.scorer("safety") == {"checks": ["pii"], "action": "block"}


def _alert(w: Walk) -> None:
    assert w.runs and all(r.alert_threshold == 0.65 for r in w.runs)


WALK_ROWS: dict[str, Callable[[Walk], None]] = {
    "objective.goal": _goal,
    "rubric.criteria": _criteria,
    "prompt.template": _template,
    "prompt.system": _system_prompt,
    "prompt.few_shots": _few_shots,
    "prompt.tools": _tools,
    "data.dataset_version_id": _dataset,
    "data.holdout_fraction": _split,
    "data.split_seed": _split,
    "models.targets.model_id": _target_model,
    "models.targets.params": _params,
    "models.targets.grid": _grid,
    "judges.pointwise": _pointwise,
    "judges.pairwise": _pairwise,
    "judges.pairwise_judge": _pairwise,
    "judges.refiner": _refiner,
    "judges.safety.pii": _safety,
    "judges.safety.jailbreak": _safety,
    "judges.safety.action": _safety,
    "stop.budget_alert_threshold": _alert,
}


def test_each_field_changes_what_the_engine_does(walked: Walk) -> None:
    """One walk (an experiment is slow to drive), every row checked on it; the failures
    name their fields."""
    failures: dict[str, str] = {}
    for path, probe in WALK_ROWS.items():
        try:
            probe(walked)
        except (AssertionError, KeyError, StopIteration) as error:
            failures[path] = f"{type(error).__name__}: {error}"
    assert not failures, json.dumps(failures, indent=1)


# --- the stop rules: each ends the loop for its own reason ---------------------------------


def _approve(lab: Lab) -> Callable[[int], None]:
    def act(experiment_id: int) -> None:
        done = lab.browser.post(lab.url(f"/{experiment_id}/iterations/1/approve"), json={})
        assert done.status_code == 200, done.json
    return act


def _reject(lab: Lab) -> Callable[[int], None]:
    def act(experiment_id: int) -> None:
        done = lab.browser.post(lab.url(f"/{experiment_id}/iterations/1/reject"),
                                json={"reason": "Too short"})
        assert done.status_code == 200, done.json
    return act


# field -> (stop values, what a reviewer does after iteration 1, the stop reason expected,
# the control: the same walk with the field at another value does not end for that reason)
StopRow = tuple[dict[str, Any], Callable[[Lab], Any] | None, str, dict[str, Any]]
STOP_ROWS: dict[str, StopRow] = {
    "stop.max_iterations": ({"max_iterations": 1}, None, "max_iterations",
                            {"max_iterations": 5}),
    "stop.max_budget_micros": ({"max_budget_micros": 500}, None, "budget",
                               {"max_budget_micros": 50_000_000}),
    "stop.max_total_tokens": ({"max_total_tokens": 10}, None, "max_tokens",
                              {"max_total_tokens": 5_000_000}),
    "stop.max_rejections": ({"max_rejections": 1}, _reject, "rejected", {"max_rejections": 4}),
    # iteration 2 gains less than 100% over the best of the last two: converged; over a
    # window of one there is nothing to compare with
    "stop.convergence_window": ({"min_delta": 1.0, "convergence_window": 2}, _approve,
                                "converged", {"min_delta": 1.0, "convergence_window": 1}),
}
def _stopped(lab: Lab, refiner_id: int, fake_url: str, calls: list[tuple[str, int]],
             stop: dict[str, Any], then: Callable[[Lab], Any] | None) -> Walk:
    config = the_config(lab, refiner_id)
    config["judges"]["pairwise"], config["judges"]["pairwise_judge"] = False, None
    config["stop"] = {**config["stop"], **stop}
    return walk(lab, fake_url, calls, config, then(lab) if then else None)


@pytest.mark.parametrize("path", list(STOP_ROWS))
def test_each_stop_rule_ends_the_loop_for_its_reason(
        lab: Lab, refiner_id: int, fake: Any,  # noqa: F811
        recorded: list[tuple[str, int]], path: str) -> None:  # noqa: F811
    stop, then, reason, control = STOP_ROWS[path]
    w = _stopped(lab, refiner_id, fake.url, recorded, stop, then)
    assert (w.experiment.status, w.experiment.stop_reason) == ("completed", reason), (
        w.experiment.stop_detail, [i.status for i in w.iterations])
    if reason == "budget":
        assert w.experiment.spent_micros <= 500
    other = _stopped(lab, refiner_id, fake.url, recorded, control, then)
    assert other.experiment.stop_reason != reason, other.experiment.stop_detail
    assert len(other.iterations) == len(w.iterations)
    if then is None:
        assert other.iterations[-1].status == "awaiting_review"


@pytest.mark.parametrize("min_delta", [1.0, 0.5])
def test_min_delta_is_the_bar_convergence_is_measured_by(
        lab: Lab, refiner_id: int, fake: Any,  # noqa: F811
        recorded: list[tuple[str, int]], min_delta: float) -> None:  # noqa: F811
    """The fake judges score iteration 2 a little below iteration 1 (a negative gain, under
    any bar from 0 to 1), so the bar shows in the rule's reason: the value set, not another."""
    w = _stopped(lab, refiner_id, fake.url, recorded,
                 {"min_delta": min_delta, "convergence_window": 2}, _approve)
    assert w.experiment.stop_reason == "converged"
    assert f"< {min_delta:.1%} over the last 2 iterations" in (w.experiment.stop_detail or "")


# --- refused: a value the engine cannot honour is a 422, and nothing is stored --------------


def test_stop_if_no_suggestion_false_is_refused_with_a_clear_422(
        lab: Lab, refiner_id: int) -> None:
    config = the_config(lab, refiner_id)
    config["stop"]["stop_if_no_suggestion"] = False
    created = lab.browser.post(lab.url(), json={"name": "Never stops", **config})
    assert created.status_code == 422
    reasons = created.json["errors"]["json"]["stop"]["stop_if_no_suggestion"]
    assert "always stops when the refiner has no suggestion" in reasons[0]
    draft = lab.draft()
    patched = lab.browser.patch(lab.url(f"/{draft['id']}"), json={
        "stop": {"stop_if_no_suggestion": False}},
        headers={"If-Match": f'"{draft.get("row_version", "")}"'}
        if "row_version" in draft else {})
    assert patched.status_code == 422, patched.json
    with db.factory() as session:
        assert session.scalar(select(Experiment.id).where(
            Experiment.name == "Never stops")) is None
        stored = session.get(Experiment, draft["id"])
        assert stored is not None and stored.config["stop"]["stop_if_no_suggestion"] is True


def test_a_stored_false_is_refused_at_start(lab: Lab, refiner_id: int) -> None:
    """A draft that holds false from before (an import, an old row) cannot start."""
    draft = lab.draft()
    with db.factory() as session:
        stored = session.get(Experiment, draft["id"])
        assert stored is not None
        stored.config = {**stored.config, "stop": {**stored.config["stop"],
                                                   "stop_if_no_suggestion": False}}
        session.commit()
    started = lab.browser.post(lab.url(f"/{draft['id']}/start"))
    assert started.status_code == 422
    assert "stop.stop_if_no_suggestion" in started.json["errors"]["json"]


# --- coverage: every field of the wizard's schemas has a row --------------------------------


def _leaves(schema: Schema, prefix: str = "") -> set[str]:
    out: set[str] = set()
    for name, f in schema.fields.items():
        path = f"{prefix}{name}"
        inner = f.inner if isinstance(f, fields.List) else f
        # the steps, and the objects inside them the user fills field by field (a
        # criterion or a few-shot is one value: the rubric, the examples)
        if isinstance(inner, fields.Nested) and (not prefix or name in ("targets", "safety")):
            out |= _leaves(inner.schema, f"{path}.")
        else:
            out.add(path)
    return out


def test_every_wizard_field_has_a_row() -> None:
    covered = set(WALK_ROWS) | set(STOP_ROWS) | {"stop.stop_if_no_suggestion",
                                                 "stop.min_delta"}
    assert _leaves(StepsMixin()) == covered
