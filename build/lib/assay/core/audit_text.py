"""One readable sentence per audit event ("Ana set the project budget to $10.00"), built
from its action and before/after in one place, so every client shows the same words."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from assay.core.projects.models import AuditEvent

Data = dict[str, Any]


def money(micros: Any) -> str:
    if micros is None:
        return "no cap"
    # as the SPA shows money: 2 to 6 decimals, exact (integer micro-dollars, no float)
    whole, frac = divmod(int(micros), 1_000_000)
    digits = f"{frac:06d}".rstrip("0").ljust(2, "0")
    return f"${whole:,}.{digits}"


def _percent(value: Any) -> str:
    return f"{float(value) * 100:g}%"


def _or_default(unit: str) -> Callable[[Any], str]:
    return lambda v: "the server default" if v is None else f"{v}{unit}"


# project setting -> (its name in a sentence, how its value reads)
SETTINGS: dict[str, tuple[str, Callable[[Any], str]]] = {
    "name": ("the name", lambda v: f"“{v}”"),
    "description": ("the description", lambda v: f"“{v}”" if v else "nothing"),
    "budget_micros": ("the project budget", money),
    "alert_threshold": ("the budget alert threshold", _percent),
    "default_concurrency": ("the default concurrency", _or_default(" calls")),
    "default_timeout_s": ("the default timeout", _or_default(" s")),
    "default_max_retries": ("the default max retries", _or_default("")),
}


def _setting(key: str, value: Any) -> str:
    if key == "code_execution":
        return f"{'enabled' if value else 'disabled'} code execution"
    label, render = SETTINGS.get(key, (key.replace("_", " "), str))
    if key == "budget_micros" and value is None:
        return "removed the project budget"
    return f"set {label} to {render(value)}"


def _joined(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def _project_updated(d: Data) -> str:
    after = d.get("after") or {}
    if not after:
        return "updated the project"
    parts = [_setting(k, v) for k, v in after.items()]
    # "set A to 1 and B to 2": one "set" for a row of them
    return _joined([p.removeprefix("set ") if i and p.startswith("set ")
                    and parts[i - 1].startswith("set ") else p for i, p in enumerate(parts)])


def _quoted(key: str) -> Callable[[Data], str]:
    return lambda d: f"“{d.get(key)}”" if d.get(key) else ""


PHRASES: dict[str, Callable[[Data], str]] = {
    "project.created": lambda d: f"created the project “{d.get('name')}”",
    "project.updated": _project_updated,
    "member.added": lambda d: f"added {d.get('email')} as {d.get('role')}",
    "member.role_changed": lambda d: f"changed a member's role from {d.get('before')} to "
                                     f"{d.get('after')}",
    "member.removed": lambda d: f"removed a member ({d.get('role')})",
    "invite.created": lambda d: f"invited {d.get('email')} as {d.get('role')}",
    "invite.revoked": lambda d: f"revoked the invite of {d.get('email')}",
    "invite.accepted": lambda d: f"joined as {d.get('role')} by invite",
    "run.created": lambda d: f"started a run of {d.get('cells')} cells",
    "run.paused": lambda d: "paused a run",
    "run.resumed": lambda d: "resumed a run",
    "run.cancelled": lambda d: "cancelled a run",
    "run.retried": lambda d: "retried a run's failed cells",
    "run.budget_changed": lambda d: f"set a run's budget to {money(d.get('to'))}",
    "dataset.created": lambda d: f"created the dataset “{d.get('name')}” "
                                 f"({d.get('cases')} cases)",
    "dataset.archived": lambda d: f"archived the dataset “{d.get('name')}”",
    "dataset.restored": lambda d: f"restored the dataset “{d.get('name')}”",
    "dataset.deleted": lambda d: f"deleted the dataset “{d.get('name')}”",
    "model.created": lambda d: f"added the model “{d.get('name')}”",
    "model.archived": lambda d: f"archived the model “{d.get('name')}”",
    "model.restored": lambda d: f"restored the model “{d.get('name')}”",
    "model.deleted": lambda d: f"deleted the model “{d.get('name')}”",
    "credential.created": lambda d: f"added the provider “{d.get('label')}”",
    "credential.deleted": lambda d: f"deleted the provider “{d.get('label')}”",
    "prompt.created": lambda d: f"created the prompt “{d.get('name')}”",
    "prompt.version_added": lambda d: f"saved version {d.get('version')} of a prompt",
    "scorer.created": lambda d: f"created the {d.get('kind')} scorer “{d.get('name')}”",
    "scorer.version_added": lambda d: f"saved version {d.get('version')} of a scorer",
    "document.uploaded": lambda d: f"uploaded the document “{d.get('name')}”",
    "document.deleted": lambda d: f"deleted the document “{d.get('name')}”",
    "generation.started": lambda d: f"started generating {d.get('count')} {d.get('kind')}",
    "generation.accepted": lambda d: f"accepted {d.get('cases')} generated cases",
    "dataset.updated": lambda d: "renamed or described a dataset",
    "dataset.cases_added": lambda d: f"added {d.get('cases')} cases to a dataset "
                                     f"(version {d.get('version')})",
    "dataset.case_edited": lambda d: f"edited a case (dataset version {d.get('version')})",
    "dataset.case_deleted": lambda d: f"deleted a case (dataset version {d.get('version')})",
    "model.updated": lambda d: "changed a model's settings",
    "credential.updated": lambda d: "changed a provider",
    "credential.tested": lambda d: "tested a provider: "
                                   + ("it works" if d.get("ok") else "it failed"),
    "scorer.archived": lambda d: "archived a scorer",
    "scorer.restored": lambda d: "restored a scorer",
    "run.comparisons_started": lambda d: f"started pairwise judging of {d.get('pairs')} pairs"
    + (f" against run #{d['base_run_id']}" if d.get("base_run_id") else ""),
    "score.manual_set": lambda d: f"scored an output of run #{d.get('run_id')} by hand",
    "score.manual_deleted": lambda d: f"removed a manual score in run #{d.get('run_id')}",
}


def actor_label(name: str | None, email: str | None) -> str:
    return name or email or "Someone"


def describe(event: AuditEvent, actor_name: str | None = None) -> str:
    """The sentence for `event`; actions without a phrase read as their words, with the
    target they touched."""
    who = actor_label(actor_name, event.actor_email)
    data = event.data or {}
    phrase = PHRASES.get(event.action)
    if phrase is not None:
        try:
            return f"{who} {phrase(data)}"
        except (TypeError, ValueError):  # an old event without the fields a phrase reads
            pass
    noun, _, verb = event.action.partition(".")
    if not verb:
        return f"{who}: {noun.replace('_', ' ')}"
    target = f" #{event.target_id}" if event.target_id else ""
    return f"{who} {verb.replace('_', ' ')} {noun}{target}"
