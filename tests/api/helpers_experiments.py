"""A project with fake-provider models and a tagged dataset, and a complete wizard config."""

from __future__ import annotations

import base64
import io
import json
import zipfile
from dataclasses import dataclass
from typing import Any

import httpx
from sqlalchemy import select

from assay.core.datasets.service import create_dataset, latest_version, version_cases
from assay.core.llm.models import Credential, ModelConfig
from assay.core.llm.service import ensure_demo_models
from assay.extensions import db
from tests.factories import Factory, Session

GOAL = "Answer customer questions about orders politely, accurately and briefly."
TEMPLATE = ("You are a support agent for an online shop. Answer the customer's question "
            "below.\n\nQuestion: {{question}}")
CRITERIA = [
    {"name": "Helpfulness", "description": "Gives an actionable answer", "weight": 0.6,
     "scale": {"min": 0, "max": 5}},
    {"name": "Tone", "description": "Polite and calm wording", "weight": 0.4,
     "scale": {"min": 0, "max": 5}},
]


@dataclass
class Lab:
    browser: Session
    project_id: int
    model_ids: list[int]
    version_id: int
    case_ids: list[int]
    project: Any = None

    def url(self, tail: str = "") -> str:
        return f"/api/projects/{self.project_id}/experiments{tail}"

    def config(self) -> dict[str, Any]:
        return {
            "objective": {"goal": GOAL},
            "rubric": {"criteria": CRITERIA},
            "prompt": {"template": TEMPLATE, "system": None, "few_shots": [], "tools": []},
            "data": {"dataset_version_id": self.version_id, "holdout_fraction": 0.3,
                     "split_seed": 7},
            "models": {"targets": [{"model_id": self.model_ids[0],
                                    "params": {"temperature": 0.2}}]},
            "judges": {"pointwise": [self.model_ids[-1]], "pairwise": False,
                       "pairwise_judge": None,
                       "safety": {"pii": True, "jailbreak": False, "action": "flag"}},
            "stop": {"max_iterations": 3, "min_delta": 0.02, "convergence_window": 2,
                     "max_budget_micros": 5_000_000, "budget_alert_threshold": 0.8,
                     "max_total_tokens": None, "stop_if_no_suggestion": True},
        }

    def draft(self, **steps: Any) -> dict[str, Any]:
        body = {"name": "Support answers", **self.config(), **steps}
        reply = self.browser.post(self.url(), json=body)
        assert reply.status_code == 201, reply.json
        return dict(reply.json)


def make_lab(factory: Factory, cases: int = 10) -> Lab:
    owner = factory.user()
    project = factory.project(owner, "Experiments")
    with db.factory() as session:
        actor, found = session.merge(owner), session.merge(project)
        models = ensure_demo_models(session, actor, found, factory.settings.fake_provider_url)
        tags = ["billing", "shipping"]
        dataset = create_dataset(session, actor, found, "Support questions", "cases", [
            {"input": {"question": f"Where is my order number {i}?"}, "tags": [tags[i % 2]]}
            for i in range(cases)])
        version = latest_version(session, dataset.id)
        case_ids = [c.id for c in version_cases(session, version.id)]
        session.commit()
        lab = Lab(factory.login(owner), project.id, [m.id for m in models], version.id,
                  case_ids, project)
    return lab


ASSIST_MODEL = "assist-good"
ASSIST_RUBRIC = [{"name": "Accuracy", "description": "Facts are correct", "weight": 0.5,
                  "scale": {"min": 0, "max": 5}},
                 {"name": "Tone", "description": "Polite and calm wording", "weight": 0.45,
                  "scale": {"min": 0, "max": 5}}]
ASSIST_SCRIPTS = [
    {"model": ASSIST_MODEL, "pattern": "User hints", "reply": json.dumps({"options": [
        {"title": t, "text": f"{t} objective for support replies."}
        for t in ("Clarity", "Creativity", "Efficiency")]})},
    {"model": ASSIST_MODEL, "pattern": "Generate a rubric", "reply": "```json\n" + json.dumps(
        {"criteria": ASSIST_RUBRIC}) + "\n```"},
    {"model": ASSIST_MODEL, "pattern": "prompt approaches", "reply": json.dumps({"prompts": [
        {"name": n, "text": f"{n}: answer {{{{question}}}}", "rationale": "Because"}
        for n in ("Structured", "Conversational", "Minimal")]})},
    {"model": ASSIST_MODEL, "pattern": "Prompt:", "reply": json.dumps(
        {"improved": "Answer {{question}} kindly and precisely.", "changes": "Added tone"})},
    {"model": ASSIST_MODEL, "pattern": "", "reply": json.dumps(
        {"text": "A clearer objective with an audience.", "changes": "Named the audience"})},
]


def script_fake(fake_url: str, scripts: list[dict[str, Any]]) -> None:
    """Add `scripts` to the shared fake provider's (replacing those of the same models)."""
    models = {s["model"] for s in scripts}
    config = httpx.get(f"{fake_url}/_fake/config").json()
    kept = [s for s in config["scripts"] if s.get("model") not in models]
    httpx.post(f"{fake_url}/_fake/config", json={"scripts": [*kept, *scripts]}
               ).raise_for_status()


def priced_model(project_id: int, model: str, fake_url: str) -> int:
    """A priced model config of the project on a fake-provider credential of its own."""
    with db.factory() as session:
        found = session.scalar(select(ModelConfig.id).where(
            ModelConfig.project_id == project_id, ModelConfig.name == model))
        if found is not None:
            return int(found)
        credential = Credential(project_id=project_id, kind="fake", label=f"{model} account",
                                base_url=fake_url, config={})
        session.add(credential)
        session.flush()
        row = ModelConfig(project_id=project_id, credential_id=credential.id, name=model,
                          model=model, params={}, input_price_per_mtok_micros=1_000_000,
                          output_price_per_mtok_micros=2_000_000)
        session.add(row)
        session.commit()
        return row.id


def assist_model(project_id: int, fake_url: str) -> int:
    """A model whose replies are valid answers to every kind of assist."""
    script_fake(fake_url, ASSIST_SCRIPTS)
    return priced_model(project_id, ASSIST_MODEL, fake_url)


def steps(model_id: int, version_id: int) -> dict[str, Any]:
    """All seven steps, valid for a dataset whose cases have a `question` (one case is
    enough: nothing is held out)."""
    return {
        "objective": {"goal": GOAL},
        "rubric": {"criteria": [{**c, "scale": {**c["scale"], "labels": None}}
                                for c in CRITERIA]},
        "prompt": {"template": TEMPLATE, "system": "Be kind.",
                   "few_shots": [{"input": "Hi", "output": "Hello!"}], "tools": []},
        "data": {"dataset_version_id": version_id, "holdout_fraction": 0.0, "split_seed": 3},
        "models": {"targets": [{"model_id": model_id, "params": {"temperature": 0.2},
                                "grid": None}]},
        "judges": {"pointwise": [model_id], "pairwise": False, "pairwise_judge": None,
                   "refiner": None, "safety": {"pii": True, "jailbreak": True,
                                               "action": "flag"}},
        "stop": {"max_iterations": 3, "min_delta": 0.02, "convergence_window": 2,
                 "max_budget_micros": 5_000_000, "budget_alert_threshold": 0.8,
                 "max_total_tokens": None, "stop_if_no_suggestion": True},
    }


def draft_in(project: Any, model_id: int, version_id: int) -> int:
    """A valid draft experiment of `project` (written through the service)."""
    from assay.core.experiments import service

    with db.factory() as session:
        found = service.create(session, None, session.merge(project), "Fresh draft", None,
                               steps(model_id, version_id))
        session.commit()
        return found.id


def tiny_bundle() -> str:
    """A minimal experiment bundle, base64: a draft with the default configuration."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        z.writestr("experiment.yaml", "format: assay-experiment-bundle/1\nname: Tiny\n"
                                      "config: {}\n")
    return base64.b64encode(buffer.getvalue()).decode()
