"""Provider credentials: kinds, create (tested on save), validation per kind, labels, the
default per kind, patch, on-demand test, discovery, delete guards, roles and audit."""

from __future__ import annotations

import dataclasses
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from sqlalchemy import select

from assay.core.llm import probe
from assay.core.projects.models import AuditEvent, Project, Role
from assay.core.runs.models import Run, RunStatus
from assay.extensions import db
from assay.providers.fake import FakeProviderThread
from assay.runtime import current
from tests.factories import Factory, Session

GOOD_KEY = "sk-good-key-12345678"


class Stub(BaseHTTPRequestHandler):
    """Ollama's /api/tags, OpenRouter's /v1/key and /v1/models, and a redirect."""

    seen: list[dict[str, str]] = []  # the headers of each request

    def log_message(self, *args: Any) -> None:
        pass

    def _json(self, status: int, body: Any) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        Stub.seen.append(dict(self.headers.items()))
        auth = self.headers.get("Authorization", "")
        if self.path.startswith("/moved"):
            self.send_response(302)
            self.send_header("Location", "http://169.254.169.254/latest/meta-data/")
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif self.path == "/api/tags":
            assert not auth, "Ollama gets no key"
            self._json(200, {"models": [{"name": "llama3.2:3b"}, {"name": "qwen2.5:7b"}]})
        elif self.path == "/v1/key":
            ok = auth == f"Bearer {GOOD_KEY}"
            self._json(200 if ok else 401, {"data": {"label": "x"}} if ok else
                       {"error": {"message": "No auth credentials found", "code": 401}})
        elif self.path == "/v1/models":
            self._json(200, {"data": [{"id": "openai/gpt-4o-mini", "name": "GPT-4o mini"},
                                      {"id": "anthropic/claude-3.5-haiku"}]})
        else:
            self._json(404, {"error": "not found"})


@pytest.fixture(scope="module")
def stub() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Stub)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@dataclasses.dataclass
class Ctx:
    factory: Factory
    browser: Session
    project: Project
    fake: str

    @property
    def base(self) -> str:
        return f"/api/projects/{self.project.id}/credentials"

    def create(self, status: int = 201, **body: Any) -> dict[str, Any]:
        body.setdefault("kind", "fake")
        body.setdefault("label", f"{body['kind']} {len(body)}-{id(body)}")
        body.setdefault("base_url", self.fake)  # None: the kind's default
        reply = self.browser.post(self.base, json=body)
        assert reply.status_code == status, reply.get_data(as_text=True)
        assert reply.json is not None
        return dict(reply.json)

    def get(self, credential_id: int) -> dict[str, Any]:
        reply = self.browser.get(f"{self.base}/{credential_id}")
        assert reply.status_code == 200, reply.json
        return dict(reply.json or {})

    def audit(self) -> list[dict[str, Any]]:
        reply = self.browser.get(f"/api/projects/{self.project.id}/audit",
                                 query_string={"page_size": 100})
        assert reply.status_code == 200
        return list((reply.json or {})["items"])


@pytest.fixture
def ctx(factory: Factory, fake_provider: FakeProviderThread) -> Ctx:
    owner = factory.user()
    project = factory.project(owner, "Keys")
    return Ctx(factory, factory.login(owner), project, fake_provider.url)


def _field_errors(reply: Any, *path: str) -> list[str]:
    assert reply.status_code == 422, reply.get_data(as_text=True)
    node = reply.json["errors"]["json"]
    for key in path:
        assert key in node, (path, reply.json)
        node = node[key]
    return list(node)


# --- kinds ------------------------------------------------------------------------------------


def test_provider_kinds_describe_each_form(ctx: Ctx, factory: Factory) -> None:
    reply = factory.signed_in().get("/api/provider-kinds")  # any signed-in user
    assert reply.status_code == 200
    kinds = {k["kind"]: k for k in reply.json}
    assert set(kinds) == {"openai", "anthropic", "azure_openai", "openrouter", "ollama",
                          "openai_compatible", "fake", "google_gemini", "google_vertex",
                          "aws_bedrock"}
    assert kinds["openai"]["default_base_url"] == "https://api.openai.com"
    assert kinds["openai"]["needs_key"] is True
    assert kinds["ollama"]["needs_key"] is False and kinds["ollama"]["accepts_key"] is False
    assert kinds["openai_compatible"]["needs_key"] is False
    assert kinds["openai_compatible"]["default_base_url"] is None
    assert kinds["fake"]["default_base_url"] == ctx.fake
    assert "fake" in kinds["fake"]["label"].lower() and "not a real" in kinds["fake"]["label"]
    azure = {f["name"]: f for f in kinds["azure_openai"]["config_fields"]}
    assert azure["api_version"]["required"] is True and azure["deployment"]["required"] is False
    assert kinds["azure_openai"]["supports_discovery"] is False
    assert ctx.factory.app.test_client().get("/api/provider-kinds").status_code == 401


# --- create and test on save ------------------------------------------------------------------


def test_create_tests_the_connection_and_masks_the_key(ctx: Ctx) -> None:
    made = ctx.create(kind="openai", label="OpenAI - Production", api_key=GOOD_KEY,
                      base_url=ctx.fake + "/v1/")
    assert made["base_url"] == ctx.fake  # the trailing /v1 is Assay's to add
    assert made["last_test_ok"] is True and made["last_test_error"] is None
    assert made["last_tested_at"] is not None
    assert made["key_hint"] == "••••5678" and made["key_source"] == "stored"
    assert made["is_default"] is True and made["model_count"] == 0
    assert made["config"] == {} and made["secret_env"] is None
    assert "api_key" not in made and GOOD_KEY not in json.dumps(made)
    assert ctx.get(made["id"]) == made
    listed = ctx.browser.get(ctx.base).json
    assert listed["total"] == 1 and listed["items"] == [made]
    event = ctx.audit()[0]
    assert event["action"] == "credential.created" and event["target_id"] == str(made["id"])
    assert event["data"]["key_stored"] is True and event["data"]["test_ok"] is True
    assert GOOD_KEY not in json.dumps(event) and "5678" not in json.dumps(event)


@pytest.mark.parametrize("kind", ["fake", "openai", "openai_compatible", "anthropic"])
def test_a_failed_test_is_recorded_and_the_credential_saved(ctx: Ctx, kind: str) -> None:
    made = ctx.create(kind=kind, api_key="bad-key", base_url=ctx.fake)
    assert made["last_test_ok"] is False
    assert made["last_test_error"].startswith("401 from provider: invalid API key")
    assert ctx.get(made["id"])["last_test_error"] == made["last_test_error"]


def test_unreachable_and_unresolvable_hosts_are_recorded(ctx: Ctx) -> None:
    refused = ctx.create(kind="openai_compatible", base_url="http://127.0.0.1:1")
    assert (refused["last_test_ok"], refused["last_test_error"]) == \
        (False, "connection refused")
    nowhere = ctx.create(kind="openai", api_key=GOOD_KEY, base_url="https://nowhere.invalid")
    assert nowhere["last_test_ok"] is False
    assert "could not resolve" in nowhere["last_test_error"]


def test_a_redirect_is_not_followed(ctx: Ctx, stub: str) -> None:
    made = ctx.create(kind="openai_compatible", base_url=stub + "/moved")
    assert made["last_test_ok"] is False
    assert "302 from provider: redirected" in made["last_test_error"]
    assert "does not follow redirects" in made["last_test_error"]


def test_each_kind_connects(ctx: Ctx, stub: str) -> None:
    """Each kind's test call, against the fake provider or a stub of the provider."""
    cases: list[dict[str, Any]] = [
        {"kind": "fake"},  # no key: the fake wants some key, Assay sends a placeholder
        {"kind": "openai", "api_key": GOOD_KEY, "config": {"organization": "org-123"}},
        {"kind": "anthropic", "api_key": GOOD_KEY},
        {"kind": "azure_openai", "api_key": GOOD_KEY,
         "config": {"api_version": "2024-10-21", "deployment": "gpt-4o-mini"}},
        {"kind": "openai_compatible", "api_key": GOOD_KEY},
        {"kind": "openrouter", "api_key": GOOD_KEY, "base_url": stub},
        {"kind": "ollama", "base_url": stub},
    ]
    for body in cases:
        body.setdefault("base_url", ctx.fake)
        made = ctx.create(**body)
        assert (made["last_test_ok"], made["last_test_error"]) == (True, None), body
    Stub.seen.clear()
    headed = ctx.create(kind="openrouter", api_key=GOOD_KEY, base_url=stub + "/v1", config={
        "headers": {"HTTP-Referer": "https://assay.example", "X-Title": "Assay"},
        "max_concurrency": 4})
    assert headed["last_test_ok"] is True and headed["base_url"] == stub
    assert headed["config"]["max_concurrency"] == 4
    assert Stub.seen[-1]["X-Title"] == "Assay"  # the runs' adapter headers, config included
    wrong = ctx.create(kind="openrouter", api_key="sk-or-wrong-0000", base_url=stub)
    assert wrong["last_test_error"] == "401 from provider: invalid API key"
    no_deployment = ctx.create(kind="azure_openai", api_key=GOOD_KEY, base_url=ctx.fake,
                               config={"api_version": "2024-10-21"})
    assert no_deployment["last_test_error"].startswith(
        "404 from provider: /openai/models not found (check the base URL, deployment or API "
        "version)")


def test_defaults_per_kind(ctx: Ctx, monkeypatch: pytest.MonkeyPatch) -> None:
    called: list[str] = []

    def offline(target: probe.Target, url_policy: object = None,
                manner: object = None) -> probe.Outcome:
        called.append(target.base_url)  # no call leaves the machine from a test
        return probe.Outcome(False, "offline", None)

    monkeypatch.setattr(probe, "check_connection", offline)
    local = ctx.create(kind="ollama", label="Local", base_url=None)
    assert local["base_url"] == "http://localhost:11434"
    made = ctx.create(kind="openai", label="No URL", api_key=GOOD_KEY, base_url=None)
    assert made["base_url"] == "https://api.openai.com"
    fake = ctx.browser.post(ctx.base, json={"kind": "fake", "label": "Fake default"}).json
    assert fake["base_url"] == ctx.fake
    assert called == ["http://localhost:11434", "https://api.openai.com", ctx.fake]


@pytest.mark.parametrize(("body", "path", "fragment"), [
    ({"kind": "azure_openai", "api_key": GOOD_KEY, "base_url": "https://x.openai.azure.com"},
     ("config", "api_version"), "required for Azure OpenAI"),
    ({"kind": "azure_openai", "api_key": GOOD_KEY, "base_url": "https://x.openai.azure.com",
      "config": {"api_version": "latest"}}, ("config", "api_version"), "2024-10-21"),
    ({"kind": "azure_openai", "api_key": GOOD_KEY, "base_url": "https://x.openai.azure.com",
      "config": {"api_version": "2024-10-21", "deployment": "../../admin"}},
     ("config", "deployment"), "letters, digits"),
    ({"kind": "azure_openai", "api_key": GOOD_KEY, "config": {"api_version": "2024-10-21"}},
     ("base_url",), "required for Azure OpenAI"),
    ({"kind": "openai", "api_key": GOOD_KEY, "config": {"region": "eu"}},
     ("config", "region"), "Unknown setting"),
    ({"kind": "openai"}, ("api_key",), "An API key is required for OpenAI"),
    ({"kind": "anthropic", "secret_env": None}, ("api_key",), "required for Anthropic"),
    ({"kind": "ollama", "api_key": GOOD_KEY}, ("api_key",), "Ollama takes no API key"),
    ({"kind": "openai_compatible"}, ("base_url",), "A base URL is required"),
    ({"kind": "fake", "secret_env": "openai_api_key"}, ("secret_env",), "environment variable"),
    ({"kind": "fake", "secret_env": "1_API_KEY"}, ("secret_env",), "environment variable"),
    ({"kind": "fake", "secret_env": "SECRET_KEY"}, ("secret_env",), "not available"),
    ({"kind": "fake", "secret_env": "ASSAY_X_API_KEY"}, ("secret_env",), "not available"),
    ({"kind": "fake", "secret_env": "NOT_GRANTED_API_KEY"}, ("secret_env",), "not available"),
    ({"kind": "fake", "api_key": "   "}, ("api_key",), "blank"),
    ({"kind": "fake", "api_key": "k" * 4097}, ("api_key",), "Length"),
    ({"kind": "fake", "label": "  "}, ("label",), "blank"),
    ({"kind": "fake", "label": "x" * 101}, ("label",), "Length"),
    ({"kind": "fake", "base_url": "ftp://example.com"}, ("base_url",), "http or https"),
    ({"kind": "fake", "base_url": "http://user:pw@example.com"}, ("base_url",), "credentials"),
    ({"kind": "fake", "base_url": "http://169.254.169.254"}, ("base_url",), "metadata"),
    ({"kind": "fake", "base_url": "http://0xa9fea9fe/"}, ("base_url",), "metadata"),
    ({"kind": "fake", "base_url": "http://[fe80::1]/"}, ("base_url",), "link-local"),
    ({"kind": "fake", "base_url": "http://example.com/?key=x"}, ("base_url",), "no query"),
    ({"kind": "gemini"}, ("kind",), "Must be one of"),
    ({"kind": "fake", "config": {"headers": {"Authorization": "Bearer sk-x"}}},
     ("config", "headers"), "never in headers"),
    ({"kind": "fake", "config": {"headers": {"X-Title": "two\nlines"}}},
     ("config", "headers"), "one line"),
    ({"kind": "fake", "config": {"headers": ["X-Title"]}}, ("config", "headers"), "object"),
    ({"kind": "fake", "config": {"max_concurrency": 0}}, ("config", "max_concurrency"),
     "1 to 1000"),
    ({"kind": "fake", "config": {"max_concurrency": "4"}}, ("config", "max_concurrency"),
     "integer"),
    ({"kind": "anthropic", "api_key": GOOD_KEY, "config": {"anthropic_version": "v1"}},
     ("config", "anthropic_version"), "2023-06-01"),
    ({"kind": "fake", "config": {"rpm_limit": 0}}, ("config", "rpm_limit"),
     "from 1 to 1000000 (requests per minute"),
    ({"kind": "fake", "config": {"rpm_limit": -5}}, ("config", "rpm_limit"), "from 1 to"),
    ({"kind": "fake", "config": {"rpm_limit": 1_000_001}}, ("config", "rpm_limit"),
     "1 to 1000000"),
    ({"kind": "fake", "config": {"rpm_limit": "60"}}, ("config", "rpm_limit"), "integer"),
    ({"kind": "fake", "config": {"rpm_limit": 1.5}}, ("config", "rpm_limit"), "integer"),
    ({"kind": "fake", "config": {"rpm_limit": True}}, ("config", "rpm_limit"), "integer"),
    ({"kind": "fake", "config": {"tpm_limit": 0}}, ("config", "tpm_limit"),
     "from 1 to 1000000000 (tokens per minute"),
    ({"kind": "fake", "config": {"tpm_limit": 10**10}}, ("config", "tpm_limit"), "1 to"),
    ({"kind": "fake", "config": {"tpm_limit": [1000]}}, ("config", "tpm_limit"), "integer"),
])
def test_bad_input_is_422_and_saves_nothing(ctx: Ctx, body: dict[str, Any],
                                            path: tuple[str, ...], fragment: str) -> None:
    body = {"label": "Bad", **body}
    messages = _field_errors(ctx.browser.post(ctx.base, json=body), *path)
    assert any(fragment in m for m in messages), messages
    assert ctx.browser.get(ctx.base).json["total"] == 0


def test_rate_limits_are_saved_and_checked_on_patch(ctx: Ctx) -> None:
    made = ctx.create(kind="fake", label="Limited", config={
        "max_concurrency": 4, "rpm_limit": 600, "tpm_limit": 90_000})
    assert made["config"] == {"max_concurrency": 4, "rpm_limit": 600, "tpm_limit": 90_000}
    url = f"{ctx.base}/{made['id']}"
    bad = ctx.browser.patch(url, json={"config": {"rpm_limit": 600, "tpm_limit": -1}})
    assert _field_errors(bad, "config", "tpm_limit")[0].startswith(
        "Must be an integer from 1 to 1000000000")
    assert ctx.browser.get(url).json["config"]["tpm_limit"] == 90_000, "a bad PATCH saved"
    cleared = ctx.browser.patch(url, json={"config": {"tpm_limit": 1000}})
    assert cleared.status_code == 200, cleared.json
    assert cleared.json["config"] == {"tpm_limit": 1000}


def test_the_concurrency_ceiling_is_saved_changed_and_cleared(ctx: Ctx) -> None:
    made = ctx.create(kind="fake", label="Shared key", concurrency_ceiling=12)
    assert made["concurrency_ceiling"] == 12
    url = f"{ctx.base}/{made['id']}"
    for bad in (0, 1001, "8", 2.5):
        refused = ctx.browser.patch(url, json={"concurrency_ceiling": bad})
        assert refused.status_code == 422, (bad, refused.json)
    assert ctx.browser.get(url).json["concurrency_ceiling"] == 12, "a bad PATCH saved"
    changed = ctx.browser.patch(url, json={"concurrency_ceiling": 3})
    assert changed.status_code == 200 and changed.json["concurrency_ceiling"] == 3
    assert ctx.browser.patch(url, json={"concurrency_ceiling": None}).json[
        "concurrency_ceiling"] is None
    assert ctx.create(kind="fake", label="Unbounded")["concurrency_ceiling"] is None


def test_private_addresses_can_be_blocked(ctx: Ctx, monkeypatch: pytest.MonkeyPatch) -> None:
    """Blocked (the compose file's setting), a private provider needs its host:port on the
    allow-list; the operator's own fake provider is always allowed."""
    rt = current()
    port = ctx.fake.rsplit(":", 1)[1]
    monkeypatch.setattr(rt, "settings", dataclasses.replace(
        rt.settings, block_private_urls=True, fake_provider_url="http://127.0.0.1:9"))
    messages = _field_errors(ctx.browser.post(ctx.base, json={
        "kind": "fake", "label": "Local", "base_url": ctx.fake}), "base_url")
    assert "ASSAY_BLOCK_PRIVATE_URLS" in messages[0]
    assert "ASSAY_PRIVATE_URL_ALLOW" in messages[0]
    monkeypatch.setattr(rt, "settings", dataclasses.replace(
        rt.settings, private_url_allow=(f"127.0.0.1:{port}",)))
    allowed = ctx.create(label="Allowed", base_url=f"http://2130706433:{port}")
    assert allowed["base_url"] == f"http://127.0.0.1:{port}"
    assert allowed["last_test_ok"] is True, allowed["last_test_error"]
    monkeypatch.setattr(rt, "settings", dataclasses.replace(
        rt.settings, private_url_allow=(), fake_provider_url=ctx.fake))
    assert ctx.create(label="The fake provider")["last_test_ok"] is True


@pytest.mark.parametrize("host", ["2130706433", "0177.0.0.1", "127.1"])
def test_an_ipv4_spelling_is_stored_as_the_address_it_spells(ctx: Ctx, host: str) -> None:
    """Saved canonical, and the connection test reaches it (aiohttp refused these forms)."""
    port = ctx.fake.rsplit(":", 1)[1]
    made = ctx.create(label=f"Spelled {host}", base_url=f"http://{host}:{port}")
    assert made["base_url"] == f"http://127.0.0.1:{port}"
    assert made["last_test_ok"] is True, made["last_test_error"]


def test_a_key_from_the_environment(ctx: Ctx, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_TEST_API_KEY", GOOD_KEY)
    monkeypatch.setenv("ASSAY_CREDENTIAL_ENV", "FAKE_TEST_API_KEY=*")
    monkeypatch.setenv("ASSAY_CREDENTIAL_ENV_URLS", f"FAKE_TEST_API_KEY={ctx.fake}")
    made = ctx.create(kind="openai", secret_env="FAKE_TEST_API_KEY")
    assert (made["key_source"], made["key_hint"], made["last_test_ok"]) == ("env", None, True)
    monkeypatch.delenv("FAKE_TEST_API_KEY")
    tested = ctx.browser.post(f"{ctx.base}/{made['id']}/test").json
    assert tested["ok"] is False
    assert "environment variable FAKE_TEST_API_KEY" in tested["error"]
    assert "not set" in tested["error"]


# --- labels and defaults ----------------------------------------------------------------------


def test_labels_are_unique_per_project(ctx: Ctx) -> None:
    first = ctx.create(label="Main")
    reply = ctx.browser.post(ctx.base, json={"kind": "fake", "label": "Main"})
    assert (reply.status_code, reply.json["code"]) == (409, "LABEL_TAKEN")
    assert reply.json["errors"] == {"json": {"label": ["Label already in use"]}}
    other = ctx.create(label="Other")
    reply = ctx.browser.patch(f"{ctx.base}/{other['id']}", json={"label": "Main"})
    assert (reply.status_code, reply.json["code"]) == (409, "LABEL_TAKEN")
    assert ctx.browser.patch(f"{ctx.base}/{first['id']}",
                             json={"label": "Main"}).status_code == 200  # itself: fine
    someone = ctx.factory.user()
    elsewhere = ctx.factory.project(someone, "Elsewhere")
    assert ctx.factory.login(someone).post(f"/api/projects/{elsewhere.id}/credentials", json={
        "kind": "fake", "label": "Main", "base_url": ctx.fake}).status_code == 201


def test_one_default_per_kind(ctx: Ctx) -> None:
    a = ctx.create(label="A")
    b = ctx.create(label="B")
    o = ctx.create(kind="openai", label="O", api_key=GOOD_KEY)
    assert (a["is_default"], b["is_default"], o["is_default"]) == (True, False, True)

    c = ctx.create(label="C", is_default=True)
    defaults = {c_["label"]: c_["is_default"] for c_ in ctx.browser.get(ctx.base).json["items"]}
    assert defaults == {"A": False, "B": False, "C": True, "O": True}
    assert c["is_default"] is True

    assert ctx.browser.patch(f"{ctx.base}/{b['id']}", json={"is_default": True}).json[
        "is_default"] is True
    defaults = {c_["label"]: c_["is_default"] for c_ in ctx.browser.get(ctx.base).json["items"]}
    assert defaults == {"A": False, "B": True, "C": False, "O": True}

    messages = _field_errors(ctx.browser.patch(f"{ctx.base}/{b['id']}",
                                               json={"is_default": False}), "is_default")
    assert "keeps one default" in messages[0]
    assert ctx.browser.delete(f"{ctx.base}/{b['id']}").status_code == 204
    defaults = {c_["label"]: c_["is_default"] for c_ in ctx.browser.get(ctx.base).json["items"]}
    assert defaults == {"A": True, "C": False, "O": True}  # the oldest inherits


# --- patch ------------------------------------------------------------------------------------


def test_patch_retests_only_when_the_connection_changes(ctx: Ctx) -> None:
    made = ctx.create(kind="openai", label="Rotate", api_key="bad-key")
    url = f"{ctx.base}/{made['id']}"
    assert made["last_test_ok"] is False
    renamed = ctx.browser.patch(url, json={"label": "Rotated"}).json
    assert renamed["label"] == "Rotated" and renamed["last_tested_at"] == made["last_tested_at"]

    rotated = ctx.browser.patch(url, json={"api_key": "sk-rotated-abcd9999"}).json
    assert rotated["key_hint"] == "••••9999" and rotated["last_test_ok"] is True
    assert rotated["last_test_error"] is None
    event = ctx.audit()[0]
    assert event["action"] == "credential.updated" and event["data"]["key_changed"] is True
    assert "sk-rotated" not in json.dumps(event) and "9999" not in json.dumps(event)

    moved = ctx.browser.patch(url, json={"base_url": "http://127.0.0.1:1"}).json
    assert (moved["last_test_ok"], moved["last_test_error"]) == (False, "connection refused")
    event = ctx.audit()[0]
    assert event["data"]["before"] == {"base_url": ctx.fake}
    assert event["data"]["after"] == {"base_url": "http://127.0.0.1:1"}
    assert "key_changed" not in event["data"]

    count = len(ctx.audit())
    same = ctx.browser.patch(url, json={"label": "Rotated", "base_url": "http://127.0.0.1:1"})
    assert same.status_code == 200 and len(ctx.audit()) == count  # a no-op writes nothing

    messages = _field_errors(ctx.browser.patch(url, json={"api_key": None}), "api_key")
    assert "required for OpenAI" in messages[0]
    assert ctx.browser.patch(url, json={"kind": "anthropic"}).status_code == 422


def test_patch_can_drop_a_stored_key_where_none_is_needed(ctx: Ctx) -> None:
    made = ctx.create(label="Keyed", api_key=GOOD_KEY)
    dropped = ctx.browser.patch(f"{ctx.base}/{made['id']}", json={"api_key": None}).json
    assert (dropped["key_source"], dropped["key_hint"]) == ("none", None)
    assert dropped["last_test_ok"] is True  # the fake gets a placeholder key


def test_patch_validates_config_per_kind(ctx: Ctx) -> None:
    made = ctx.create(kind="azure_openai", api_key=GOOD_KEY, config={
        "api_version": "2024-10-21", "deployment": "gpt-4o-mini"})
    messages = _field_errors(ctx.browser.patch(f"{ctx.base}/{made['id']}",
                                               json={"config": {"deployment": "d"}}),
                             "config", "api_version")
    assert "required" in messages[0]


# --- on-demand test and discovery -------------------------------------------------------------


def test_on_demand_test(ctx: Ctx) -> None:
    made = ctx.create(label="Demand", api_key=GOOD_KEY)
    url = f"{ctx.base}/{made['id']}"
    result = ctx.browser.post(url + "/test").json
    assert result["ok"] is True and result["error"] is None
    assert isinstance(result["latency_ms"], int) and result["tested_at"]
    assert ctx.get(made["id"])["last_tested_at"] == result["tested_at"]
    assert ctx.audit()[0]["action"] == "credential.tested"

    ctx.browser.patch(url, json={"api_key": "bad-key"})
    result = ctx.browser.post(url + "/test").json
    assert result["ok"] is False and result["error"].startswith("401 from provider")
    assert result["latency_ms"] is None
    assert ctx.get(made["id"])["last_test_ok"] is False


def test_discover_lists_the_providers_models(ctx: Ctx, stub: str) -> None:
    made = ctx.create(label="Disc", api_key=GOOD_KEY)
    ctx.browser.post(f"/api/projects/{ctx.project.id}/models", json={
        "name": "Fast", "credential_id": made["id"], "model": "fake-fast"})
    items = ctx.browser.get(f"{ctx.base}/{made['id']}/discover").json["items"]
    ids = [i["id"] for i in items]
    assert ids == sorted(ids) and {"fake-fast", "fake-smart", "fake-judge"} <= set(ids)
    assert {i["id"]: i["configured"] for i in items}["fake-fast"] is True
    assert {i["id"]: i["configured"] for i in items}["fake-smart"] is False

    anthropic = ctx.create(kind="anthropic", api_key=GOOD_KEY)
    items = ctx.browser.get(f"{ctx.base}/{anthropic['id']}/discover").json["items"]
    assert "fake-fast" in [i["id"] for i in items]

    ollama = ctx.create(kind="ollama", base_url=stub)
    items = ctx.browser.get(f"{ctx.base}/{ollama['id']}/discover").json["items"]
    assert [i["id"] for i in items] == ["llama3.2:3b", "qwen2.5:7b"]

    router = ctx.create(kind="openrouter", base_url=stub, api_key=GOOD_KEY)
    items = ctx.browser.get(f"{ctx.base}/{router['id']}/discover").json["items"]
    assert items[1] == {"id": "openai/gpt-4o-mini", "name": "GPT-4o mini", "configured": False}


def test_discover_failures_are_clear(ctx: Ctx) -> None:
    azure = ctx.create(kind="azure_openai", api_key=GOOD_KEY,
                       config={"api_version": "2024-10-21"})
    reply = ctx.browser.get(f"{ctx.base}/{azure['id']}/discover")
    assert (reply.status_code, reply.json["code"]) == (409, "DISCOVERY_UNSUPPORTED")
    assert "deployment name" in reply.json["message"]

    bad = ctx.create(label="Bad key", api_key="bad-key")
    reply = ctx.browser.get(f"{ctx.base}/{bad['id']}/discover")
    assert (reply.status_code, reply.json["code"]) == (502, "PROVIDER_ERROR")
    assert reply.json["message"] == "Discovery failed: 401 from provider: invalid API key"


# --- delete -----------------------------------------------------------------------------------


def _run_status(run_id: int, status: RunStatus) -> None:
    with db.factory() as session:
        run = session.get(Run, run_id)
        assert run is not None
        run.status = status
        session.commit()


def test_delete_is_refused_while_used(ctx: Ctx) -> None:
    unused = ctx.create(label="Unused")
    assert ctx.browser.delete(f"{ctx.base}/{unused['id']}").status_code == 204
    assert ctx.browser.get(f"{ctx.base}/{unused['id']}").status_code == 404
    assert ctx.audit()[0]["action"] == "credential.deleted"

    started = ctx.browser.post(f"/api/projects/{ctx.project.id}/runs/demo")
    assert started.status_code == 202
    demo = next(c for c in ctx.browser.get(ctx.base).json["items"] if c["kind"] == "fake")
    assert demo["model_count"] == 2
    reply = ctx.browser.delete(f"{ctx.base}/{demo['id']}")
    assert (reply.status_code, reply.json["code"]) == (409, "CREDENTIAL_IN_USE")
    assert "1 active run" in reply.json["message"]

    _run_status(started.json["id"], RunStatus.completed)
    models = f"/api/projects/{ctx.project.id}/models"
    fast = next(m for m in ctx.browser.get(models).json["items"] if m["name"] == "Fake Fast")
    assert ctx.browser.post(f"{models}/{fast['id']}/archive").status_code == 200
    reply = ctx.browser.delete(f"{ctx.base}/{demo['id']}")
    assert (reply.status_code, reply.json["code"]) == (409, "CREDENTIAL_IN_USE")
    assert "2 model(s) (Fake Fast, Fake Smart), archived ones included" in reply.json["message"]
    assert ctx.get(demo["id"])["id"] == demo["id"]


# --- roles ------------------------------------------------------------------------------------


def test_viewers_read_admins_manage(ctx: Ctx) -> None:
    made = ctx.create(label="Shared", api_key=GOOD_KEY)
    one = f"{ctx.base}/{made['id']}"
    for role, allowed in ((Role.viewer, False), (Role.editor, False), (Role.admin, True)):
        browser = ctx.factory.login(ctx.factory.member(ctx.project, role))
        listed = browser.get(ctx.base)
        assert listed.status_code == 200 and GOOD_KEY not in listed.get_data(as_text=True)
        assert browser.get(one).json["key_hint"] == "••••5678"
        replies = [
            browser.post(ctx.base, json={"kind": "fake", "label": f"By {role.value}"}),
            browser.patch(one, json={"label": f"Shared {role.value}"}),
            browser.post(one + "/test"),
            browser.get(one + "/discover"),
        ]
        codes = [r.status_code for r in replies]
        assert codes == ([201, 200, 200, 200] if allowed else [403] * 4), (role, codes)
    with db.factory() as session:
        actions = list(session.scalars(select(AuditEvent.action).where(
            AuditEvent.project_id == ctx.project.id)))
    assert actions.count("credential.created") == 2
