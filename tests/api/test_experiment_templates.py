"""Experiment templates: the four shipped ones load, each applies as a dataset of its
sample cases and a draft whose first four steps are valid; a broken file is named."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.core.experiments import templates
from tests.api.helpers_experiments import make_lab
from tests.factories import Factory

SHIPPED = {"customer-support", "creative-writing", "data-extraction", "code-generation"}


def test_every_shipped_template_applies_as_a_valid_draft(factory: Factory) -> None:
    lab = make_lab(factory, cases=2)
    base = f"/api/projects/{lab.project_id}/experiment-templates"
    listed = lab.browser.get(base)
    assert listed.status_code == 200
    assert {t["slug"] for t in listed.json} >= SHIPPED
    for template in listed.json:
        assert len(template["cases"]) >= 8 and len(template["rubric"]) >= 2
        reply = lab.browser.post(f"{base}/{template['slug']}/apply")
        assert reply.status_code == 201, reply.json
        draft = reply.json
        assert draft["template"] == template["slug"] and draft["status"] == "draft"
        for step in ("objective", "rubric", "prompt", "data"):
            assert draft["problems"][step] == {}, (template["slug"], draft["problems"])
        version = draft["config"]["data"]["dataset_version_id"]
        url = f"/api/projects/{lab.project_id}/experiments/{draft['id']}/validate"
        assert lab.browser.post(url, json={"steps": ["objective", "rubric", "prompt",
                                                     "data"]}).status_code == 200
        assert version is not None
    again = lab.browser.post(f"{base}/customer-support/apply")  # names do not collide
    assert again.status_code == 201
    assert lab.browser.post(f"{base}/no-such/apply").status_code == 404
    assert lab.browser.post(f"{base}/..%2Fsecrets/apply").status_code == 404


@pytest.mark.parametrize(("text", "named"), [
    ("name: X\ndescription: Y\nobjective: short\nrubric: []\nprompt: {template: t}\n"
     "cases: []\n", "objective.goal"),
    ("name: [unclosed", "not readable YAML"),
    ("- a list", "must be a mapping"),
    ("name: X\ndescription: Y\ncolour: red\n", "colour"),
])
def test_a_broken_template_file_is_named_with_its_field(tmp_path: Path, text: str,
                                                          named: str) -> None:
    (tmp_path / "broken.yaml").write_text(text)
    with pytest.raises(templates.TemplateInvalid) as caught:
        templates.load_all(tmp_path)
    assert "broken.yaml" in caught.value.message and named in caught.value.message
