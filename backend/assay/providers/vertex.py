"""Vertex AI's generateContent for Google's models (gemini.py's body and reply), reached
with a service account: the credential's secret is its JSON key, traded for an access
token by google_token.py, cached and refreshed ahead of its expiry off the call path.

`{base}/v1/projects/{project}/locations/{location}/publishers/google/models/{model}
:generateContent` with `Authorization: Bearer <token>`. The project is the credential's
`config.project_id`, else the key's own; the location is `config.location`.
"""

from __future__ import annotations

import json
from typing import Any

from assay.providers.base import Endpoint, HttpCall, extra_headers, malformed
from assay.providers.gemini import GoogleAdapter, model_path
from assay.providers.google_token import TOKENS, TokenCache

DEFAULT_LOCATION = "us-central1"


def location(endpoint: Endpoint) -> str:
    return str(endpoint.config.get("location") or DEFAULT_LOCATION)


def project(endpoint: Endpoint) -> str:
    given = endpoint.config.get("project_id")
    if given:
        return str(given)
    try:
        return str(json.loads(endpoint.api_key or "{}").get("project_id") or "")
    except ValueError:
        return ""


def base_url_for(location_name: str) -> str:
    """The regional endpoint Google documents (`global` has none of its own)."""
    if location_name == "global":
        return "https://aiplatform.googleapis.com"
    return f"https://{location_name}-aiplatform.googleapis.com"


class VertexAdapter(GoogleAdapter):
    def __init__(self, tokens: TokenCache = TOKENS) -> None:
        self.tokens = tokens

    def _root(self, endpoint: Endpoint) -> str:
        return endpoint.base_url.strip().rstrip("/").removesuffix("/v1")

    def _location_path(self, endpoint: Endpoint) -> str:
        return (f"{self._root(endpoint)}/v1/projects/{project(endpoint)}"
                f"/locations/{location(endpoint)}")

    def model_url(self, endpoint: Endpoint, model: str) -> str:
        return f"{self._location_path(endpoint)}/publishers/google/models/{model_path(model)}"

    async def prepare(self, endpoint: Endpoint) -> None:
        await self.tokens.ensure(endpoint.api_key)

    def headers(self, endpoint: Endpoint) -> dict[str, str]:
        token = self.tokens.token(endpoint.api_key)
        return extra_headers(endpoint, {"Content-Type": "application/json",
                                        "Accept": "application/json",
                                        "Authorization": f"Bearer {token}"})

    def models_call(self, endpoint: Endpoint) -> HttpCall | None:
        """Google's publisher models (Model Garden's list, v1beta1)."""
        headers = self.headers(endpoint)
        headers.pop("Content-Type")
        return HttpCall(f"{self._root(endpoint)}/v1beta1/publishers/google/models"
                        "?pageSize=1000", {}, headers, "GET")

    def check_call(self, endpoint: Endpoint) -> HttpCall:
        """The project's models in the location: free, and it needs the token, the project
        and the location to be right."""
        headers = self.headers(endpoint)
        headers.pop("Content-Type")
        return HttpCall(f"{self._location_path(endpoint)}/models?pageSize=1", {}, headers,
                        "GET")

    def model_items(self, body: Any) -> list[dict[str, Any]]:
        try:
            rows = body.get("publisherModels") or []
        except AttributeError as exc:
            raise malformed("no publisherModels[]", exc) from exc
        return [{"id": str(m["name"]).rsplit("/", 1)[-1], "name": None}
                for m in rows if isinstance(m, dict) and m.get("name")]

    def parse_models(self, body: Any) -> list[str]:
        return sorted(item["id"] for item in self.model_items(body))


ADAPTER = VertexAdapter()
