"""Azure OpenAI: OpenAI's chat completions body and reply, Azure's URL and key header.

`{endpoint}/openai/deployments/{deployment}/chat/completions?api-version=...` with
`api-key: <key>`. The deployment is the credential's `config.deployment` when set, else
the model config's provider model id; `config.api_version` defaults to DEFAULT_API_VERSION.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote, urlencode

from assay.providers.base import ChatRequest, Endpoint, HttpCall, extra_headers
from assay.providers.openai import OpenAIAdapter

DEFAULT_API_VERSION = "2024-10-21"


def _root(endpoint: Endpoint) -> str:
    root = endpoint.base_url.strip().rstrip("/")
    return root.removesuffix("/openai")


def api_version(endpoint: Endpoint) -> str:
    return str(endpoint.config.get("api_version") or DEFAULT_API_VERSION)


def deployment(endpoint: Endpoint, model: str) -> str:
    return str(endpoint.config.get("deployment") or model)


class AzureAdapter(OpenAIAdapter):
    def build(self, endpoint: Endpoint, request: ChatRequest, stream: bool = False) -> HttpCall:
        name = quote(deployment(endpoint, request.model), safe="")
        query = urlencode({"api-version": api_version(endpoint)})
        url = f"{_root(endpoint)}/openai/deployments/{name}/chat/completions?{query}"
        body: dict[str, Any] = self.body(request, stream)
        body.pop("model")  # the deployment names the model
        return HttpCall(url, body, self.headers(endpoint))

    def headers(self, endpoint: Endpoint) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if endpoint.api_key:
            headers["api-key"] = endpoint.api_key
        return extra_headers(endpoint, headers)

    def models_call(self, endpoint: Endpoint) -> HttpCall | None:
        return None  # deployments are listed by Azure's management API, not this endpoint

    def check_call(self, endpoint: Endpoint) -> HttpCall:
        """A 1-token chat with the credential's deployment when it names one, else the
        resource's model list (`/openai/models`), which also checks the key."""
        if endpoint.config.get("deployment"):
            ping = ChatRequest(str(endpoint.config["deployment"]),
                               [{"role": "user", "content": "ping"}], {"max_tokens": 1})
            return self.build(endpoint, ping)
        query = urlencode({"api-version": api_version(endpoint)})
        headers = self.headers(endpoint)
        headers.pop("Content-Type")
        return HttpCall(f"{_root(endpoint)}/openai/models?{query}", {}, headers, method="GET")


ADAPTER = AzureAdapter()
