"""Provider credentials of a project: add, list, change, delete, test and discover.

The key is write-only: stored encrypted (secrets.py) with its last four characters for
display, or read from a named environment variable. It never reaches a response, a log
line, an audit event or a job: audit data says ``key_changed: true`` and nothing more.

Saving tests the connection (probe.py) and records the result; a failed test does not
refuse the save, bad input does (422). The test runs before any row is written, so no
transaction is held open during the call. Every test and model list is on the ledger
("connection_test": its requests and tokens, under no model).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from assay.core import audit, ledger
from assay.core.auth.models import User
from assay.core.base import utcnow
from assay.core.errors import Conflict, DomainError, Invalid, NotFound
from assay.core.experiments import spend as holds
from assay.core.llm import cloud_secrets, env_keys, probe
from assay.core.llm import kinds as kinds_
from assay.core.llm.kinds import ProviderKind
from assay.core.llm.models import Credential, ModelConfig
from assay.core.llm.secrets import credential_key, decrypt_secret, encrypt_secret
from assay.core.pagination import Page, paginate
from assay.core.projects.models import Project
from assay.core.runs.models import Run, RunStatus, RunTarget
from assay.providers.ssrf import UnresolvableHost, check_base_url
from assay.settings import Settings

LEAST_CALL_MICROS = 1
ACTIVE = (RunStatus.pending, RunStatus.running, RunStatus.paused)
MASK = "••••"


@dataclass(frozen=True)
class Saved:
    credential: Credential
    outcome: probe.Outcome | None  # None: nothing about the connection changed


def _invalid(field: str, message: str) -> Invalid:
    return Invalid(message, {"json": {field: [message]}})


def key_source(credential: Credential) -> str:
    if credential.secret_env:
        return "env"
    return "stored" if credential.secret_ciphertext else "none"


def key_hint(credential: Credential) -> str | None:
    if credential.secret_env or not credential.secret_ciphertext:
        return None
    return MASK + (credential.secret_last4 or "")


# --- reading ----------------------------------------------------------------------------------


def list_credentials(session: Session, project: Project, page: int,
                     page_size: int) -> Page[Any]:
    stmt = (select(Credential).where(Credential.project_id == project.id)
            .order_by(Credential.kind, Credential.label, Credential.id))
    return paginate(session, stmt, page, page_size)


def model_counts(session: Session, credential_ids: list[int]) -> dict[int, int]:
    rows = session.execute(select(ModelConfig.credential_id, func.count())
                           .where(ModelConfig.credential_id.in_(credential_ids))
                           .group_by(ModelConfig.credential_id))
    counts = {cid: 0 for cid in credential_ids}
    counts.update({cid: n for cid, n in rows})
    return counts


def get_credential(session: Session, project: Project, credential_id: int) -> Credential:
    credential = session.get(Credential, credential_id)
    if credential is None or credential.project_id != project.id:
        raise NotFound("Credential not found")
    return credential


# --- checks -----------------------------------------------------------------------------------


def _check_label(session: Session, project: Project, label: str,
                 exclude: int | None = None) -> None:
    stmt = select(Credential.id).where(Credential.project_id == project.id,
                                       Credential.label == label)
    if exclude is not None:
        stmt = stmt.where(Credential.id != exclude)
    if session.scalar(stmt) is not None:
        raise label_taken()


def label_taken() -> Conflict:
    return Conflict("A credential with this label already exists in the project",
                    {"json": {"label": ["Label already in use"]}}, code="LABEL_TAKEN")


def _check_secret_env(name: str, project: Project, kind: ProviderKind, base_url: str) -> None:
    """Only a variable the operator grants this project, sent only where it may go
    (env_keys.py): 422, the same for a variable that is set and one that is not."""
    try:
        env_keys.check(name, project.id, project.slug, kind.kind, base_url)
    except Conflict as refused:
        raise Invalid(refused.message, refused.errors, code=refused.code) from None


def _base_url(kind: ProviderKind, given: str | None, settings: Settings,
              config: dict[str, Any]) -> str:
    url = kinds_.normalise_base_url(given) if given else None
    url = url or kinds_.default_base_url(kind, settings.fake_provider_url, config)
    if not url:
        raise _invalid("base_url", f"A base URL is required for {kind.label}.")
    if "?" in url or "#" in url:
        raise _invalid("base_url", "The base URL takes no query or fragment: it is the "
                                   "server's root, Assay adds the paths.")
    try:
        url = check_base_url(url, settings.url_policy)
    except UnresolvableHost:
        pass  # maybe not resolvable from here yet: saved, and the test says so
    except Invalid as refused:
        raise Invalid(refused.message, {"json": refused.errors}) from None
    return url


def _config(kind: ProviderKind, config: dict[str, Any]) -> dict[str, Any]:
    errors = kinds_.check_config(kind, config)
    if errors:
        raise Invalid(f"The settings do not fit {kind.label}", {"json": {"config": errors}})
    return kinds_.clean_config(kind, config)


def _check_key(kind: ProviderKind, has_stored: bool, secret_env: str | None) -> None:
    if has_stored and not kind.accepts_key:
        raise _invalid("api_key", f"{kind.label} takes no API key.")
    if kind.needs_key and not has_stored and not secret_env:
        what = "An API key" if kind.secret_label == "API key" else f"The {kind.secret_label}"
        raise _invalid("api_key", f"{what} is required for {kind.label} (or name an "
                                  "environment variable holding it in secret_env).")


# --- testing ----------------------------------------------------------------------------------


def _probe(session: Session, project: Project, kind: ProviderKind, base_url: str,
           config: dict[str, Any], key: str | None, secret_env: str | None,
           settings: Settings) -> probe.Outcome:
    """The connection test, on the ledger in the caller's transaction. A test that sends
    a model call (Azure's 1-token chat) is not sent once the project's cap has no room
    left: its price is unknown, so it needs at least the least a call can cost."""
    if secret_env:
        try:
            key = env_keys.read(secret_env, project.id, project.slug, kind.kind, base_url)
        except DomainError as error:
            return probe.Outcome(False, error.message, None)
    target = probe.Target(kind, base_url, key, config)
    if probe.is_paid(target):
        try:
            holds.check(session, project.id, LEAST_CALL_MICROS, "a connection test")
        except holds.BudgetExceeded as over:
            return probe.Outcome(False, f"Not tested: {over.message}", None)
    outcome = probe.check_connection(target, settings.url_policy, probe_manner(settings))
    _on_ledger(session, project.id, outcome.sent)
    return outcome


def probe_manner(settings: Settings) -> probe.Manner:
    return probe.Manner(settings.probe_timeout_s, uniform_failures=settings.uniform_connect_errors)


def _on_ledger(session: Session, project_id: int, sent: probe.Sent) -> None:
    """Connection tests and model lists cost nothing known (no model config prices them):
    their requests and tokens, under no model."""
    tab = ledger.Tab()
    tab.add(None, sent.calls, 0, sent.tokens_in, sent.tokens_out)
    ledger.record(session, project_id, "connection_test", tab)


def _stored_key(credential: Credential, settings: Settings) -> str | None:
    if not credential.secret_ciphertext:
        return None
    return decrypt_secret(settings.secret_key, credential.project_id, credential.kind,
                          credential.secret_ciphertext)


def _record(credential: Credential, outcome: probe.Outcome) -> None:
    credential.last_tested_at = utcnow()
    credential.last_test_ok = outcome.ok
    credential.last_test_error = outcome.error


def _make_default(session: Session, credential: Credential) -> None:
    session.execute(update(Credential).where(
        Credential.project_id == credential.project_id, Credential.kind == credential.kind,
        Credential.id != credential.id, Credential.is_default.is_(True),
    ).values(is_default=False))
    credential.is_default = True


def _has_kind(session: Session, project_id: int, kind: str, exclude: int | None) -> bool:
    stmt = select(Credential.id).where(Credential.project_id == project_id,
                                       Credential.kind == kind)
    if exclude is not None:
        stmt = stmt.where(Credential.id != exclude)
    return session.scalar(stmt.limit(1)) is not None


def _public(credential: Credential) -> dict[str, Any]:
    """What audit events may record of a credential: never the key, nor its hint."""
    return {"kind": credential.kind, "label": credential.label,
            "base_url": credential.base_url, "config": dict(credential.config or {}),
            "secret_env": credential.secret_env, "is_default": credential.is_default,
            "concurrency_ceiling": credential.concurrency_ceiling}


# --- verbs ------------------------------------------------------------------------------------


def create_credential(session: Session, actor: User, project: Project, data: dict[str, Any],
                      settings: Settings) -> Saved:
    kind = kinds_.get_kind(data["kind"])
    label = data["label"].strip()
    _check_label(session, project, label)
    config = _config(kind, data.get("config") or {})
    base_url = _base_url(kind, data.get("base_url"), settings, config)
    key = data.get("api_key")
    secret_env = data.get("secret_env")
    if secret_env:
        _check_secret_env(secret_env, project, kind, base_url)
    _check_key(kind, bool(key), secret_env)
    cloud_secrets.check_secret(kind.kind, key, settings.url_policy)
    outcome = _probe(session, project, kind, base_url, config, key, secret_env, settings)

    credential = Credential(project_id=project.id, kind=kind.kind, label=label,
                            base_url=base_url, config=config, secret_env=secret_env or None,
                            is_default=False,
                            concurrency_ceiling=data.get("concurrency_ceiling"))
    if key:
        credential.secret_ciphertext = encrypt_secret(settings.secret_key, project.id,
                                                      kind.kind, key)
        credential.secret_last4 = cloud_secrets.hint(kind.kind, key)
    _record(credential, outcome)
    first_of_kind = not _has_kind(session, project.id, kind.kind, None)
    session.add(credential)
    session.flush()
    if data.get("is_default") or first_of_kind:
        _make_default(session, credential)
    audit.record(session, actor, "credential.created", "credential", credential.id, project.id,
                 {**_public(credential), "key_stored": bool(key), "test_ok": outcome.ok})
    return Saved(credential, outcome)


def update_credential(session: Session, actor: User, project: Project, credential: Credential,
                      changes: dict[str, Any], settings: Settings) -> Saved:
    kind = kinds_.get_kind(credential.kind)
    after: dict[str, Any] = {}
    if "label" in changes and changes["label"].strip() != credential.label:
        after["label"] = changes["label"].strip()
        _check_label(session, project, after["label"], exclude=credential.id)
    if "config" in changes:
        config = _config(kind, changes["config"] or {})
        if config != (credential.config or {}):
            after["config"] = config
    if "base_url" in changes:
        url = _base_url(kind, changes["base_url"], settings,
                        after.get("config", credential.config or {}))
        if url != credential.base_url:
            after["base_url"] = url
    if ("concurrency_ceiling" in changes
            and changes["concurrency_ceiling"] != credential.concurrency_ceiling):
        after["concurrency_ceiling"] = changes["concurrency_ceiling"]
    if "secret_env" in changes and (changes["secret_env"] or None) != credential.secret_env:
        after["secret_env"] = changes["secret_env"] or None
    key_changed = "api_key" in changes and (changes["api_key"] or credential.secret_ciphertext)
    new_key = changes.get("api_key") if key_changed else None
    cloud_secrets.check_secret(kind.kind, new_key, settings.url_policy)
    if changes.get("is_default") is True and not credential.is_default:
        after["is_default"] = True
    elif changes.get("is_default") is False and credential.is_default:
        raise _invalid("is_default", "Each provider kind keeps one default credential: make "
                                     "another one the default instead.")
    if not after and not key_changed:
        return Saved(credential, None)  # nothing to change: no write, no audit event

    has_stored = bool(new_key) if key_changed else bool(credential.secret_ciphertext)
    secret_env = after.get("secret_env", credential.secret_env)
    _check_key(kind, has_stored, secret_env)
    if secret_env and {"base_url", "secret_env"} & set(after):
        _check_secret_env(secret_env, project, kind, after.get("base_url", credential.base_url))
    outcome = None
    if key_changed or {"base_url", "config", "secret_env"} & set(after):
        key = new_key if key_changed else _stored_key_or_none(credential, settings)
        outcome = _probe(session, project, kind, after.get("base_url", credential.base_url),
                         after.get("config", credential.config or {}), key, secret_env,
                         settings)

    before = {name: _public(credential)[name] for name in after}
    for name, value in after.items():
        if name != "is_default":
            setattr(credential, name, value)
    if after.get("is_default"):
        _make_default(session, credential)
    if key_changed:
        credential.secret_ciphertext = (encrypt_secret(settings.secret_key, project.id,
                                                       kind.kind, new_key) if new_key else None)
        credential.secret_last4 = cloud_secrets.hint(kind.kind, new_key) if new_key else None
    if outcome is not None:
        _record(credential, outcome)
    credential.updated_at = utcnow()
    data: dict[str, Any] = {"before": before, "after": after}
    if key_changed:
        data["key_changed"] = True
    if outcome is not None:
        data["test_ok"] = outcome.ok
    audit.record(session, actor, "credential.updated", "credential", credential.id, project.id,
                 data)
    return Saved(credential, outcome)


def _stored_key_or_none(credential: Credential, settings: Settings) -> str | None:
    try:
        return _stored_key(credential, settings)
    except DomainError:
        return None  # unreadable (SECRET_KEY changed): the test reports the provider's 401


def check_credential(session: Session, actor: User, project: Project, credential: Credential,
                    settings: Settings) -> probe.Outcome:
    kind = kinds_.get_kind(credential.kind)
    try:
        key = _stored_key(credential, settings)
    except DomainError as error:
        outcome = probe.Outcome(False, error.message, None)
    else:
        outcome = _probe(session, project, kind, credential.base_url,
                         dict(credential.config or {}), key, credential.secret_env, settings)
    _record(credential, outcome)
    audit.record(session, actor, "credential.tested", "credential", credential.id, project.id,
                 {"ok": outcome.ok, "error": outcome.error})
    return outcome


def discover_models(session: Session, project: Project, credential: Credential,
                    settings: Settings) -> list[dict[str, Any]]:
    """The provider's model ids, each flagged when a model of this credential uses it."""
    kind = kinds_.get_kind(credential.kind)
    if not kind.supports_discovery:
        raise Conflict(f"{kind.label} offers no model list to discover: type the model id "
                       "(for Azure, the deployment name).", code="DISCOVERY_UNSUPPORTED")
    key = credential_key(settings.secret_key, credential)
    target = probe.Target(kind, credential.base_url, key, dict(credential.config or {}))
    sent = probe.Sent()
    try:
        found = probe.discover(target, settings.url_policy, sent, probe_manner(settings))
    finally:  # the requests made are on the ledger, whether the list came back or not
        _on_ledger(session, project.id, sent)
        session.commit()
    used = set(session.scalars(select(ModelConfig.model).where(
        ModelConfig.credential_id == credential.id)))
    return [{**item, "configured": item["id"] in used} for item in found]


def delete_credential(session: Session, actor: User, project: Project,
                      credential: Credential) -> None:
    runs = session.scalar(
        select(func.count(func.distinct(Run.id))).select_from(Run)
        .join(RunTarget, RunTarget.run_id == Run.id)
        .join(ModelConfig, ModelConfig.id == RunTarget.model_id)
        .where(ModelConfig.credential_id == credential.id, Run.status.in_(ACTIVE))) or 0
    if runs:
        raise Conflict(f"This credential is used by {runs} active run(s); wait for them to "
                       "finish or cancel them first.", code="CREDENTIAL_IN_USE")
    names = list(session.scalars(select(ModelConfig.name).where(
        ModelConfig.credential_id == credential.id).order_by(ModelConfig.name)))
    if names:
        shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
        raise Conflict(f"This credential is used by {len(names)} model(s) ({shown}), archived "
                       "ones included; point them at another credential or delete them first.",
                       code="CREDENTIAL_IN_USE")
    was_default = credential.is_default
    audit.record(session, actor, "credential.deleted", "credential", credential.id, project.id,
                 _public(credential))
    session.delete(credential)
    session.flush()
    if was_default:  # the kind keeps a default while it has credentials
        heir = session.scalar(select(Credential).where(
            Credential.project_id == project.id, Credential.kind == credential.kind)
            .order_by(Credential.created_at, Credential.id).limit(1))
        if heir is not None:
            heir.is_default = True
