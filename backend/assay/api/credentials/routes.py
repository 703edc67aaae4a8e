"""Provider credentials of a project (admins manage them; viewers see them, never a key),
and the provider kinds a credential can be."""

from __future__ import annotations

from typing import Any

from sqlalchemy.exc import IntegrityError

from assay.api import preconditions
from assay.api.base import (
    Blueprint,
    PageArgs,
    commit,
    page_dict,
    page_of,
    project_access,
    runtime,
    session,
    user,
)
from assay.api.credentials.schemas import (
    ConnectionTestSchema,
    CredentialCreateSchema,
    CredentialSchema,
    CredentialUpdateSchema,
    DiscoveredSchema,
    ProviderKindSchema,
)
from assay.api.slow_lane import slow_work
from assay.core.base import utcnow
from assay.core.llm import credentials as service
from assay.core.llm import kinds
from assay.core.llm.models import Credential
from assay.core.projects.models import Role

blp = Blueprint("credentials", __name__,
                url_prefix="/api/projects/<int:project_id>/credentials",
                description="Provider credentials (API keys are write-only)")
kinds_blp = Blueprint("provider_kinds", __name__, url_prefix="/api",
                      description="The provider kinds a credential can be")
ONE = "/<int:credential_id>"


def _views(items: list[Credential]) -> list[dict[str, Any]]:
    counts = service.model_counts(session(), [c.id for c in items])
    return [{"id": c.id, "kind": c.kind, "label": c.label, "base_url": c.base_url,
             "config": dict(c.config or {}), "key_hint": service.key_hint(c),
             "key_source": service.key_source(c), "secret_env": c.secret_env,
             "is_default": c.is_default, "concurrency_ceiling": c.concurrency_ceiling,
             "last_tested_at": c.last_tested_at,
             "last_test_ok": c.last_test_ok, "last_test_error": c.last_test_error,
             "model_count": counts[c.id], "created_at": c.created_at,
             "updated_at": c.updated_at, "row_version": c.row_version} for c in items]


def _commit_unique() -> None:
    try:
        commit()
    except IntegrityError as error:  # a concurrent request took the label first
        session().rollback()
        raise service.label_taken() from error


@kinds_blp.get("/provider-kinds")
@kinds_blp.response(200, ProviderKindSchema(many=True))
def list_provider_kinds() -> Any:
    """What each kind needs, so a form can be drawn for it (any signed-in user)."""
    user()
    fake_url = runtime().settings.fake_provider_url
    return [kinds.public(kind, fake_url) for kind in kinds.KINDS.values()]


@blp.get("")
@blp.arguments(PageArgs, location="query")
@blp.response(200, page_of(CredentialSchema))
def list_credentials(args: dict[str, Any], project_id: int) -> Any:
    project, _ = project_access(project_id, Role.viewer)
    page = service.list_credentials(session(), project, args["page"], args["page_size"])
    return page_dict(page, _views(page.items))


@blp.post("")
@blp.arguments(CredentialCreateSchema)
@blp.response(201, CredentialSchema)
@slow_work
def create_credential(data: dict[str, Any], project_id: int) -> Any:
    """Checks the input (422), tests the connection and saves, even when the test fails:
    the result is in last_test_ok and last_test_error."""
    project, _ = project_access(project_id, Role.admin)
    saved = service.create_credential(session(), user(), project, data, runtime().settings)
    _commit_unique()
    return _views([saved.credential])[0]


@blp.get(ONE)
@blp.response(200, CredentialSchema)
@preconditions.read()
def get_credential(project_id: int, credential_id: int) -> Any:
    project, _ = project_access(project_id, Role.viewer)
    credential = service.get_credential(session(), project, credential_id)
    return preconditions.tagged(_views([credential])[0], credential)


@blp.patch(ONE)
@blp.arguments(CredentialUpdateSchema)
@blp.response(200, CredentialSchema)
@preconditions.write()
@slow_work
def update_credential(data: dict[str, Any], project_id: int, credential_id: int) -> Any:
    """A change of base URL, key, environment variable or config tests the connection
    again; the kind cannot change (add another credential)."""
    project, _ = project_access(project_id, Role.admin)
    credential = service.get_credential(session(), project, credential_id)
    preconditions.guard(credential, lambda: _views([credential])[0])
    service.update_credential(session(), user(), project, credential, data, runtime().settings)
    _commit_unique()
    return preconditions.tagged(_views([credential])[0], credential)


@blp.delete(ONE)
@blp.response(204)
def delete_credential(project_id: int, credential_id: int) -> Any:
    """Refused (409 CREDENTIAL_IN_USE) while a model, archived or not, or an active run
    uses it."""
    project, _ = project_access(project_id, Role.admin)
    credential = service.get_credential(session(), project, credential_id)
    service.delete_credential(session(), user(), project, credential)
    commit()
    return None


@blp.post(ONE + "/test")
@blp.response(200, ConnectionTestSchema)
@slow_work
def test_credential(project_id: int, credential_id: int) -> Any:
    """One small real call to the provider; the result is recorded on the credential."""
    project, _ = project_access(project_id, Role.admin)
    credential = service.get_credential(session(), project, credential_id)
    outcome = service.check_credential(session(), user(), project, credential,
                                       runtime().settings)
    tested_at = credential.last_tested_at or utcnow()
    commit()
    return {"ok": outcome.ok, "error": outcome.error, "latency_ms": outcome.latency_ms,
            "tested_at": tested_at}


@blp.get(ONE + "/discover")
@blp.response(200, DiscoveredSchema)
@slow_work
def discover_models(project_id: int, credential_id: int) -> Any:
    """The provider's model ids, where it lists them (409 DISCOVERY_UNSUPPORTED for Azure,
    502 PROVIDER_ERROR when the provider fails)."""
    project, _ = project_access(project_id, Role.admin)
    credential = service.get_credential(session(), project, credential_id)
    return {"items": service.discover_models(session(), project, credential,
                                             runtime().settings)}
