"""Model configurations: CRUD, prices (unpriced is flagged), names, parameters per provider,
archive and restore, delete refused once a run used the model, roles, audit, the demo."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from assay.core.datasets.service import ensure_demo_dataset
from assay.core.projects.models import Project, Role
from assay.extensions import db
from assay.providers.fake import FakeProviderThread
from assay.seeds import demo_cases
from tests.factories import Factory, Session

KEY = "sk-model-tests-0001"


@dataclasses.dataclass
class Ctx:
    factory: Factory
    browser: Session
    project: Project
    fake: int  # a fake-provider credential
    anthropic: int  # an Anthropic credential (on the fake provider)

    @property
    def base(self) -> str:
        return f"/api/projects/{self.project.id}/models"

    def create(self, status: int = 201, **body: Any) -> dict[str, Any]:
        body.setdefault("name", f"Model {id(body)}")
        body.setdefault("credential_id", self.fake)
        body.setdefault("model", "fake-fast")
        reply = self.browser.post(self.base, json=body)
        assert reply.status_code == status, reply.get_data(as_text=True)
        return dict(reply.json or {})

    def listed(self, **query: Any) -> list[str]:
        reply = self.browser.get(self.base, query_string=query)
        assert reply.status_code == 200, reply.json
        return [m["name"] for m in reply.json["items"]]

    def last_audit(self) -> dict[str, Any]:
        reply = self.browser.get(f"/api/projects/{self.project.id}/audit")
        return dict(reply.json["items"][0])

    def run_on(self, model_ids: list[int]) -> Any:
        with db.factory() as session:
            project = session.merge(self.project)
            dataset = ensure_demo_dataset(session, None, project, demo_cases())
            session.commit()
            dataset_id = dataset.id
        return self.browser.post(f"/api/projects/{self.project.id}/runs",
                                 json={"dataset_id": dataset_id,
                                       "targets": [{"model_id": i} for i in model_ids]})


def _credential(browser: Session, project: Project, **body: Any) -> int:
    reply = browser.post(f"/api/projects/{project.id}/credentials", json=body)
    assert reply.status_code == 201, reply.json
    return int(reply.json["id"])


@pytest.fixture
def ctx(factory: Factory, fake_provider: FakeProviderThread) -> Ctx:
    owner = factory.user()
    project = factory.project(owner, "Models")
    browser = factory.login(owner)
    fake = _credential(browser, project, kind="fake", label="Fake", base_url=fake_provider.url)
    anthropic = _credential(browser, project, kind="anthropic", label="Claude",
                            base_url=fake_provider.url, api_key=KEY)
    return Ctx(factory, browser, project, fake, anthropic)


def _params_errors(reply: Any) -> dict[str, list[str]]:
    assert reply.status_code == 422, reply.get_data(as_text=True)
    return dict(reply.json["errors"]["json"]["params"])


# --- CRUD -------------------------------------------------------------------------------------


def test_create_read_update(ctx: Ctx) -> None:
    made = ctx.create(name="GPT-ish", model="fake-smart", input_price_per_mtok_micros=2_500_000,
                      output_price_per_mtok_micros=10_000_000, context_window=128_000,
                      params={"temperature": 0.2, "max_tokens": 1024, "stop": ["END"]})
    assert {k: made[k] for k in ("name", "credential_id", "credential_label", "provider",
                                 "model", "priced", "context_window", "archived_at")} == {
        "name": "GPT-ish", "credential_id": ctx.fake, "credential_label": "Fake",
        "provider": "fake", "model": "fake-smart", "priced": True, "context_window": 128_000,
        "archived_at": None}
    assert (made["input_price_per_mtok_micros"], made["output_price_per_mtok_micros"]) == \
        (2_500_000, 10_000_000)
    assert made["params"] == {"temperature": 0.2, "max_tokens": 1024, "stop": ["END"]}
    assert made["created_at"] and made["updated_at"]
    event = ctx.last_audit()
    assert event["action"] == "model.created" and event["target_id"] == str(made["id"])

    one = f"{ctx.base}/{made['id']}"
    assert ctx.browser.get(one).json == made
    page = ctx.browser.get(ctx.base).json
    assert (page["total"], page["page"], page["page_size"]) == (1, 1, 20)
    assert page["items"] == [made]

    changed = ctx.browser.patch(one, json={"name": "Renamed", "credential_id": ctx.anthropic,
                                           "model": "claude-x",
                                           "params": {"temperature": 0.5}}).json
    assert (changed["name"], changed["provider"], changed["credential_label"]) == \
        ("Renamed", "anthropic", "Claude")
    assert changed["params"] == {"temperature": 0.5}
    event = ctx.last_audit()
    assert event["action"] == "model.updated"
    assert event["data"]["before"]["name"] == "GPT-ish"
    assert event["data"]["after"]["name"] == "Renamed"

    before = ctx.last_audit()["id"]
    assert ctx.browser.patch(one, json={"name": "Renamed"}).status_code == 200
    assert ctx.last_audit()["id"] == before  # a no-op writes nothing
    assert ctx.browser.get(f"{ctx.base}/999999").status_code == 404


def test_unpriced_models_are_flagged_not_free(ctx: Ctx) -> None:
    unpriced = ctx.create(name="Local")
    assert unpriced["priced"] is False
    assert unpriced["input_price_per_mtok_micros"] is None
    assert unpriced["output_price_per_mtok_micros"] is None
    half = ctx.create(name="Half", input_price_per_mtok_micros=1)
    assert half["priced"] is False
    free = ctx.create(name="Free", input_price_per_mtok_micros=0,
                      output_price_per_mtok_micros=0)
    assert free["priced"] is True  # explicitly zero is a price
    one = f"{ctx.base}/{free['id']}"
    assert ctx.browser.patch(one, json={"output_price_per_mtok_micros": None}).json[
        "priced"] is False


@pytest.mark.parametrize(("body", "field"), [
    ({"input_price_per_mtok_micros": -1}, "input_price_per_mtok_micros"),
    ({"output_price_per_mtok_micros": 10**12 + 1}, "output_price_per_mtok_micros"),
    ({"input_price_per_mtok_micros": 1.5}, "input_price_per_mtok_micros"),
    ({"context_window": 0}, "context_window"),
    ({"name": " "}, "name"),
    ({"model": ""}, "model"),
    ({"credential_id": "1"}, "credential_id"),
])
def test_bad_fields(ctx: Ctx, body: dict[str, Any], field: str) -> None:
    reply = ctx.browser.post(ctx.base, json={"name": "X", "credential_id": ctx.fake,
                                             "model": "m", **body})
    assert reply.status_code == 422 and field in reply.json["errors"]["json"], reply.json


def test_names_are_unique_and_credentials_local(ctx: Ctx) -> None:
    first = ctx.create(name="Same")
    reply = ctx.browser.post(ctx.base, json={"name": "Same", "credential_id": ctx.fake,
                                             "model": "m"})
    assert (reply.status_code, reply.json["code"]) == (409, "NAME_TAKEN")
    ctx.browser.post(f"{ctx.base}/{first['id']}/archive")
    reply = ctx.browser.post(ctx.base, json={"name": "Same", "credential_id": ctx.fake,
                                             "model": "m"})
    assert (reply.status_code, reply.json["code"]) == (409, "NAME_TAKEN")  # archived too
    other = ctx.create(name="Other")
    reply = ctx.browser.patch(f"{ctx.base}/{other['id']}", json={"name": "Same"})
    assert (reply.status_code, reply.json["code"]) == (409, "NAME_TAKEN")

    someone = ctx.factory.user()
    elsewhere = ctx.factory.project(someone, "Elsewhere")
    theirs = _credential(ctx.factory.login(someone), elsewhere, kind="fake", label="Theirs",
                         base_url="http://127.0.0.1:1")
    reply = ctx.browser.post(ctx.base, json={"name": "Stolen", "credential_id": theirs,
                                             "model": "m"})
    assert reply.status_code == 422
    assert reply.json["errors"]["json"]["credential_id"] == \
        [f"No credential {theirs} in this project"]
    reply = ctx.browser.patch(f"{ctx.base}/{other['id']}", json={"credential_id": theirs})
    assert reply.status_code == 422


# --- parameters per provider ------------------------------------------------------------------


@pytest.mark.parametrize(("provider", "params", "field", "fragment"), [
    ("fake", {"temperature": 2.5}, "temperature", "less than or equal to 2"),
    ("anthropic", {"temperature": 1.5}, "temperature", "0 and 1 for Anthropic"),
    ("fake", {"temperature": "0.5"}, "temperature", "Not a valid number"),
    ("fake", {"temperature": True}, "temperature", "Not a valid number"),
    ("fake", {"max_tokens": 0}, "max_tokens", "greater than or equal to 1"),
    ("fake", {"max_tokens": 1_000_001}, "max_tokens", "less than or equal to 1000000"),
    ("fake", {"top_p": 1.5}, "top_p", "less than or equal to 1"),
    ("fake", {"frequency_penalty": -3}, "frequency_penalty", "greater than or equal to -2"),
    ("fake", {"presence_penalty": 2.5}, "presence_penalty", "less than or equal to 2"),
    ("anthropic", {"frequency_penalty": 0.5}, "frequency_penalty", "do not take"),
    ("anthropic", {"presence_penalty": 0.5}, "presence_penalty", "do not take"),
    ("anthropic", {"seed": 7}, "seed", "do not take"),
    ("fake", {"seed": 1.5}, "seed", "Not a valid integer"),
    ("fake", {"stop": ["a", "b", "c", "d", "e"]}, "stop", "Longer than maximum length 4"),
    ("fake", {"stop": [""]}, "stop", "Length must be between 1 and 200"),
    ("fake", {"stop": "END"}, "stop", "Not a valid list"),
    ("fake", {"logprobs": True}, "logprobs", "Unknown field"),
])
def test_params_are_checked_per_provider(ctx: Ctx, provider: str, params: dict[str, Any],
                                         field: str, fragment: str) -> None:
    credential = ctx.anthropic if provider == "anthropic" else ctx.fake
    reply = ctx.browser.post(ctx.base, json={"name": "P", "credential_id": credential,
                                             "model": "m", "params": params})
    errors = _params_errors(reply)
    assert list(errors) == [field]
    assert fragment in str(errors[field]), errors
    assert ctx.listed() == []


def test_params_that_fit_one_provider_but_not_another(ctx: Ctx) -> None:
    openai_style = {"temperature": 1.5, "seed": 7, "frequency_penalty": 0.5}
    made = ctx.create(name="Warm", params=openai_style)
    assert made["params"] == openai_style
    one = f"{ctx.base}/{made['id']}"
    errors = _params_errors(ctx.browser.patch(one, json={"credential_id": ctx.anthropic}))
    assert set(errors) == {"temperature", "seed", "frequency_penalty"}
    assert ctx.browser.patch(one, json={"credential_id": ctx.anthropic, "params": {
        "temperature": 0.9}}).json["provider"] == "anthropic"


def test_max_tokens_fits_the_context_window(ctx: Ctx) -> None:
    errors = _params_errors(ctx.browser.post(ctx.base, json={
        "name": "Small", "credential_id": ctx.fake, "model": "m", "context_window": 4096,
        "params": {"max_tokens": 4097}}))
    assert "the model's context window" in errors["max_tokens"][0]
    made = ctx.create(name="Small", context_window=4096, params={"max_tokens": 4096})
    one = f"{ctx.base}/{made['id']}"
    errors = _params_errors(ctx.browser.patch(one, json={"context_window": 2048}))
    assert "between 1 and 2048" in errors["max_tokens"][0]
    assert ctx.browser.patch(one, json={"context_window": None}).json["context_window"] is None


def test_null_params_mean_unset(ctx: Ctx) -> None:
    made = ctx.create(params={"temperature": None, "top_p": 0.5, "stop": None})
    assert made["params"] == {"top_p": 0.5}


# --- archive, restore, delete -----------------------------------------------------------------


def test_archive_and_restore(ctx: Ctx) -> None:
    made = ctx.create(name="Old")
    ctx.create(name="Current")
    one = f"{ctx.base}/{made['id']}"
    archived = ctx.browser.post(one + "/archive").json
    assert archived["archived_at"] is not None
    assert ctx.last_audit()["action"] == "model.archived"
    assert ctx.listed() == ["Current"]
    assert ctx.listed(include_archived="true") == ["Old", "Current"]
    assert ctx.browser.get(one).json["archived_at"] == archived["archived_at"]

    reply = ctx.run_on([made["id"]])
    assert reply.status_code == 422 and "archived" in str(reply.json["errors"]), reply.json

    assert ctx.browser.post(one + "/archive").json["archived_at"] == archived["archived_at"]
    restored = ctx.browser.post(one + "/restore").json
    assert restored["archived_at"] is None
    assert ctx.last_audit()["action"] == "model.restored"
    assert ctx.listed() == ["Old", "Current"]
    assert ctx.run_on([made["id"]]).status_code == 202


def test_delete_only_what_no_run_used(ctx: Ctx) -> None:
    unused = ctx.create(name="Unused")
    assert ctx.browser.delete(f"{ctx.base}/{unused['id']}").status_code == 204
    assert ctx.browser.get(f"{ctx.base}/{unused['id']}").status_code == 404
    assert ctx.last_audit()["action"] == "model.deleted"

    used = ctx.create(name="Used")
    assert ctx.run_on([used["id"]]).status_code == 202
    assert ctx.run_on([used["id"]]).status_code == 202
    reply = ctx.browser.delete(f"{ctx.base}/{used['id']}")
    assert (reply.status_code, reply.json["code"]) == (409, "MODEL_IN_USE")
    assert "used by 2 run(s); archive it instead" in reply.json["message"]
    assert ctx.browser.post(f"{ctx.base}/{used['id']}/archive").status_code == 200
    assert ctx.browser.delete(f"{ctx.base}/{used['id']}").status_code == 409
    assert ctx.listed(include_archived="true") == ["Used"]


# --- roles and the demo -----------------------------------------------------------------------


def test_viewers_read_editors_manage(ctx: Ctx) -> None:
    made = ctx.create(name="Shared")
    one = f"{ctx.base}/{made['id']}"
    for role, allowed in ((Role.viewer, False), (Role.reviewer, False), (Role.editor, True)):
        browser = ctx.factory.login(ctx.factory.member(ctx.project, role))
        assert browser.get(ctx.base).status_code == 200 and browser.get(one).status_code == 200
        codes = [
            browser.post(ctx.base, json={"name": f"By {role.value}", "credential_id": ctx.fake,
                                         "model": "m"}).status_code,
            browser.patch(one, json={"model": f"m-{role.value}"}).status_code,
            browser.post(one + "/archive").status_code,
            browser.post(one + "/restore").status_code,
        ]
        assert codes == ([201, 200, 200, 200] if allowed else [403] * 4), (role, codes)


def test_the_demo_models_are_priced_fake_models(ctx: Ctx) -> None:
    assert ctx.browser.post(f"/api/projects/{ctx.project.id}/runs/demo").status_code == 202
    demo = [m for m in ctx.browser.get(ctx.base).json["items"] if m["name"].startswith("Fake ")]
    assert [(m["name"], m["provider"], m["priced"]) for m in demo] == [
        ("Fake Fast", "fake", True), ("Fake Smart", "fake", True)]
    assert {m["credential_id"] for m in demo} == {ctx.fake}  # the project's fake credential

    ctx.browser.post(f"{ctx.base}/{demo[0]['id']}/archive")
    assert ctx.browser.post(f"/api/projects/{ctx.project.id}/runs/demo").status_code == 202
    assert ctx.browser.get(f"{ctx.base}/{demo[0]['id']}").json["archived_at"] is None


def test_start_demo_run_reuses_the_demo_models_even_renamed(ctx: Ctx) -> None:
    demo_run = f"/api/projects/{ctx.project.id}/runs/demo"
    assert ctx.browser.post(demo_run).status_code == 202
    first = ctx.browser.get(ctx.base).json
    assert ctx.browser.post(demo_run).status_code == 202
    assert ctx.browser.get(ctx.base).json["total"] == first["total"]
    fast = next(m for m in first["items"] if m["name"] == "Fake Fast")
    assert ctx.browser.patch(f"{ctx.base}/{fast['id']}", json={"name": "Speedy"}).status_code == 200
    run = ctx.browser.post(demo_run)
    assert run.status_code == 202
    after = ctx.browser.get(ctx.base).json
    assert after["total"] == first["total"]  # no second fake-fast model
    assert fast["id"] in {t["model_id"] for t in run.json["targets"]}


def test_a_fresh_project_gets_a_demo_credential(factory: Factory) -> None:
    owner = factory.user()
    project = factory.project(owner, "Fresh")
    browser = factory.login(owner)
    assert browser.post(f"/api/projects/{project.id}/runs/demo").status_code == 202
    credentials = browser.get(f"/api/projects/{project.id}/credentials").json["items"]
    assert [(c["kind"], c["label"], c["is_default"], c["key_source"], c["model_count"])
            for c in credentials] == [("fake", "Fake provider (demo)", True, "none", 2)]
