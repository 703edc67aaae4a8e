"""Which server environment variables may back a credential: the operator's allow-list.

A credential may name an environment variable (``secret_env``) instead of storing a key.
Those variables are the operator's, so a project admin gets one only where the operator
said so:

* ``ASSAY_CREDENTIAL_ENV`` lists them, each with the projects (slug or id, ``|``-separated,
  or ``*`` for every project) whose credentials may use it:
  ``OPENAI_API_KEY=*,TEAM_API_KEY=research|42``. Unset: none may.
* The key is sent only to its provider kind's fixed default URL (api.openai.com for
  ``openai``, ...), or to a URL the operator adds for that variable in
  ``ASSAY_CREDENTIAL_ENV_URLS`` (``LOCAL_API_KEY=http://vllm:8000``): else a project admin
  could point the credential at their own server and receive the key.

A name that is not granted gets the same answer whether or not the variable is set, so
the answer never tells which variables exist. Both lists are read from the environment
when a key is read, as the key itself is; ``Settings.from_env`` checks them at start.
The checks run when a credential is saved and again every time its key is read.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from assay.core.errors import Conflict
from assay.core.llm import kinds as kinds_

GRANTS_VAR = "ASSAY_CREDENTIAL_ENV"
URLS_VAR = "ASSAY_CREDENTIAL_ENV_URLS"
ANY_PROJECT = "*"
NAME = re.compile(r"[A-Z_][A-Z0-9_]{0,127}")
# Assay's own secrets and settings are never a provider key, whatever the list says.
RESERVED = ("ASSAY_",)
RESERVED_NAMES = frozenset({"SECRET_KEY", "JWT_SECRET", "DATABASE_URL", "REDIS_URL"})
UNAVAILABLE = "SECRET_ENV_UNAVAILABLE"


def _url(url: str) -> str:
    """A base URL as compared: normalised like a saved one, scheme and host lower case."""
    parts = urlsplit(kinds_.normalise_base_url(url))
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}{parts.path}"


def _entries(raw: str, var: str) -> list[tuple[str, str]]:
    out = []
    for entry in raw.replace("\n", ",").split(","):
        entry = entry.strip()
        if not entry:
            continue
        name, sep, value = entry.partition("=")
        name, value = name.strip(), value.strip()
        if not sep or not value or not NAME.fullmatch(name):
            raise ValueError(f"{var}: {entry!r} is not NAME=value")
        if name.startswith(RESERVED) or name in RESERVED_NAMES:
            raise ValueError(f"{var}: {name} is one of Assay's own settings, never a "
                             "provider key")
        out.append((name, value))
    return out


@dataclass(frozen=True)
class EnvKeyPolicy:
    grants: Mapping[str, frozenset[str]]  # variable -> project slugs/ids, or "*"
    urls: Mapping[str, frozenset[str]]  # variable -> further base URLs it may be sent to

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> EnvKeyPolicy:
        """Raises ValueError for a malformed entry."""
        env = os.environ if env is None else env
        grants: dict[str, set[str]] = {}
        for name, scope in _entries(env.get(GRANTS_VAR) or "", GRANTS_VAR):
            grants.setdefault(name, set()).update(s.strip() for s in scope.split("|")
                                                  if s.strip())
        urls: dict[str, set[str]] = {}
        for name, url in _entries(env.get(URLS_VAR) or "", URLS_VAR):
            if urlsplit(url).scheme.lower() not in {"http", "https"}:
                raise ValueError(f"{URLS_VAR}: {url!r} is not an http(s) URL")
            urls.setdefault(name, set()).add(_url(url))
        return cls({k: frozenset(v) for k, v in grants.items()},
                   {k: frozenset(v) for k, v in urls.items()})

    def granted(self, name: str, project_id: int, project_slug: str) -> bool:
        scope = self.grants.get(name, frozenset())
        return bool({ANY_PROJECT, str(project_id), project_slug} & scope)

    def url_allowed(self, name: str, kind: str, base_url: str) -> bool:
        """The kind's fixed default URL (the fake kind has none: it is the server's
        setting), or one the operator added for this variable."""
        default = kinds_.get_kind(kind).default_base_url
        allowed = set(self.urls.get(name, frozenset()))
        if default and "{" in default:  # a regional endpoint: any region of it
            pattern = re.escape(_url(default)).replace(r"\{", "{").replace(r"\}", "}")
            if re.fullmatch(re.sub(r"{\w+}", "[a-z0-9-]+", pattern), _url(base_url)):
                return True
        elif default and kind != kinds_.FAKE:
            allowed.add(_url(default))
        return _url(base_url) in allowed


def unavailable(name: str) -> Conflict:
    """The one answer for a variable not granted here, set on the server or not."""
    return Conflict(f"The environment variable {name} is not available to this project's "
                    f"credentials: the server's operator lists the variables a project may "
                    f"use, and where their keys may be sent, in {GRANTS_VAR} and {URLS_VAR}.",
                    {"json": {"secret_env": [f"{name} is not available to this project"]}},
                    code=UNAVAILABLE)


def not_sent_there(name: str, kind: str) -> Conflict:
    default = kinds_.get_kind(kind).default_base_url
    where = f"its provider's own URL ({default})" if default and kind != kinds_.FAKE \
        else f"the URLs the operator lists for it in {URLS_VAR}"
    return Conflict(f"The key in {name} is sent only to {where}: leave base_url empty, or "
                    "store the key instead.",
                    {"json": {"base_url": [f"a key from {name} is sent only to {where}"]}},
                    code="SECRET_ENV_URL")


def check(name: str, project_id: int, project_slug: str, kind: str, base_url: str,
          env: Mapping[str, str] | None = None) -> None:
    """Refuse a variable the operator did not grant this project, or a URL its key may
    not go to."""
    policy = EnvKeyPolicy.from_env(env)
    if not policy.granted(name, project_id, project_slug):
        raise unavailable(name)
    if not policy.url_allowed(name, kind, base_url):
        raise not_sent_there(name, kind)


def read(name: str, project_id: int, project_slug: str, kind: str, base_url: str,
         env: Mapping[str, str] | None = None) -> str:
    """The key in the variable, after ``check``; an unset granted variable is a Conflict
    (SECRET_ENV_MISSING): the operator listed it, so saying so reveals nothing."""
    env = os.environ if env is None else env
    check(name, project_id, project_slug, kind, base_url, env)
    value = env.get(name)
    if not value:
        raise Conflict(f"The environment variable {name} holding this credential's key is "
                       "not set on this server.", code="SECRET_ENV_MISSING")
    return value
