"""A dataset accepted from a generation job keeps how it was made (generator model, its
settings, the job's spec and prompt) after the job's preview has expired from Redis."""

from __future__ import annotations

import json
from typing import Any

from assay.runtime import current
from tests.api.test_generation import (  # noqa: F401 (fixtures)
    QUESTIONS,
    Setup,
    scripts,
    setup,
    start,
)


def test_a_generated_dataset_shows_its_generator_spec_and_prompt(
        setup: Setup, scripts: Any) -> None:  # noqa: F811
    scripts(("about: rivers", json.dumps(QUESTIONS)))
    job = start(setup, "questions", {"model_id": setup.fast, "count": 7, "topic": "rivers",
                                     "difficulty": "hard", "instructions": "Be brief"})
    accepted = setup.browser.post(f"{setup.base}/{job['id']}/accept",
                                  json={"dataset_name": "Rivers", "selected": [0, 1]})
    assert accepted.status_code == 201, accepted.json
    # the job expires from Redis; the dataset still knows where it came from
    current().redis.flushdb()
    url = f"/api/projects/{setup.project.id}/datasets/{accepted.json['dataset_id']}"
    origin = setup.browser.get(url).json["origin"]
    assert origin["type"] == "generated" and origin["job_id"] == job["id"]
    assert (origin["model_id"], origin["model_name"]) == (setup.fast, job_model(setup))
    assert origin["spec"]["topic"] == "rivers" and origin["spec"]["difficulty"] == "hard"
    assert (origin["requested"], origin["received"], origin["accepted"]) == (7, 7, 2)
    assert origin["cost_micros"] == job["cost_micros"] > 0
    prompt = origin["prompt"]
    assert [m["role"] for m in prompt] == ["system", "user"]
    assert "7 distinct hard evaluation questions about: rivers" in prompt[1]["content"]
    assert "Instructions: Be brief" in prompt[1]["content"]


def job_model(setup: Setup) -> str:  # noqa: F811
    reply = setup.browser.get(f"/api/projects/{setup.project.id}/models/{setup.fast}")
    assert reply.status_code == 200, reply.json
    return str(reply.json["name"])
